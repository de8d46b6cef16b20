package taskgraph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/taskgraph"
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	g := mustParse(t, `{"nodes": [
		{"id": "step-1", "kind": "tool", "tool": "shell_exec", "args": {"command": "hostnamectl"}, "depends_on": []},
		{"id": "step-2", "kind": "coder", "args": {"goal": "summarise the output", "language": "python"}, "depends_on": ["step-1"], "title": "Summarise"},
		{"id": "step-3", "kind": "coder", "tool": "coder", "args": {"goal": "tidy"}, "depends_on": ["step-2"]},
		{"id": "read_it.v2", "kind": "tool", "tool": "file_read", "args": {"path": "notes.txt"}}
	]}`)
	require.Equal(t, 4, g.Len())
	n, ok := g.Node("read_it.v2")
	require.True(t, ok)
	require.Equal(t, []string{}, n.DependsOn, "missing depends_on is empty, not nil")
	n, ok = g.Node("step-2")
	require.True(t, ok)
	require.Equal(t, "Summarise", n.Title)
	require.JSONEq(t, `{"goal": "summarise the output", "language": "python"}`, string(n.Args))
	_, ok = g.Node("nope")
	require.False(t, ok)
}

func TestParseDefaultsArgs(t *testing.T) {
	t.Parallel()
	g := mustParse(t, `{"nodes": [{"id": "sim", "kind": "tool", "tool": "world_sim"}]}`)
	n, _ := g.Node("sim")
	require.JSONEq(t, `{}`, string(n.Args))
}

// TestParseErrors covers every class of problem, each alone.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		plan string
		want string // the whole message
	}{
		{"not json", `{"nodes": [`, "the plan is not valid JSON: unexpected EOF"},
		{"trailing data", `{"nodes": []} {}`, "the plan is not valid JSON: invalid character after top-level value"},
		{"not an object", `[1, 2]`, "the plan is malformed: got array, want object"},
		{"no nodes", `{}`, "the plan is malformed: missing property 'nodes'"},
		{"empty", `{"nodes": []}`, "the plan has no steps; it needs at least one"},
		{"extra top-level field", `{"nodes": [{"id": "a", "kind": "tool", "tool": "world_sim"}], "steps": []}`,
			"the plan is malformed: additional properties 'steps' not allowed"},
		{"bad id", `{"nodes": [{"id": "step 1", "kind": "tool", "tool": "world_sim"}]}`,
			`step "step 1" is malformed at "id": 'step 1' does not match pattern '^[A-Za-z0-9_.-]{1,64}$'`},
		{"missing id", `{"nodes": [{"kind": "tool", "tool": "world_sim"}]}`,
			`step #1 (no valid id) is malformed: missing property 'id'`},
		{"numeric id", `{"nodes": [{"id": 7, "kind": "tool", "tool": "world_sim"}]}`,
			`step #1 (no valid id) is malformed at "id": got number, want string`},
		{"bad kind", `{"nodes": [{"id": "a", "kind": "script"}]}`,
			`step "a" is malformed at "kind": value must be one of 'tool', 'coder'`},
		{"extra node fields sorted", `{"nodes": [{"id": "a", "kind": "tool", "tool": "world_sim", "zeta": 1, "alpha": 2}]}`,
			`step "a" is malformed: additional properties 'alpha', 'zeta' not allowed`},
		{"args not an object", `{"nodes": [{"id": "a", "kind": "tool", "tool": "world_sim", "args": "x"}]}`,
			`step "a" is malformed at "args": got string, want object`},
		{"repeated dependency", `{"nodes": [{"id": "a", "kind": "tool", "tool": "world_sim"}, {"id": "b", "kind": "tool", "tool": "world_sim", "depends_on": ["a", "a"]}]}`,
			`step "b" is malformed at "depends_on": items at 0 and 1 are equal`},
		{"duplicate id", plan(t, shell("a", "true"), shell("a", "false")),
			`step id "a" is used by 2 steps, but every step needs its own id`},
		{"unknown tool", `{"nodes": [{"id": "a", "kind": "tool", "tool": "curl", "args": {"url": "x"}}]}`,
			`step "a" uses tool "curl", which is not available (available tools: file_read, file_write, shell_exec, world_sim)`},
		{"tool step without tool", `{"nodes": [{"id": "a", "kind": "tool"}]}`, `step "a" is a tool step but names no tool`},
		{"coder step with a tool", `{"nodes": [{"id": "a", "kind": "coder", "tool": "shell_exec", "args": {"goal": "x"}}]}`,
			`step "a" is a coder step, so its tool must be empty or "coder", not "shell_exec"`},
		{"coder step without goal", `{"nodes": [{"id": "a", "kind": "coder", "args": {"language": "go"}}]}`,
			`step "a" has invalid args for a coder step: missing property 'goal', and at "language": value must be one of 'python', 'sh'`},
		{"args against the tool schema", plan(t, map[string]any{"id": "step-2", "kind": "tool", "tool": "shell_exec", "args": map[string]any{"command": 5}}),
			`step "step-2" has invalid args for tool shell_exec: at "command": got number, want string`},
		{"args missing a required field", `{"nodes": [{"id": "w", "kind": "tool", "tool": "file_write", "args": {"path": "a.txt"}}]}`,
			`step "w" has invalid args for tool file_write: missing property 'content'`},
		{"missing dependency", plan(t, shell("step-1", "true"), shell("step-2", "true", "step-9")),
			`step "step-2" depends on "step-9", which is not in the plan`},
		{"self dependency", plan(t, shell("step-1", "true", "step-1")), `step "step-1" depends on itself`},
		{"cycle", plan(t, shell("step-1", "true", "step-3"), shell("step-2", "true"), shell("step-3", "true", "step-1")),
			"the steps form a cycle: step-1 → step-3 → step-1 (each depends on the next)"},
		{"long cycle", plan(t, shell("a", "x", "b"), shell("b", "x", "c"), shell("c", "x", "d"), shell("d", "x", "a")),
			"the steps form a cycle: a → b → c → d → a (each depends on the next)"},
		{"two cycles", plan(t, shell("a", "x", "b"), shell("b", "x", "a"), shell("c", "x", "d"), shell("d", "x", "c"), shell("e", "x", "a", "c")),
			"the steps form a cycle: a → b → a (each depends on the next); the steps form a cycle: c → d → c (each depends on the next)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, invalid(t, tt.plan))
		})
	}
}

