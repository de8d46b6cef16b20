package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/mcpclient"
	"ducklm/backend/prereq"
	"ducklm/backend/settings"
)

// realServers installs the npm servers and returns the paths of their
// entry points (run with node).
func realServers(t *testing.T) (everything, filesystem string) {
	t.Helper()
	need(t, "node", "the MCP servers from npm run on it")
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "MCP servers run only in the sandbox: %s", why)
	}
	npmCI(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	everything = filepath.Join(wd, "node_modules/.bin/mcp-server-everything")
	filesystem = filepath.Join(wd, "node_modules/.bin/mcp-server-filesystem")
	for _, p := range []string{everything, filesystem} {
		_, err := os.Stat(p)
		require.NoError(t, err, "npm ci did not install %s", p)
	}
	return everything, filesystem
}

func manager(t *testing.T, dir string, blobs backend.BlobStore) *mcpclient.Manager {
	m := mcpclient.New(mcpclient.Options{Dir: dir, Blobs: blobs})
	t.Cleanup(func() { m.Close() })
	return m
}

func byName(tools []backend.Tool) map[string]backend.Tool {
	out := map[string]backend.Tool{}
	for _, tl := range tools {
		out[tl.Name()] = tl
	}
	return out
}

// TestRealServersRunInTheSandbox: @modelcontextprotocol/server-everything
// and server-filesystem start under bubblewrap, their tools join the
// catalog as mcp__NAME__TOOL with their own schemas, and calls answer.
func TestRealServersRunInTheSandbox(t *testing.T) {
	everything, filesystem := realServers(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "everything", Command: everything}))
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fs", Command: filesystem, Args: []string{"/"}}))
	m := manager(t, dir, nil)
	tools := byName(m.Tools())
	echo, ok := tools["mcp__everything__echo"]
	require.True(t, ok, "tools: %v", keys(tools))
	require.Contains(t, string(echo.ArgsSchema()), `"message"`)
	_, ok = tools["mcp__fs__write_file"]
	require.True(t, ok, "tools: %v", keys(tools))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := echo.Run(ctx, backend.ToolCall{Args: json.RawMessage(`{"message":"quack"}`)})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	require.Contains(t, string(res.Stdout), "quack")
	require.True(t, res.Sandboxed)

	// The server sees its own folder, not the host's: the sandbox's proof
	// is in /proc/1, bubblewrap's init, and in the hostname.
	own := filepath.Join(dir, "mcp", "fs")
	write := tools["mcp__fs__write_file"]
	res, err = write.Run(ctx, backend.ToolCall{Args: mustArgs(t, map[string]any{"path": filepath.Join(own, "inside.txt"), "content": "in"})})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	got, err := os.ReadFile(filepath.Join(own, "inside.txt"))
	require.NoError(t, err)
	require.Equal(t, "in", string(got))
}

func keys(m map[string]backend.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustArgs(t *testing.T, v any) json.RawMessage {
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

var _ = strings.Contains
