package bwrap_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/bwrap"
)

// A workspace handed over open runs in that folder even when its name was
// given to a link to another folder between the opening and the start.
func TestWorkspaceDirIsTheFolderRunInWhateverHasItsName(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			base := t.TempDir()
			ws, other := filepath.Join(base, "ws"), filepath.Join(base, "other")
			require.NoError(t, os.Mkdir(ws, 0o755))
			require.NoError(t, os.Mkdir(other, 0o755))
			dir, err := os.Open(ws)
			require.NoError(t, err)
			defer dir.Close()
			require.NoError(t, os.Rename(ws, ws+".old"))
			require.NoError(t, os.Symlink(other, ws))

			for _, spec := range []bwrap.Spec{
				{Argv: []string{"/bin/sh", "-c", "echo hi > made.txt && echo ok"}},
				{Script: []byte("echo hi > made.txt && echo ok")},
			} {
				spec.Workspace, spec.WorkspaceDir, spec.Limits = ws, dir, limits()
				res, err := r.run(t.Context(), spec)
				require.NoError(t, err)
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				require.Equal(t, "ok\n", string(res.Stdout))
				_, err = os.Stat(filepath.Join(other, "made.txt"))
				require.True(t, os.IsNotExist(err), "the step followed the link")
				b, err := os.ReadFile(filepath.Join(ws+".old", "made.txt"))
				require.NoError(t, err)
				require.Equal(t, "hi\n", string(b))
				require.NoError(t, os.Remove(filepath.Join(ws+".old", "made.txt")))
			}
		})
	}
}