func TestParseTooManyNodes(t *testing.T) {
	t.Parallel()
	nodes := make([]map[string]any, taskgraph.MaxNodes+1)
	for i := range nodes {
		nodes[i] = shell(fmt.Sprintf("s%d", i), "true")
	}
	require.Equal(t, "the plan has 201 steps, more than the 200 allowed; a run allows more when it says so: "+
		"ducklm run --plan FILE --max-plan-steps 201 --max-steps 201 (maxPlanSteps and maxSteps in a run request to the HTTP API; "+
		"the window's New task form takes plans of up to 200 steps)", invalid(t, plan(t, nodes...)))
	require.NotNil(t, mustParse(t, plan(t, nodes[:taskgraph.MaxNodes]...)))
}

// The cap is a setting: a run may allow longer plans, or fewer steps.
func TestParseMaxNodesIsASetting(t *testing.T) {
	t.Parallel()
	nodes := make([]map[string]any, 10_000)
	for i := range nodes {
		var deps []string
		if i > 0 {
			deps = []string{fmt.Sprintf("s%d", i-1)}
		}
		nodes[i] = shell(fmt.Sprintf("s%d", i), "true", deps...)
	}
	long := plan(t, nodes...)
	g, err := taskgraph.ParseMax([]byte(long), catalog, 10_000)
	require.NoError(t, err)
	require.Len(t, g.TaskGraph().Nodes, 10_000)
	require.Contains(t, invalid(t, long), "the plan has 10000 steps, more than the 200 allowed; a run allows more when it says so: ducklm run --plan FILE --max-plan-steps 10000 --max-steps 10000")

	_, err = taskgraph.ValidateMax(backend.TaskGraph{Nodes: g.TaskGraph().Nodes[:3]}, catalog, 2)
	require.Error(t, err)
	require.Contains(t, backend.ErrorMessage(err), "the plan has 3 steps, more than the 2 allowed; a run allows more when it says so: ducklm run --plan FILE --max-plan-steps 3 --max-steps 3")
}

