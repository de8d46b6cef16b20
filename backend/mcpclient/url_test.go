package mcpclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/mcpclient"
	"ducklm/backend/settings"
)

// serveHTTP runs an MCP server with one tool, greet, over streamable HTTP
// on this machine's loopback address.
func serveHTTP(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	type in struct {
		Name string `json:"name"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets someone."}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + a.Name}}}, nil, nil
	})
	h := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(h.Close)
	return h.URL + "/mcp"
}

// TestAURLServerIsReachedOnlyThroughTheHostChecks: a server whose host is
// a loopback address is refused, with web_fetch's sentence, until the user
// approves its private addresses; then its tools are in the catalog and
// answer, confined to the hosts (no sandbox).
func TestAURLServerIsReachedOnlyThroughTheHostChecks(t *testing.T) {
	url := serveHTTP(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "greeter", URL: url}))
	m := mcpclient.New(mcpclient.Options{Dir: dir})
	t.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all, err := m.Servers(ctx)
	require.NoError(t, err)
	require.Equal(t, "failed", all[0].State)
	require.Contains(t, all[0].Error, "MCP server greeter at "+url+" did not answer")
	require.Contains(t, all[0].Error, "127.0.0.1 resolved to 127.0.0.1, a loopback address, which needs its own approval, so no request was sent")
	require.Contains(t, all[0].Error, "(for this server: add it with --private, or approve its private addresses in Settings → Tools)")
	require.Empty(t, m.Tools())

	require.NoError(t, settings.UpdateMCP(dir, "greeter", func(s *settings.MCPServer) error { s.Private = true; return nil }))
	st, err := m.Test(ctx, "greeter")
	require.NoError(t, err)
	require.Equal(t, "ready", st.State)
	var greet backend.Tool
	for _, tl := range m.Tools() {
		if tl.Name() == "mcp__greeter__greet" {
			greet = tl
		}
	}
	require.NotNil(t, greet)
	require.Equal(t, backend.ConfinedHosts, backend.ConfinementOf(greet))
	info, _ := backend.MCPOf(greet)
	require.True(t, info.Network, "a URL server's calls reach the network")
	res, err := greet.Run(ctx, backend.ToolCall{Args: json.RawMessage(`{"name":"duck"}`)})
	require.NoError(t, err)
	require.Equal(t, "hello, duck\n", string(res.Stdout))
	require.False(t, res.Sandboxed)
}
