package taskgraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A step's argument may name a result of a step it depends on instead of a
// value fixed when the plan was made:
//
//	{"path": {"$from": "step-1", "take": "stdout", "line": 1}}
//
// The reference stands for a whole argument (or a whole value of an object
// argument, such as one variable of shell_exec's "env"); it is checked when
// the plan is validated and replaced by the value when the step starts
// (the runtime records and shows the step's arguments resolved). A value
// that came from a step's output never becomes shell syntax: shell_exec's
// "command" cannot be a reference, only an environment variable can.

// Ref is one reference to an earlier step's result.
type Ref struct {
	// From is the step whose result is taken: one the step depends on.
	From string `json:"$from"`
	// Take is which result: one of Takes.
	Take string `json:"take"`
	// Line, when not 0, keeps one line of it: 1 the first, -1 the last.
	Line int `json:"line,omitempty"`
	// Path, for "output", picks a field of the structured output: a dot
	// path such as "text" or "items.0.name".
	Path string `json:"path,omitempty"`
}

// Takes are the results a reference may take, with what each is.
var Takes = map[string]string{
	"stdout":    "what the step printed on stdout (shell_exec, coder)",
	"stderr":    "what the step printed on stderr",
	"text":      "the step's main text: stdout, a web page's text, a read file's content",
	"output":    "the step's structured output as JSON, or one field of it with \"path\"",
	"exit_code": "the step's exit code",
}

// MaxRefBytes bounds the value a reference may put in an argument.
const MaxRefBytes = 64 << 10

// RefKey is the key that makes an object a reference.
const RefKey = "$from"

// refAt is one reference found in a step's args.
type refAt struct {
	Where string // "path", or "env.NAME"
	Ref   Ref
	Err   string // why the reference cannot be read
}

// findRefs returns the references in args: its values, and the values of
// its object values.
func findRefs(args json.RawMessage) []refAt {
	var top map[string]json.RawMessage
	if json.Unmarshal(args, &top) != nil {
		return nil
	}
	var out []refAt
	for _, k := range sortedKeys(top) {
		v := top[k]
		if r, ok := asRef(v, k); ok {
			out = append(out, r)
			continue
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(v, &inner) != nil {
			continue
		}
		for _, k2 := range sortedKeys(inner) {
			if r, ok := asRef(inner[k2], k+"."+k2); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

func asRef(v json.RawMessage, where string) (refAt, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '{' {
		return refAt{}, false
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(v, &probe) != nil {
		return refAt{}, false
	}
	if _, ok := probe[RefKey]; !ok {
		return refAt{}, false
	}
	r := refAt{Where: where}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.Ref); err != nil {
		r.Err = `a reference is {"$from": "<step id>", "take": "stdout|stderr|text|output|exit_code"} with optional "line" and "path" (` +
			strings.TrimPrefix(err.Error(), "json: ") + ")"
	}
	return r, true
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// HasRefs reports whether args name an earlier step's result.
func HasRefs(args json.RawMessage) bool {
	return bytes.Contains(args, []byte(`"`+RefKey+`"`)) && len(findRefs(args)) > 0
}

// checkRefs checks the references of step n and returns its args with each
// replaced by a placeholder string, for the schema check (a reference
// always gives a string).
func checkRefs(n nodeRefs, name string, c *collector) json.RawMessage {
	refs := findRefs(n.Args)
	if len(refs) == 0 {
		return n.Args
	}
	for _, r := range refs {
		at := fmt.Sprintf("%s's argument %q", name, r.Where)
		switch {
		case r.Err != "":
			c.add(at + " is not a valid reference: " + r.Err)
		case n.Tool == "shell_exec" && r.Where == "command":
			c.add(at + ` cannot take an earlier step's result: a value from a step's output never becomes shell syntax; ` +
				`pass it in "env" (for example "env": {"RESULT": {"$from": "` + r.Ref.From + `", "take": "` + r.Ref.Take + `"}}) and use "$RESULT" in the command`)
		case !slices.Contains(n.DependsOn, r.Ref.From):
			c.add(fmt.Sprintf("%s takes a result of %s, which the step does not depend on: add it to \"depends_on\"", at, quoteID(r.Ref.From)))
		case Takes[r.Ref.Take] == "":
			c.add(fmt.Sprintf("%s takes %q, which is not one of stdout, stderr, text, output, exit_code", at, r.Ref.Take))
		case r.Ref.Path != "" && r.Ref.Take != "output":
			c.add(at + ` has a "path", which only "take": "output" reads`)
		}
	}
	out, err := Substitute(n.Args, func(Ref) (string, error) { return "ref", nil })
	if err != nil {
		return n.Args
	}
	return out
}

// nodeRefs is what checkRefs reads of a step.
type nodeRefs struct {
	Tool      string
	Args      json.RawMessage
	DependsOn []string
}

// Substitute returns args with each reference replaced by the string value
// returns for it. The first error stops it.
func Substitute(args json.RawMessage, value func(Ref) (string, error)) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(args, &top); err != nil {
		return args, err
	}
	fill := func(v json.RawMessage, where string) (json.RawMessage, bool, error) {
		r, ok := asRef(v, where)
		if !ok {
			return v, false, nil
		}
		if r.Err != "" {
			return v, false, fmt.Errorf("argument %q is not a valid reference: %s", where, r.Err)
		}
		s, err := value(r.Ref)
		if err != nil {
			return v, false, fmt.Errorf("argument %q: %w", where, err)
		}
		data, err := json.Marshal(s)
		return data, true, err
	}
	changed := false
	for _, k := range sortedKeys(top) {
		v, did, err := fill(top[k], k)
		if err != nil {
			return args, err
		}
		if did {
			top[k], changed = v, true
			continue
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(top[k], &inner) != nil {
			continue
		}
		innerChanged := false
		for _, k2 := range sortedKeys(inner) {
			v, did, err := fill(inner[k2], k+"."+k2)
			if err != nil {
				return args, err
			}
			if did {
				inner[k2], innerChanged = v, true
			}
		}
		if innerChanged {
			data, err := json.Marshal(inner)
			if err != nil {
				return args, err
			}
			top[k], changed = data, true
		}
	}
	if !changed {
		return args, nil
	}
	return json.Marshal(top)
}

// Pick applies a reference's Line to text: the whole text trimmed, or one
// of its lines.
func (r Ref) Pick(text string) (string, error) {
	if r.Line == 0 {
		return strings.TrimSpace(text), nil
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	i := r.Line - 1
	if r.Line < 0 {
		i = len(lines) + r.Line
	}
	if i < 0 || i >= len(lines) {
		return "", fmt.Errorf("line %d of %s's %s does not exist: it has %d %s", r.Line, r.From, r.Take, len(lines), pluralWord(len(lines), "line"))
	}
	return strings.TrimSpace(lines[i]), nil
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}
