package bwrap_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/bwrap"
)

// TestReadOnlyPathsAreVisibleAndNotWritable: a folder named in ReadOnly
// (an MCP server's package tree) is readable inside the sandbox at its own
// path and cannot be written; its sibling stays invisible.
func TestReadOnlyPathsAreVisibleAndNotWritable(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	parent := t.TempDir()
	pkg, sibling := filepath.Join(parent, "node_modules"), filepath.Join(parent, "sibling")
	require.NoError(t, os.Mkdir(pkg, 0o755))
	require.NoError(t, os.Mkdir(sibling, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "index.js"), []byte("code"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sibling, "secret"), []byte("s3cret"), 0o644))
	spec := sh(t, `cat "$1/index.js"; echo; echo x > "$1/new" 2>/dev/null && echo wrote; cat "$2/secret" 2>/dev/null || echo hidden`)
	spec.Argv = append(spec.Argv, "sh", pkg, sibling)
	spec.ReadOnly = []string{pkg}
	res, err := bwrap.Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, "code\nhidden\n", string(res.Stdout), "stderr: %s", res.Stderr)
	require.NoFileExists(t, filepath.Join(pkg, "new"))
}

func TestReadOnlyPathsMustBeCleanAbsoluteAndExist(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"relative/x":  `the read-only path "relative/x" is not a clean absolute path`,
		"/":           "the root folder cannot be shown to a sandbox whole",
		"/no/such/xy": "the read-only path /no/such/xy cannot be used",
	} {
		spec := sh(t, "true")
		spec.ReadOnly = []string{path}
		_, err := bwrap.Run(context.Background(), spec)
		require.ErrorContains(t, err, want)
	}
}
