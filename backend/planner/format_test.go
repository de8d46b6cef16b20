package planner_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"ducklm/backend/planner"
)

func compileFormat(t *testing.T, format json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(format)))
	require.NoError(t, err, "the format is JSON")
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("format.json", doc))
	sch, err := c.Compile("format.json")
	require.NoError(t, err, "the format is a JSON Schema")
	return sch
}

func TestPlanFormatNarrowsStepsToTheCatalog(t *testing.T) {
	t.Parallel()
	sch := compileFormat(t, planner.PlanFormat(catalog))
	check := func(answer string) error {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(answer))
		require.NoError(t, err)
		return sch.Validate(doc)
	}
	plan := func(nodes string) string {
		return `{"decision":"plan","reason":"r","confidence":0.5,"plan":{"nodes":[` + nodes + `]}}`
	}
	require.NoError(t, check(plan(`{"id":"a","kind":"tool","tool":"shell_exec","args":{"command":"ls"},"depends_on":[]}`)))
	require.NoError(t, check(plan(`{"id":"a","kind":"tool","tool":"file_read","args":{"path":"x"},"depends_on":[],"title":"t"}`)))
	require.NoError(t, check(plan(`{"id":"a","kind":"coder","args":{"goal":"sum"},"depends_on":["b"]}`)))
	require.NoError(t, check(`{"decision":"respond","reason":"r","confidence":1,"response":"hi"}`))

	require.Error(t, check(plan(`{"id":"a","kind":"tool","tool":"teleport","args":{},"depends_on":[]}`)), "an unknown tool")
	require.Error(t, check(plan(`{"id":"a","kind":"tool","tool":"shell_exec","args":{"path":"x"},"depends_on":[]}`)), "another tool's arguments")
	require.Error(t, check(plan(`{"id":"a","kind":"tool","tool":"file_read","args":{"command":"ls"},"depends_on":[]}`)), "another tool's arguments")
	require.Error(t, check(plan(`{"id":"a","kind":"tool","args":{"command":"ls"},"depends_on":[]}`)), "a tool step names its tool")
	require.Error(t, check(plan(`{"id":"a","kind":"coder","tool":"shell_exec","args":{"goal":"x"},"depends_on":[]}`)), "a coder step has no tool")
	require.Error(t, check(plan(``)), "at least one step")
	require.Error(t, check(`{"decision":"plan","reason":"r","confidence":0.5}`), "a plan has its steps")
	require.Error(t, check(`{"decision":"respond","reason":"r","confidence":0.5}`), "a response has its text")
	require.Error(t, check(`{"decision":"fail","reason":"r","confidence":0.5,"response":"x"}`), "a failure has no response")
}

func TestPlanFormatKeepsWhatAGrammarCanHold(t *testing.T) {
	t.Parallel()
	format := string(planner.PlanFormat([]planner.ToolInfo{{Name: "world_sim", ArgsSchema: json.RawMessage(`{
	  "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "t", "type": "object", "additionalProperties": false,
	  "properties": {"seed": {"type": "integer", "minimum": 0, "description": "d"}, "example": {"type": "string", "enum": ["branching_grid"]}},
	  "oneOf": [{"required": ["example"]}]}`)}}))
	compileFormat(t, json.RawMessage(format))
	for _, gone := range []string{`"$schema"`, `"title":"t"`, `"description"`, `"minimum"`, `"oneOf"`} {
		require.NotContains(t, format, gone)
	}
	require.Contains(t, format, `"args":{"type":"object","additionalProperties":false,"properties":{"seed":{"type":"integer"},"example":{"type":"string","enum":["branching_grid"]}}}`,
		"the tool's own property order is kept")
	require.True(t, strings.Index(format, `"decision"`) < strings.Index(format, `"plan"`), "a model decides before it plans")
	// Without tools the format is the plan schema.
	require.JSONEq(t, string(planner.PlanSchema()), string(planner.PlanFormat(nil)))
}

// A step's string arguments may take an earlier step's result: the format
// defines the reference once and names it where an argument may take one
// (repeated inline, a full catalog's grammar crashed Ollama's runner), never
// in shell_exec's command nor in an argument of fixed choices.
func TestPlanFormatLetsStringArgumentsTakeAnEarlierResult(t *testing.T) {
	t.Parallel()
	cat := []planner.ToolInfo{
		{Name: "shell_exec", ArgsSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"env":{"type":"object"}},"required":["command"]}`)},
		{Name: "file_read", ArgsSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"mode":{"type":"string","enum":["a","b"]}},"required":["path"]}`)},
	}
	f := string(planner.PlanFormat(cat))
	require.Equal(t, 1, strings.Count(f, `"$from":{`), "the reference is defined once")
	require.True(t, strings.HasPrefix(f, `{"$defs":{"ref":{"type":"object","properties":{"$from":`))
	require.Contains(t, f, `"path":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/ref"}]}`)
	require.Contains(t, f, `"command":{"type":"string"}`, "a command never takes a result")
	require.Contains(t, f, `"mode":{"type":"string","enum":["a","b"]}`, "a choice among fixed values is not a result")
	require.Equal(t, 1, strings.Count(f, `{"$ref":"#/$defs/ref"}`))
	var doc any
	require.NoError(t, json.Unmarshal([]byte(f), &doc))
}
