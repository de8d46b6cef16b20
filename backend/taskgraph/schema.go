package taskgraph

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// MaxNodes is the largest number of steps a plan may hold by default (and
// what the schema handed to models says); ParseMax and ValidateMax take
// another bound, a run's setting.
const MaxNodes = 200

// CoderTool is the tool name a coder step may carry (or leave empty).
const CoderTool = "coder"

// graphSchema is the JSON Schema (2020-12) of a task graph. Only id and kind
// are required: a missing depends_on means none, missing args mean {}.
const graphSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "ducklm task graph",
  "type": "object",
  "additionalProperties": false,
  "required": ["nodes"],
  "properties": {
    "nodes": {
      "type": "array",
      "minItems": 1,
      "maxItems": 200,
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "kind"],
        "properties": {
          "id": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,64}$"},
          "kind": {"type": "string", "enum": ["tool", "coder"]},
          "tool": {"type": "string"},
          "args": {"type": "object"},
          "depends_on": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
          "title": {"type": "string"},
          "retry_on_timeout": {"type": "boolean"}
        }
      }
    }
  }
}`

// coderArgsSchema is the JSON Schema of a coder step's args.
const coderArgsSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["goal"],
  "properties": {
    "goal": {"type": "string", "minLength": 1},
    "language": {"type": "string", "enum": ["python", "sh"]}
  }
}`

// Schema returns the JSON Schema (2020-12) of a task graph. It is also fit
// to hand a model as a structured-output format.
func Schema() json.RawMessage { return json.RawMessage(graphSchema) }

// CoderArgsSchema returns the JSON Schema of a coder step's args:
// {"goal": string, "language"?: "python"|"sh"}.
func CoderArgsSchema() json.RawMessage { return json.RawMessage(coderArgsSchema) }

// The two fixed schemas compile once, on first use (every command would
// pay for compiling them at start, and most validate no plan); a compiled
// schema is immutable.
var (
	// Validation counts the steps itself against the caller's bound.
	compiledGraph = sync.OnceValue(func() *jsonschema.Schema {
		return mustCompile(strings.Replace(graphSchema, `"maxItems": 200,`, "", 1))
	})
	compiledCoder = sync.OnceValue(func() *jsonschema.Schema { return mustCompile(coderArgsSchema) })
)

var printer = sync.OnceValue(func() *message.Printer { return message.NewPrinter(language.English) })

// noLoader refuses every $ref the schema does not hold itself, so a tool's
// schema can never make validation read a file or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not allowed", url)
}

func compile(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const loc = "urn:ducklm:schema"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

func mustCompile(s string) *jsonschema.Schema {
	sch, err := compile([]byte(s))
	if err != nil {
		panic("taskgraph: built-in schema does not compile: " + err.Error())
	}
	return sch
}

// violation is one leaf of a schema validation error: where, and what.
type violation struct {
	path []string // instance location, as JSON pointer tokens
	kind jsonschema.ErrorKind
	msg  string
}

// violations flattens a validation error into its leaves, in the order the
// validator reported them.
func violations(err error) []violation {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []violation{{msg: err.Error()}}
	}
	var out []violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			k := e.ErrorKind
			if ap, ok := k.(*kind.AdditionalProperties); ok {
				// Collected in map order; sorted, the message is stable.
				sorted := *ap
				sorted.Properties = slices.Sorted(slices.Values(ap.Properties))
				k = &sorted
			}
			out = append(out, violation{path: e.InstanceLocation, kind: k, msg: k.LocalizedString(printer())})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// The validator visits properties in map order; sort so the same plan
	// always yields the same message.
	slices.SortStableFunc(out, func(a, b violation) int {
		if c := comparePaths(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	return out
}

// comparePaths orders instance locations token by token, array indices
// numerically, a prefix before what extends it.
func comparePaths(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, errX := strconv.Atoi(a[i])
		y, errY := strconv.Atoi(b[i])
		if errX == nil && errY == nil {
			if c := cmp.Compare(x, y); c != 0 {
				return c
			}
			continue
		}
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// fieldPath renders JSON pointer tokens as a field path: depends_on[0].
func fieldPath(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			sb.WriteString("[" + t + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(t)
	}
	return sb.String()
}

// describe renders violations as one clause: `at "command": got number,
// want string, and at "timeout": ...`.
func describe(vs []violation) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		if p := fieldPath(v.path); p != "" {
			parts = append(parts, fmt.Sprintf("at %q: %s", p, v.msg))
		} else {
			parts = append(parts, v.msg)
		}
	}
	return strings.Join(parts, ", and ")
}

// schemaProblems turns violations of the graph schema into sentences that
// name the step each one is about. doc is the decoded plan.
func schemaProblems(err error, doc any) []string {
	var out []string
	for _, v := range violations(err) {
		if len(v.path) == 1 && v.path[0] == "nodes" {
			switch k := v.kind.(type) {
			case *kind.MinItems:
				out = append(out, "the plan has no steps; it needs at least one")
				continue
			case *kind.MaxItems:
				out = append(out, TooManySteps(k.Got, k.Want))
				continue
			}
		}
		if len(v.path) >= 2 && v.path[0] == "nodes" {
			i, convErr := strconv.Atoi(v.path[1])
			if convErr == nil {
				rest := fieldPath(v.path[2:])
				where := ""
				if rest != "" {
					where = fmt.Sprintf(" at %q", rest)
				}
				out = append(out, fmt.Sprintf("%s is malformed%s: %s", nodeName(doc, i), where, v.msg))
				continue
			}
		}
		where := ""
		if p := fieldPath(v.path); p != "" {
			where = fmt.Sprintf(" at %q", p)
		}
		out = append(out, fmt.Sprintf("the plan is malformed%s: %s", where, v.msg))
	}
	return out
}

// nodeName names node i of a decoded plan: by its id when it has a string
// one, else by its position.
func nodeName(doc any, i int) string {
	if obj, ok := doc.(map[string]any); ok {
		if nodes, ok := obj["nodes"].([]any); ok && i < len(nodes) {
			if n, ok := nodes[i].(map[string]any); ok {
				if id, ok := n["id"].(string); ok {
					return stepName(id, i)
				}
			}
		}
	}
	return stepName("", i)
}

// quoteID quotes an id for a message, cutting absurdly long ones.
func quoteID(id string) string {
	const max = 80
	if utf8.RuneCountInString(id) > max {
		return strconv.Quote(string([]rune(id)[:max]) + "…")
	}
	return strconv.Quote(id)
}

// CheckArgsSchema says why raw cannot be a tool's args schema: it must be a
// JSON Schema (2020-12 unless it says otherwise) that compiles without
// reaching for another document, describing a JSON object. nil when it can.
func CheckArgsSchema(raw json.RawMessage) error {
	var top map[string]any
	if err := json.Unmarshal(raw, &top); err != nil {
		return fmt.Errorf("it is not a JSON object")
	}
	if t, ok := top["type"]; !ok || t != "object" {
		return fmt.Errorf(`its top level is not "type": "object"`)
	}
	if _, err := compile(raw); err != nil {
		var se *jsonschema.SchemaValidationError
		if errors.As(err, &se) {
			return fmt.Errorf("it is not valid JSON Schema (%s)", describe(violations(se.Err)))
		}
		return fmt.Errorf("it is not valid JSON Schema (%s)", err)
	}
	return nil
}
