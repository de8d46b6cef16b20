package taskgraph_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/taskgraph"
)

// catalog is the tool set the tests plan against.
var catalog = taskgraph.MapCatalog{
	"shell_exec": json.RawMessage(`{"type":"object","additionalProperties":false,"required":["command"],
		"properties":{"command":{"type":"string","minLength":1},"timeout_seconds":{"type":"integer","minimum":1}}}`),
	"file_read": json.RawMessage(`{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}`),
	"file_write": json.RawMessage(`{"type":"object","required":["path","content"],
		"properties":{"path":{"type":"string"},"content":{"type":"string"}}}`),
	"world_sim": json.RawMessage(`{"type":"object"}`),
}

// mustParse parses a plan that must be valid.
func mustParse(t testing.TB, plan string) *taskgraph.Graph {
	t.Helper()
	g, err := taskgraph.Parse([]byte(plan), catalog)
	require.NoError(t, err)
	return g
}

// invalid parses a plan that must be invalid and returns the message.
func invalid(t testing.TB, plan string) string {
	t.Helper()
	g, err := taskgraph.Parse([]byte(plan), catalog)
	require.Error(t, err)
	require.Nil(t, g)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), err.Error())
	var e *backend.Error
	require.ErrorAs(t, err, &e)
	return e.Message
}

// shell is a plan node running a shell command.
func shell(id, cmd string, deps ...string) map[string]any {
	if deps == nil {
		deps = []string{}
	}
	return map[string]any{"id": id, "kind": "tool", "tool": "shell_exec", "args": map[string]any{"command": cmd}, "depends_on": deps}
}

// plan encodes nodes as a plan.
func plan(t testing.TB, nodes ...map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"nodes": nodes})
	require.NoError(t, err)
	return string(data)
}
