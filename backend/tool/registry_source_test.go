package tool_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/tool"
)

// named is a tool with a name and nothing else to say.
type named struct{ name string }

func (n named) Name() string              { return n.name }
func (named) Description() string         { return "a test tool" }
func (named) ArgsSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (named) Run(context.Context, backend.ToolCall) (backend.ToolResult, error) {
	return backend.ToolResult{}, nil
}

// source is a Source whose tools change.
type source struct {
	mu    sync.Mutex
	tools []backend.Tool
}

func (s *source) Tools() []backend.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]backend.Tool(nil), s.tools...)
}

func (s *source) set(tools ...backend.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools = tools
}

// TestASourcesToolsJoinTheCatalogAsTheyChange: a source's tools are listed,
// found and validated beside the built-ins, as they are now; one that takes
// a built-in's name is left out.
func TestASourcesToolsJoinTheCatalogAsTheyChange(t *testing.T) {
	src := &source{}
	r := tool.NewRegistry(named{"file_read"})
	r.Attach(src)
	require.Equal(t, []string{"file_read"}, r.ToolNames())

	src.set(named{"mcp__fs__read"}, named{"file_read"})
	require.Equal(t, []string{"file_read", "mcp__fs__read"}, r.ToolNames())
	got, err := r.Get("mcp__fs__read")
	require.NoError(t, err)
	require.Equal(t, "mcp__fs__read", got.Name())
	_, ok := r.ArgsSchema("mcp__fs__read")
	require.True(t, ok)
	require.Len(t, r.Catalog(), 2)
	require.Len(t, r.List(), 2)

	src.set()
	_, err = r.Get("mcp__fs__read")
	require.EqualError(t, err, `there is no tool named "mcp__fs__read"`)
	require.Equal(t, []string{"file_read"}, r.ToolNames())
}