func TestParseTooLarge(t *testing.T) {
	t.Parallel()
	big := plan(t, shell("a", strings.Repeat("x", taskgraph.MaxPlanBytes)))
	require.Contains(t, invalid(t, big), "more than the 4194304 allowed")
}

// TestParseCombined checks that every problem lands in one message, in a
// stable order, so one replan can fix them all.
func TestParseCombined(t *testing.T) {
	t.Parallel()
	p := `{"nodes": [
		{"id": "step-1", "kind": "tool", "tool": "shell_exec", "args": {"command": "ls", "cwd": "/"}, "depends_on": ["step-3"]},
		{"id": "step-2", "kind": "tool", "tool": "browser", "depends_on": ["step-9"]},
		{"id": "step-3", "kind": "coder", "args": {"goal": ""}, "depends_on": ["step-1", "step-3"]},
		{"id": "step-2", "kind": "tool", "tool": "world_sim"}
	]}`
	want := strings.Join([]string{
		`step id "step-2" is used by 2 steps, but every step needs its own id`,
		`step "step-1" has invalid args for tool shell_exec: additional properties 'cwd' not allowed`,
		`step "step-2" uses tool "browser", which is not available (available tools: file_read, file_write, shell_exec, world_sim)`,
		`step "step-3" has invalid args for a coder step: at "goal": minLength: got 0, want 1`,
		`step "step-2" depends on "step-9", which is not in the plan`,
		`step "step-3" depends on itself`,
		`the steps form a cycle: step-1 → step-3 → step-1 (each depends on the next)`,
	}, "; ")
	for range 20 { // map-order independence
		require.Equal(t, want, invalid(t, p))
	}
}

// TestParseSchemaAndGraphProblemsTogether: a malformed field does not hide
// the problems in the rest of the plan.
func TestParseSchemaAndGraphProblemsTogether(t *testing.T) {
	t.Parallel()
	msg := invalid(t, `{"nodes": [
		{"id": "a", "kind": "script", "depends_on": ["b"]},
		{"id": "c", "kind": "tool", "tool": "nope"}
	]}`)
	require.Equal(t, `step "a" is malformed at "kind": value must be one of 'tool', 'coder'; `+
		`step "c" uses tool "nope", which is not available (available tools: file_read, file_write, shell_exec, world_sim); `+
		`step "a" depends on "b", which is not in the plan`, msg)
}

func TestParseCapsProblems(t *testing.T) {
	t.Parallel()
	nodes := make([]map[string]any, 14)
	for i := range nodes {
		nodes[i] = shell(fmt.Sprintf("s%02d", i), "true", "ghost")
	}
	msg := invalid(t, plan(t, nodes...))
	parts := strings.Split(msg, "; ")
	require.Len(t, parts, 11)
	require.Equal(t, `step "s00" depends on "ghost", which is not in the plan`, parts[0])
	require.Equal(t, "and 4 more problems", parts[10])
}

func TestParseCatalogWithoutLister(t *testing.T) {
	t.Parallel()
	_, err := taskgraph.Parse([]byte(`{"nodes": [{"id": "a", "kind": "tool", "tool": "x"}]}`), onlyShell{})
	require.EqualError(t, err, `step "a" uses tool "x", which is not available`)
	_, err = taskgraph.Parse([]byte(`{"nodes": [{"id": "a", "kind": "tool", "tool": "x"}]}`), nil)
	require.EqualError(t, err, `step "a" uses tool "x", which is not available`)
}

type onlyShell struct{}

