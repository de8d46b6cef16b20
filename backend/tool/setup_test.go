package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/prereq"
	"ducklm/backend/tool"
)

// fixture is a workspace inside a parent folder that also holds a sibling
// with a secret, the place an escaping path would reach.
type fixture struct {
	ws      string
	sibling string
}

func setup(t *testing.T) fixture {
	t.Helper()
	parent := t.TempDir()
	f := fixture{ws: filepath.Join(parent, "ws"), sibling: filepath.Join(parent, "sibling")}
	require.NoError(t, os.Mkdir(f.ws, 0o755))
	require.NoError(t, os.Mkdir(f.sibling, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.sibling, "secret"), []byte("s3cret"), 0o644))
	return f
}

// call builds a call of tool with args in the fixture's workspace.
func (f fixture) call(t *testing.T, name string, args any) backend.ToolCall {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	return backend.ToolCall{
		RunID: "run", StepID: "step", Tool: name, Args: raw, Workspace: f.ws,
		Limits: backend.Limits{Timeout: 10 * time.Second, FileBytes: 1 << 20, OutputBytes: 64 << 10, Processes: 64},
	}
}

func (f fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(f.ws, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func (f fixture) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.ws, rel))
	require.NoError(t, err)
	return string(b)
}

type readOutput struct {
	Path      string `json:"path"`
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
	Content   string `json:"content"`
	Encoding  string `json:"encoding"`
	Truncated bool   `json:"truncated"`
}

type writeOutput struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

func readFile(t *testing.T, f fixture, args any) (readOutput, error) {
	t.Helper()
	res, err := (&tool.FileRead{}).Run(context.Background(), f.call(t, "file_read", args))
	var out readOutput
	if err == nil {
		require.NoError(t, json.Unmarshal(res.Output, &out))
	}
	return out, err
}

func writeFile(t *testing.T, f fixture, args any) (writeOutput, backend.ToolResult, error) {
	t.Helper()
	res, err := (&tool.FileWrite{}).Run(context.Background(), f.call(t, "file_write", args))
	var out writeOutput
	if err == nil {
		require.NoError(t, json.Unmarshal(res.Output, &out))
	}
	return out, res, err
}

func requireSandbox(t *testing.T) {
	t.Helper()
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "%s", why)
	}
}

// modes runs fn once with openat2 and once with the Lstat walk that stands
// in for it on old kernels. The walk is switched globally, so callers are
// not parallel.
func modes(t *testing.T, fn func(t *testing.T)) {
	t.Run("openat2", fn)
	t.Run("walk", func(t *testing.T) {
		defer tool.SetWalkFallback()()
		fn(t)
	})
}
