package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
	"ducklm/backend/tool"
)

// scriptCoder writes one fixed script, as a coder model would.
type scriptCoder struct{ source string }

func (s scriptCoder) Write(ctx context.Context, req runtime.CoderRequest) (runtime.CoderScript, error) {
	return runtime.CoderScript{Language: "sh", Source: s.source, Model: "fake-coder"}, nil
}

func TestCoderStepRunsTheScriptTheCoderWrote(t *testing.T) {
	t.Parallel()
	source := "printf 'from the coder' > coded.txt; echo coder-ran-$((6 * 7))"
	f := setup(t, func(d *runtime.Deps) {
		d.Coder = scriptCoder{source: source}
		d.ScriptTool = func(language, src string) backend.Tool {
			return tool.NewScript(language, src, tool.AllowUnsandboxed)
		}
	})
	ws := t.TempDir()
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "make a file", ApprovalMode: runtime.AutoSandboxed, Workspace: ws,
		Plan: plan(backend.TaskNode{ID: "c1", Kind: backend.KindCoderStep, Args: []byte(`{"goal": "write coded.txt", "language": "sh"}`)})})
	require.NoError(t, err)
	f.approveAll(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	rec := st.Steps["c1"]
	require.NotNil(t, rec.Script, "the script the coder wrote is recorded")
	require.Equal(t, source, rec.Script.Source)
	require.Equal(t, "coder-ran-42\n", rec.Result.StdoutTail, "the step ran that script, not another")
	data, err := os.ReadFile(filepath.Join(ws, "coded.txt"))
	require.NoError(t, err)
	require.Equal(t, "from the coder", string(data))
}