func (onlyShell) ArgsSchema(tool string) (json.RawMessage, bool) {
	return catalog.ArgsSchema(tool)
}

func TestParseBrokenToolSchemaIsInternal(t *testing.T) {
	t.Parallel()
	cat := taskgraph.MapCatalog{"bad": json.RawMessage(`{"type": 12}`)}
	_, err := taskgraph.Parse([]byte(`{"nodes": [{"id": "a", "kind": "tool", "tool": "bad"}]}`), cat)
	require.Equal(t, backend.EINTERNAL, backend.ErrorCode(err))
	require.Contains(t, err.Error(), `the args schema of tool "bad" does not compile`)
}

// TestParseNeverLoadsReferences: a tool schema cannot make validation read
// a file or the network.
func TestParseNeverLoadsReferences(t *testing.T) {
	t.Parallel()
	cat := taskgraph.MapCatalog{"ref": json.RawMessage(`{"$ref": "file:///etc/passwd"}`)}
	_, err := taskgraph.Parse([]byte(`{"nodes": [{"id": "a", "kind": "tool", "tool": "ref"}]}`), cat)
	require.Equal(t, backend.EINTERNAL, backend.ErrorCode(err))
	require.Contains(t, err.Error(), "is not allowed")
}

func TestValidateGoGraph(t *testing.T) {
	t.Parallel()
	g, err := taskgraph.Validate(backend.TaskGraph{Nodes: []backend.TaskNode{
		{ID: "a", Kind: backend.KindToolStep, Tool: "world_sim"},
		{ID: "b", Kind: backend.KindToolStep, Tool: "shell_exec", Args: json.RawMessage(`{"command": "ls"}`), DependsOn: []string{"a"}},
		{ID: "c", Kind: backend.KindCoderStep, Args: json.RawMessage(`{"goal": "x"}`), DependsOn: []string{"a"}},
		{ID: "d", Kind: backend.KindToolStep, Tool: "world_sim", Args: json.RawMessage(`null`)},
	}}, catalog)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c", "d"}, g.Order())
	require.Len(t, g.TaskGraph().Nodes, 4)

	_, err = taskgraph.Validate(backend.TaskGraph{Nodes: []backend.TaskNode{
		{ID: "a", Kind: backend.KindToolStep, Tool: "world_sim", Args: json.RawMessage(`{oops`)},
	}}, catalog)
	require.EqualError(t, err, `step "a" has args that are not valid JSON`)

	_, err = taskgraph.Validate(backend.TaskGraph{}, catalog)
	require.EqualError(t, err, "the plan has no steps; it needs at least one")

	_, err = taskgraph.Validate(backend.TaskGraph{Nodes: []backend.TaskNode{
		{ID: "a", Kind: backend.KindToolStep, Tool: "world_sim", DependsOn: []string{"b"}},
		{ID: "b", Kind: backend.KindToolStep, Tool: "world_sim", DependsOn: []string{"a"}},
	}}, catalog)
	require.EqualError(t, err, "the steps form a cycle: a → b → a (each depends on the next)")
}

func TestSchemaIsTheValidatorsSchema(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(taskgraph.Schema(), &doc))
	require.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc["$schema"])
	require.NoError(t, json.Unmarshal(taskgraph.CoderArgsSchema(), &doc))
}

func TestCheckArgsSchemaRefusesWhatIsNotJSONSchema(t *testing.T) {
	require.NoError(t, taskgraph.CheckArgsSchema(json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)))
	for raw, want := range map[string]string{
		`[1]`:               "it is not a JSON object",
		`{"properties":{}}`: `its top level is not "type": "object"`,
		`{"type":"object","properties":{"a":{"type":"strang"}}}`:                     "it is not valid JSON Schema",
		`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`: "it is not valid JSON Schema",
		`{"type":"object","minProperties":"three"}`:                                  "it is not valid JSON Schema",
	} {
		err := taskgraph.CheckArgsSchema(json.RawMessage(raw))
		require.ErrorContains(t, err, want, raw)
	}
}
