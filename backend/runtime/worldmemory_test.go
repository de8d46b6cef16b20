package runtime_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/runtime"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/tool"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

// withLimitedWorldSim adds world_sim, its programs held to 64 MiB by pool.
func withLimitedWorldSim(pool *worldproc.Pool) option {
	return func(d *runtime.Deps) {
		limits := starlark.Limits{MaxSteps: 1 << 40, MaxMemoryBytes: 64 << 20}
		worlds := world.New(d.Store.(*store.Worlds), d.Events.(*store.Ledger), d.Blobs.(*blob.Store), limits, pool)
		d.Tools = tool.NewRegistry(append(d.Tools.List(), &tool.WorldSim{Worlds: worlds})...)
	}
}

// TestAWorldSimStepOutgrowingItsMemoryFailsItsRunAlone is issue 14's task
// case: a world_sim step (low risk, so it runs without asking) whose
// program doubles a string fails with the limit's sentence, instead of
// taking ducklm past gigabytes; the controller goes on and the next run
// completes.
func TestAWorldSimStepOutgrowingItsMemoryFailsItsRunAlone(t *testing.T) {
	t.Parallel()
	pool := worldproc.New(worldproc.Options{Workers: 1})
	t.Cleanup(func() { pool.Close() })
	f := setup(t, withLimitedWorldSim(pool))
	program := "def init(seed):\n    return {}\ndef step(s, a, r):\n    x = \"x\"\n    while True:\n        x = x + x\ndef observe(s, r):\n    return s\n"
	args, err := json.Marshal(map[string]any{"program": program, "steps": 3})
	require.NoError(t, err)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "simulate", ApprovalMode: runtime.AskRisky,
		Plan: plan(step("sim", "world_sim", string(args)))})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunFailed, st.Status, st.StatusReason)
	sim := st.Steps["sim"]
	require.NotNil(t, sim.Result)
	require.Contains(t, sim.Result.StderrTail, "memory limit of 64 MiB")
	require.Contains(t, sim.Result.StderrTail, "worldMemoryMiB")

	next, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "after", ApprovalMode: runtime.AskRisky,
		Plan: plan(step("sim", "world_sim", `{"example": "branching_grid", "steps": 5}`))})
	require.NoError(t, err)
	st = f.waitStatus(t, next.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
}
