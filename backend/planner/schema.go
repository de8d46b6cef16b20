package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// planSchema is the answer a planning model must give. It is sent to Ollama
// as the chat's `format`, where it becomes a grammar the model cannot leave,
// and checked again here because not every model or server honours it. It
// keeps to keywords llama.cpp's schema-to-grammar converter understands (no
// if/then), so the rules that depend on "decision" and "kind" are checked in
// Go by checkShape.
const planSchema = `{
  "type": "object",
  "properties": {
    "decision": {"type": "string", "enum": ["plan", "respond", "fail"]},
    "reason": {"type": "string"},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "plan": {
      "type": "object",
      "properties": {
        "nodes": {
          "type": "array",
          "minItems": 1,
          "items": {
            "type": "object",
            "properties": {
              "id": {"type": "string", "minLength": 1},
              "kind": {"type": "string", "enum": ["tool", "coder"]},
              "tool": {"type": "string"},
              "args": {"type": "object"},
              "depends_on": {"type": "array", "items": {"type": "string"}},
              "title": {"type": "string"},
              "retry_on_timeout": {"type": "boolean"}
            },
            "required": ["id", "kind", "args", "depends_on"],
            "additionalProperties": false
          }
        }
      },
      "required": ["nodes"],
      "additionalProperties": false
    },
    "response": {"type": "string"},
    "cites": {"type": "array", "items": {"type": "string", "minLength": 1}}
  },
  "required": ["decision", "reason", "confidence"],
  "additionalProperties": false
}`

// PlanSchema returns the JSON Schema of a planning model's answer.
func PlanSchema() json.RawMessage {
	return json.RawMessage(planSchema)
}

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	return compile("plan.json", planSchema)
})

// graphSchema is the "plan" part of planSchema alone, for explicit plans.
var graphSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	var root struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(planSchema), &root); err != nil {
		return nil, err
	}
	return compile("graph.json", string(root.Properties["plan"]))
})

func compile(name, schema string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		return nil, err
	}
	return c.Compile(name)
}

// validate checks doc (decoded by jsonschema.UnmarshalJSON) against sch and
// returns why it fails, naming each offending place, or "" when it passes.
func validate(get func() (*jsonschema.Schema, error), doc any) (string, error) {
	sch, err := get()
	if err != nil {
		return "", fmt.Errorf("the plan schema does not compile: %w", err)
	}
	err = sch.Validate(doc)
	if err == nil {
		return "", nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error(), nil
	}
	return describe(ve), nil
}

// decodeJSON decodes data the way the validator wants it (numbers kept
// exact), refusing anything after the first value.
func decodeJSON(data string) (any, error) {
	return jsonschema.UnmarshalJSON(strings.NewReader(data))
}

// describe lists the leaf failures of a validation error, e.g.
// "at /plan/nodes/0/kind: value must be one of 'tool', 'coder'".
func describe(ve *jsonschema.ValidationError) string {
	var parts []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") {
			continue
		}
		where := u.InstanceLocation
		if where == "" {
			where = "the top level"
		}
		parts = append(parts, "at "+where+": "+msg)
	}
	if len(parts) == 0 {
		return ve.Error()
	}
	return strings.Join(parts, "; ")
}
