package planner

import (
	"bytes"
	"encoding/json"
	"slices"

	"ducklm/backend/taskgraph"
)

// PlanFormat is the `format` a planning model is asked with: PlanSchema
// split by decision (a plan has its steps, a response its text) and with
// each step narrowed to the tools of the catalog — a step is one of them,
// named exactly, with arguments of that tool's shape — or a coder step. Ollama turns it into a grammar, so even a small model can only name
// a tool that exists and give it arguments it takes. Tool schemas keep only
// the keywords a grammar can hold (types, properties, required, enums,
// lengths); the rest is checked after the answer, as every plan is.
func PlanFormat(catalog []ToolInfo) json.RawMessage {
	return planFormat(catalog, false)
}

// formatFor is the format of one request: a review's response must cite
// the steps it rests on.
func formatFor(req Request) json.RawMessage {
	return planFormat(req.Catalog, req.Review != nil)
}

// refGrammar is the grammar of a reference to an earlier step's result,
// defined once in the format's $defs and named by each argument that may
// take one.
const refGrammar = `{"type":"object","properties":{"$from":{"type":"string","minLength":1},` +
	`"take":{"type":"string","enum":["stdout","stderr","text","output","exit_code"]},"line":{"type":"integer"},"path":{"type":"string"}},` +
	`"required":["$from","take"],"additionalProperties":false}`

// planFormat is PlanFormat, whose response cites steps when review is set.
// A step's string arguments may take an earlier step's result.
func planFormat(catalog []ToolInfo, review bool) json.RawMessage {
	if len(catalog) == 0 {
		return PlanSchema()
	}
	var steps []json.RawMessage
	for _, t := range catalog {
		steps = append(steps, stepFormat("tool", t.Name, withRefs(t.Name, grammarSchema(t.ArgsSchema))))
	}
	steps = append(steps, stepFormat("coder", "", grammarSchema(taskgraph.CoderArgsSchema())))
	anyOf, _ := json.Marshal(map[string]any{"anyOf": steps})

	// One shape per decision, so the grammar holds the rules across fields
	// too: a plan has steps, a response has text. Property order is answer
	// order: a model says what it does before it writes the plan.
	var b bytes.Buffer
	// The reference grammar is defined once: repeated inline in every
	// tool's arguments it made llama.cpp's grammar crash Ollama's runner
	// (a plan format of 8.5 KB; one definition keeps it at 6 KB).
	b.WriteString(`{"$defs":{"ref":` + refGrammar + `},"anyOf":[`)
	b.WriteString(`{"type":"object","properties":{"decision":{"type":"string","enum":["plan"]},"reason":{"type":"string"},"confidence":{"type":"number"},`)
	b.WriteString(`"plan":{"type":"object","properties":{"nodes":{"type":"array","minItems":1,"items":`)
	b.Write(anyOf)
	b.WriteString(`}},"required":["nodes"],"additionalProperties":false}},`)
	b.WriteString(`"required":["decision","reason","confidence","plan"],"additionalProperties":false},`)
	b.WriteString(`{"type":"object","properties":{"decision":{"type":"string","enum":["respond"]},"reason":{"type":"string"},"confidence":{"type":"number"},`)
	if review {
		b.WriteString(`"response":{"type":"string","minLength":1},"cites":{"type":"array","minItems":1,"items":{"type":"string","minLength":1}}},` +
			`"required":["decision","reason","confidence","response","cites"],"additionalProperties":false},`)
	} else {
		b.WriteString(`"response":{"type":"string","minLength":1}},"required":["decision","reason","confidence","response"],"additionalProperties":false},`)
	}
	b.WriteString(`{"type":"object","properties":{"decision":{"type":"string","enum":["fail"]},"reason":{"type":"string"},"confidence":{"type":"number"}},`)
	b.WriteString(`"required":["decision","reason","confidence"],"additionalProperties":false}`)
	b.WriteString(`]}`)
	return json.RawMessage(b.Bytes())
}

// stepFormat is one kind of step: a tool step of one tool, or a coder step.
func stepFormat(kind, tool string, args json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{"id":{"type":"string","minLength":1},`)
	b.WriteString(`"kind":{"type":"string","enum":["` + kind + `"]},`)
	required := `["id","kind","args","depends_on"]`
	if tool != "" {
		name, _ := json.Marshal(tool)
		b.WriteString(`"tool":{"type":"string","enum":[` + string(name) + `]},`)
		required = `["id","kind","tool","args","depends_on"]`
	}
	b.WriteString(`"args":`)
	b.Write(args)
	b.WriteString(`,"depends_on":{"type":"array","items":{"type":"string"}},"title":{"type":"string"}},`)
	b.WriteString(`"required":` + required + `,"additionalProperties":false}`)
	return json.RawMessage(b.Bytes())
}

// withRefs lets each string argument of a tool's grammar be a reference to
// an earlier step's result, except shell_exec's command (a result never
// becomes shell syntax; "env" takes it, and an object of any shape is what
// the grammar keeps of "env").
func withRefs(tool string, args json.RawMessage) json.RawMessage {
	out, ok := mapObject(args, func(key string, val json.RawMessage) (json.RawMessage, bool) {
		if key != "properties" {
			return val, true
		}
		props, ok := mapObject(val, func(name string, v json.RawMessage) (json.RawMessage, bool) {
			var probe struct {
				Type  string          `json:"type"`
				Enum  json.RawMessage `json:"enum"`
				Const json.RawMessage `json:"const"`
			}
			// A choice among fixed values is not a result to take.
			if json.Unmarshal(v, &probe) != nil || probe.Type != "string" || probe.Enum != nil || probe.Const != nil ||
				(tool == "shell_exec" && name == "command") {
				return v, true
			}
			return json.RawMessage(`{"anyOf":[` + string(v) + `,{"$ref":"#/$defs/ref"}]}`), true
		})
		return props, ok
	})
	if !ok {
		return args
	}
	return out
}

// grammarKeys are the keywords kept in a tool's schema for the grammar.
var grammarKeys = []string{"type", "properties", "required", "additionalProperties", "items", "enum", "const",
	"minLength", "maxLength", "minItems", "maxItems"}

// grammarSchema keeps the grammar's keywords of a schema, recursively, in
// the schema's own property order. Anything it cannot read becomes an
// object of any shape.
func grammarSchema(raw json.RawMessage) json.RawMessage {
	out, ok := mapObject(raw, func(key string, val json.RawMessage) (json.RawMessage, bool) {
		switch {
		case !slices.Contains(grammarKeys, key):
			return nil, false
		case key == "properties":
			props, ok := mapObject(val, func(_ string, v json.RawMessage) (json.RawMessage, bool) { return grammarSchema(v), true })
			if !ok {
				props = json.RawMessage(`{}`)
			}
			return props, true
		case key == "items":
			return grammarSchema(val), true
		case key == "additionalProperties":
			// A schema here is more than a grammar needs; false is kept.
			return val, bytes.Equal(bytes.TrimSpace(val), []byte("false"))
		}
		return val, true
	})
	if !ok {
		return json.RawMessage(`{"type":"object"}`)
	}
	return out
}

// mapObject rewrites a JSON object member by member, in its own order: fn
// returns a member's new value and whether to keep it. It reports false
// when raw is not an object.
func mapObject(raw json.RawMessage, fn func(key string, val json.RawMessage) (json.RawMessage, bool)) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := kt.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		val, keep := fn(key, val)
		if !keep {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return json.RawMessage(b.Bytes()), true
}
