package api_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/api"
	"ducklm/backend/bwrap"
	"ducklm/backend/prereq"
)

// TestMCPServersThroughTheFacade: the window's calls add a server (it
// starts and lists its tools, which join the catalog), mark a tool safe,
// test it, refuse bad input with a sentence, and remove it (its tools
// leave the catalog).
func TestMCPServersThroughTheFacade(t *testing.T) {
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "MCP servers run only in the sandbox: %s", why)
	}
	fake := filepath.Join(t.TempDir(), "fakeserver")
	out, err := exec.Command("go", "build", "-o", fake, "ducklm/tests/mcp/testdata/fakeserver").CombinedOutput()
	require.NoError(t, err, "%s", out)
	a := setup(t)

	_, err = a.AddMCPServer(api.MCPServerInput{Name: "Fake", Command: fake})
	require.ErrorContains(t, err, "an MCP server's name is 1 to 32 lower-case letters")
	all, err := a.MCPServers()
	require.NoError(t, err)
	require.Empty(t, all, "a refused server is not stored")

	st, err := a.AddMCPServer(api.MCPServerInput{Name: "fake", Command: fake, Args: []string{"ok"}})
	require.NoError(t, err)
	require.Equal(t, "ready", st.State)
	catalog, err := a.ToolCatalog()
	require.NoError(t, err)
	var names []string
	for _, e := range catalog {
		if e.MCP != nil {
			names = append(names, e.Name)
		}
	}
	require.Equal(t, []string{"mcp__fake__big", "mcp__fake__change", "mcp__fake__die", "mcp__fake__echo", "mcp__fake__fail", "mcp__fake__long", "mcp__fake__slow"}, names)

	st, err = a.MarkMCPToolSafe("fake", "echo", true)
	require.NoError(t, err)
	for _, tl := range st.Tools {
		require.Equal(t, tl.Name == "echo", tl.Safe, tl.Name)
	}
	_, err = a.MarkMCPToolSafe("fake", "nope", true)
	require.EqualError(t, err, `MCP server fake has no tool named "nope" (its tools: echo, big, fail, die, change, slow, long)`)

	st, err = a.TestMCPServer("fake")
	require.NoError(t, err)
	require.Len(t, st.Tools, 7)
	_, err = a.TestMCPServer("ghost")
	require.EqualError(t, err, `there is no MCP server named "ghost"`)

	require.NoError(t, a.RemoveMCPServer("fake"))
	catalog, err = a.ToolCatalog()
	require.NoError(t, err)
	for _, e := range catalog {
		require.Nil(t, e.MCP, e.Name)
	}
	require.EqualError(t, a.RemoveMCPServer("fake"), `there is no MCP server named "fake" (none is added: ducklm mcp add adds one)`)
}
