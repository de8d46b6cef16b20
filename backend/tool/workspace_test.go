package tool_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/tool"
)

// swap replaces the fixture's workspace with a link to its sibling, as a
// process racing the run could.
func (f fixture) swap(t *testing.T) {
	t.Helper()
	require.NoError(t, os.Rename(f.ws, f.ws+".old"))
	require.NoError(t, os.Symlink(f.sibling, f.ws))
}

func TestToolsRefuseAWorkspaceSwappedAfterItWasIdentified(t *testing.T) {
	t.Parallel()
	f := setup(t)
	id, err := tool.IdentifyWorkspace(f.ws)
	require.NoError(t, err)
	f.swap(t)

	calls := []struct {
		tool backend.Tool
		args any
	}{
		{&tool.Shell{Sandbox: tool.AllowUnsandboxed}, map[string]any{"command": "echo pwned > pwned.txt"}},
		{&tool.FileWrite{}, map[string]any{"path": "pwned.txt", "content": "pwned"}},
		{&tool.FileRead{}, map[string]any{"path": "secret"}},
	}
	for _, c := range calls {
		call := f.call(t, c.tool.Name(), c.args)
		call.WorkspaceID = &id
		_, err := c.tool.Run(t.Context(), call)
		require.Error(t, err, c.tool.Name())
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
		require.Contains(t, backend.ErrorMessage(err), "the workspace "+f.ws+" is no longer the folder this run was given (it was replaced by a link)")
		require.Contains(t, backend.ErrorMessage(err), "nothing ran")
	}
	_, err = os.Stat(filepath.Join(f.sibling, "pwned.txt"))
	require.True(t, os.IsNotExist(err))

	// A folder put back under the same name is another folder.
	require.NoError(t, os.Remove(f.ws))
	require.NoError(t, os.Mkdir(f.ws, 0o755))
	call := f.call(t, "shell_exec", map[string]any{"command": "true"})
	call.WorkspaceID = &id
	_, err = (&tool.Shell{Sandbox: tool.AllowUnsandboxed}).Run(t.Context(), call)
	require.ErrorContains(t, err, "is no longer the folder this run was given")

	// The folder itself, moved back, is the run's again.
	require.NoError(t, os.Remove(f.ws))
	require.NoError(t, os.Rename(f.ws+".old", f.ws))
	res, err := (&tool.Shell{Sandbox: tool.AllowUnsandboxed}).Run(t.Context(), call)
	require.NoError(t, err)
	require.Zero(t, res.ExitCode)
}

// A call without the folder's identity (a run recorded before it was kept)
// still refuses a workspace that is now a link.
func TestToolsRefuseAWorkspaceThatIsALinkWithoutAnIdentity(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.swap(t)
	for _, c := range []struct {
		tool backend.Tool
		args any
	}{
		{&tool.Shell{Sandbox: tool.AllowUnsandboxed}, map[string]any{"command": "echo pwned > pwned.txt"}},
		{&tool.FileWrite{}, map[string]any{"path": "pwned.txt", "content": "pwned"}},
	} {
		_, err := c.tool.Run(t.Context(), f.call(t, c.tool.Name(), c.args))
		require.ErrorContains(t, err, "is a link", c.tool.Name())
	}
	_, err := os.Stat(filepath.Join(f.sibling, "pwned.txt"))
	require.True(t, os.IsNotExist(err))
}
