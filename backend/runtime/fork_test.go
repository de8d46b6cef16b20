package runtime_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

func TestForkTaskRunWithEditedPlan(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "two files", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(
			step("a", "file_write", `{"path":"a.txt","content":"A"}`),
			step("b", "file_write", `{"path":"b.txt","content":"B"}`, "a"),
		)})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	// The checkpoint taken after step a finished: fork there with b edited.
	cps, err := f.store.ListCheckpoints(f.ctx, run.ID)
	require.NoError(t, err)
	var after *backend.Checkpoint
	for i := range cps {
		s, err := f.rt.StateAt(f.ctx, cps[i].ID)
		require.NoError(t, err)
		if s.Steps["a"] != nil && s.Steps["a"].State == runtime.StepDone && s.Steps["b"].State != runtime.StepDone {
			after = &cps[i]
			break
		}
	}
	require.NotNil(t, after, "a checkpoint between the two steps")
	edited := `{"nodes":[{"id":"a","kind":"tool","tool":"file_write","args":{"path":"a.txt","content":"A"},"depends_on":[]},
		{"id":"b","kind":"tool","tool":"file_write","args":{"path":"b.txt","content":"B2"},"depends_on":["a"]}]}`
	fork, child, childRun, err := f.rt.Fork(f.ctx, runtime.ForkRequest{CheckpointID: after.ID, Delta: json.RawMessage(edited), Name: "edited b"})
	require.NoError(t, err)
	require.Equal(t, backend.DivergePlanEdit, fork.Divergence)
	require.Equal(t, st.WorldID, child.ParentWorldID)
	require.Equal(t, backend.DomainReal, child.Domain)

	cst := f.waitStatus(t, childRun.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, cst.Status, cst.StatusReason)
	content, err := os.ReadFile(filepath.Join(st.Request.Workspace, "b.txt"))
	require.NoError(t, err)
	require.Equal(t, "B2", string(content))

	// Step a was done at the checkpoint: the child did not run it again.
	own := f.events(t, childRun.ID)
	require.Equal(t, runtime.EvForked, own[0].Type)
	started := 0
	for _, e := range own {
		if e.Type == runtime.EvStepStarted {
			started++
			require.True(t, strings.Contains(string(e.Payload), `"step":"b"`))
		}
	}
	require.Equal(t, 1, started)

	// Its full history is the parent's prefix by reference, then its own.
	w := world.New(f.store, f.ledger, f.blobs, defaultLimits(), worldproc.Shared())
	hist, err := w.History(f.ctx, childRun.ID)
	require.NoError(t, err)
	require.Equal(t, run.ID, hist[0].Stream)
	require.Equal(t, after.LedgerSeq+int64(len(own)), int64(len(hist)))

	// The Runs list names the fork as it was named (issue 30: it showed the parent's task); the
	// run started from a task has no name of its own.
	runs, err := f.rt.Runs(f.ctx)
	require.NoError(t, err)
	names := map[string]string{}
	for _, s := range runs {
		names[s.Run.ID] = s.Name
		require.Equal(t, "two files", s.Task)
	}
	require.Equal(t, map[string]string{run.ID: "", childRun.ID: "edited b"}, names)

	// A simulated world's checkpoint is no task run's state.
	_, sim, err := w.Create(f.ctx, world.NewWorld{Name: "counter", Program: []byte("def init(seed):\n    return {\"n\": 0}\n\ndef step(state, action, rng):\n    return state, [], False\n\ndef observe(state, role):\n    return state\n")})
	require.NoError(t, err)
	simCp, err := w.Checkpoint(f.ctx, sim.ID)
	require.NoError(t, err)
	_, err = f.rt.StateAt(f.ctx, simCp.ID)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%v", err)
	require.ErrorContains(t, err, "belongs to a simulated world, not a task run")

	// Bad forks are refused.
	_, _, _, err = f.rt.Fork(f.ctx, runtime.ForkRequest{CheckpointID: after.ID, Divergence: backend.DivergeStatePatch})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, _, _, err = f.rt.Fork(f.ctx, runtime.ForkRequest{CheckpointID: after.ID, Delta: json.RawMessage(`{"nodes":[{"id":"x","kind":"tool","tool":"nope"}]}`)})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

// A forked task run's events all keep the fork's clocks: the parent's time
// at the checkpoint and the deliberation index the fork serves, not only
// the two events the fork itself writes.
func TestForkedTaskRunKeepsItsClocks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "two files", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(
			step("a", "file_write", `{"path":"a.txt","content":"A"}`),
			step("b", "file_write", `{"path":"b.txt","content":"B"}`, "a"),
		)})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	cps, err := f.store.ListCheckpoints(f.ctx, run.ID)
	require.NoError(t, err)
	cp := cps[len(cps)/2]
	require.Positive(t, cp.WorldLocalTime)
	edited := `{"nodes":[{"id":"a","kind":"tool","tool":"file_write","args":{"path":"a.txt","content":"A2"},"depends_on":[]},
		{"id":"b","kind":"tool","tool":"file_write","args":{"path":"b.txt","content":"B2"},"depends_on":["a"]}]}`
	_, _, childRun, err := f.rt.Fork(f.ctx, runtime.ForkRequest{CheckpointID: cp.ID, Delta: json.RawMessage(edited), DeliberationIndex: 4})
	require.NoError(t, err)
	cst := f.waitStatus(t, childRun.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, cst.Status, cst.StatusReason)

	own := f.events(t, childRun.ID)
	require.Greater(t, len(own), 4, "the child ran steps of its own")
	for _, e := range own {
		require.Equal(t, cp.WorldLocalTime, e.ParentTime, "%s (seq %d)", e.Type, e.Seq)
		require.EqualValues(t, 4, e.DeliberationIndex, "%s (seq %d)", e.Type, e.Seq)
	}
	// The parent, a root, has none.
	for _, e := range f.events(t, run.ID) {
		require.Zero(t, e.ParentTime)
		require.Zero(t, e.DeliberationIndex)
	}
}
