package settings_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/settings"
)

func TestMCPServersAreAddedUpdatedAndRemoved(t *testing.T) {
	dir := t.TempDir()
	all, err := settings.LoadMCP(dir)
	require.NoError(t, err)
	require.Empty(t, all)

	fs := settings.MCPServer{Name: "files", Command: "/usr/bin/node", Args: []string{"index.js", "/data"}}
	require.NoError(t, settings.AddMCP(dir, fs))
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "remote", URL: "https://mcp.example.com/mcp"}))
	err = settings.AddMCP(dir, fs)
	require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))
	require.EqualError(t, err, "an MCP server is already named files; remove it first or choose another name")

	require.NoError(t, settings.UpdateMCP(dir, "files", func(s *settings.MCPServer) error {
		s.Safe = append(s.Safe, "read_file")
		return nil
	}))
	all, err = settings.LoadMCP(dir)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, []string{"read_file"}, all[0].Safe)
	require.True(t, all[0].Stdio())
	require.False(t, all[1].Stdio())

	require.NoError(t, settings.RemoveMCP(dir, "files"))
	err = settings.RemoveMCP(dir, "files")
	require.EqualError(t, err, `there is no MCP server named "files" (the servers are remote)`)
	all, err = settings.LoadMCP(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"remote"}, []string{all[0].Name})
}

// TestBadMCPServersAreRefusedAndChangeNothing: each bad server is one
// sentence, and the file keeps what it held.
func TestBadMCPServersAreRefusedAndChangeNothing(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "ok", Command: "/bin/true"}))
	before, err := os.ReadFile(filepath.Join(dir, "mcp-servers.json"))
	require.NoError(t, err)
	for _, tt := range []struct {
		s    settings.MCPServer
		want string
	}{
		{settings.MCPServer{Name: "Bad Name", Command: "x"}, `an MCP server's name is 1 to 32 lower-case letters`},
		{settings.MCPServer{Name: "a__b", Command: "x"}, "never two _ in a row"},
		{settings.MCPServer{Name: "none"}, "MCP server none needs a command to start or a URL to reach"},
		{settings.MCPServer{Name: "both", Command: "x", URL: "https://a.example"}, "MCP server both has both a command and a URL; give one"},
		{settings.MCPServer{Name: "ftp", URL: "ftp://a.example"}, `the URL of MCP server ftp must be an http or https URL, not "ftp://a.example"`},
		{settings.MCPServer{Name: "web", URL: "https://a.example", Network: true}, "MCP server web is reached by URL, so it has no network or workspace to allow"},
		{settings.MCPServer{Name: "cmd", Command: "x", Private: true}, "MCP server cmd is a command, so it has no private address to approve"},
	} {
		err := settings.AddMCP(dir, tt.s)
		require.ErrorContains(t, err, tt.want)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	}
	after, err := os.ReadFile(filepath.Join(dir, "mcp-servers.json"))
	require.NoError(t, err)
	require.Equal(t, string(before), string(after))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "mcp-servers.json"), []byte("{not json"), 0o600))
	_, err = settings.LoadMCP(dir)
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
	require.ErrorContains(t, err, "is not valid MCP server JSON; fix or delete it")
}
