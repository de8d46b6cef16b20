package planner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/planner"
)

func TestOfflineExplicitGraph(t *testing.T) {
	t.Parallel()
	g := &backend.TaskGraph{Nodes: []backend.TaskNode{
		{ID: "step-1", Kind: "tool", Tool: "shell_exec", Args: json.RawMessage(`{"command":"df -h"}`)},
	}}
	d, err := planner.Offline{}.Plan(context.Background(), planner.Request{Task: "check the disks", Explicit: g})
	require.NoError(t, err)
	require.Equal(t, backend.DecisionPlan, d.Type)
	require.Equal(t, 1.0, d.Confidence)
	p := payload[planner.PlanPayload](t, d)
	require.Equal(t, planner.SourceExplicit, p.Source)
	require.Len(t, p.Graph.Nodes, 1)
	require.Equal(t, []string{}, p.Graph.Nodes[0].DependsOn, "missing depends_on becomes []")
}

func TestOfflineExplicitJSONTask(t *testing.T) {
	t.Parallel()
	task := `{"nodes": [
	  {"id": "step-1", "kind": "tool", "tool": "shell_exec", "args": {"command": "hostnamectl"}, "depends_on": []},
	  {"id": "step-2", "kind": "tool", "tool": "file_read", "args": {"path": "/etc/os-release"}, "depends_on": ["step-1"]}]}`
	d, err := planner.Offline{}.Plan(context.Background(), planner.Request{Task: task})
	require.NoError(t, err)
	require.Equal(t, backend.DecisionPlan, d.Type)
	p := payload[planner.PlanPayload](t, d)
	require.Len(t, p.Graph.Nodes, 2)
	require.Equal(t, []string{"step-1"}, p.Graph.Nodes[1].DependsOn)

	d, err = planner.Offline{}.Plan(context.Background(), planner.Request{Task: `{"nodes": [{"id": "step-1", "kind": "magic", "args": {}, "depends_on": []}]}`})
	require.NoError(t, err)
	require.Equal(t, backend.DecisionFail, d.Type)
	require.Equal(t, "the explicit plan does not match the plan schema: at /nodes/0/kind: value must be one of 'tool', 'coder'", d.Reason)
}

func TestOfflineOneLiners(t *testing.T) {
	t.Parallel()
	for task, cmd := range map[string]string{
		"$ hostnamectl":  "hostnamectl",
		"  !uname -a  ":  "uname -a",
		"! ls -la /tmp":  "ls -la /tmp",
		"$ echo '$ hi'":  "echo '$ hi'",
		"$ a &&\n  b":    "a &&\n  b",
		"!df -h | head ": "df -h | head",
	} {
		d, err := planner.Offline{}.Plan(context.Background(), planner.Request{Task: task})
		require.NoError(t, err)
		require.Equal(t, backend.DecisionPlan, d.Type, task)
		p := payload[planner.PlanPayload](t, d)
		require.Equal(t, planner.SourceOneLiner, p.Source)
		require.Equal(t, []backend.TaskNode{{
			ID: "step-1", Kind: "tool", Tool: "shell_exec", DependsOn: []string{}, Title: cmd,
			Args: mustJSON(t, map[string]string{"command": cmd}),
		}}, p.Graph.Nodes, task)
	}

	for _, task := range []string{"$ ", "!", "!   "} {
		d, err := planner.Offline{}.Plan(context.Background(), planner.Request{Task: task})
		require.NoError(t, err)
		require.Equal(t, backend.DecisionFail, d.Type, task)
		require.Contains(t, d.Reason, "has no command", task)
	}
}

func TestOfflineNaturalLanguageNeedsAModel(t *testing.T) {
	t.Parallel()
	for _, task := range []string{"What is this machine's hostname?", "{not a plan} explain this", `{"question": "why?"}`, "$HOME is full, clean it"} {
		d, err := planner.Offline{}.Plan(context.Background(), planner.Request{Task: task})
		require.NoError(t, err)
		require.Equal(t, backend.DecisionFail, d.Type, task)
		require.Equal(t, planner.NeedsModel, d.Reason)
		require.Equal(t, "natural-language tasks need a model: start Ollama (ollama serve) or give an explicit plan", d.Reason)
		p := payload[planner.FailPayload](t, d)
		require.True(t, p.NeedsModel)
	}
}

func TestPlanSchemaIsAJSONSchemaObject(t *testing.T) {
	t.Parallel()
	var s map[string]any
	require.NoError(t, json.Unmarshal(planner.PlanSchema(), &s))
	require.Equal(t, "object", s["type"])
	require.ElementsMatch(t, []any{"decision", "reason", "confidence"}, s["required"])
}

type fakeTool struct{ backend.Tool }

func (fakeTool) Name() string                { return "shell_exec" }
func (fakeTool) Description() string         { return "Runs a command." }
func (fakeTool) ArgsSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }

func TestCatalogOf(t *testing.T) {
	t.Parallel()
	require.Equal(t, []planner.ToolInfo{{Name: "shell_exec", Description: "Runs a command.", ArgsSchema: json.RawMessage(`{"type":"object"}`)}},
		planner.CatalogOf(fakeTool{}))
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
