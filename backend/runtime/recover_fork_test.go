package runtime_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// A fork's latest checkpoint damaged (its row names a blob that is gone)
// with an older one readable: the fork loads from the older one and its
// ledger to the very state it had, records the skip once as a warning, and
// goes on. A fork has no ledger of its own from its first event, so this
// is the fallback itself at work, not a fold of the whole ledger.
func TestForkWithDamagedLatestCheckpointFallsBackToAnOlderOne(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "three", ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("a", "echo one"), shell("b", "echo two", "a"))})
	require.NoError(t, err)
	f.approveAll(t, run.ID)
	require.Equal(t, backend.RunCompleted, f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed).Status)
	cps, err := f.store.ListCheckpoints(f.ctx, run.ID)
	require.NoError(t, err)
	edited := `{"nodes":[{"id":"a","kind":"tool","tool":"shell_exec","args":{"command":"echo one"},"depends_on":[]},
		{"id":"c","kind":"tool","tool":"shell_exec","args":{"command":"echo three"},"depends_on":[]},
		{"id":"d","kind":"tool","tool":"shell_exec","args":{"command":"echo four"},"depends_on":["c"]}]}`
	_, _, child, err := f.rt.Fork(f.ctx, runtime.ForkRequest{CheckpointID: cps[len(cps)-1].ID, Delta: json.RawMessage(edited)})
	require.NoError(t, err)
	f.approveFirst(t, child.ID) // c runs; d waits
	require.Eventually(t, func() bool {
		as, err := f.rt.Approvals(f.ctx, child.ID)
		return err == nil && len(as) == 1 && as[0].Step == "d"
	}, 30*time.Second, 10*time.Millisecond)
	// The request is recorded before the run's status says it waits: load
	// the state once the driver has parked, or the status is still to come.
	before := f.waitStatus(t, child.ID, backend.RunAwaitingApproval)
	require.Equal(t, runtime.StepDone, before.Steps["c"].State)

	stored, err := f.store.GetRun(f.ctx, child.ID)
	require.NoError(t, err)
	own, err := f.store.ListCheckpoints(f.ctx, child.ID)
	require.NoError(t, err)
	require.Greater(t, len(own), 1, "an older checkpoint to fall back to")
	require.Equal(t, stored.LatestCheckpointID, own[len(own)-1].ID)
	f.rt.Close()
	// The database is damaged: the latest checkpoint's row names a blob
	// that is not there.
	_, err = f.db.SQL.Exec(`DROP TRIGGER checkpoints_immutable_update`)
	require.NoError(t, err)
	_, err = f.db.SQL.Exec(`UPDATE checkpoints SET digest = ? WHERE id = ?`, "sha256:"+strings.Repeat("0", 64), stored.LatestCheckpointID)
	require.NoError(t, err)

	f.restart(t)
	st, _, err := f.rt.Load(f.ctx, child.ID)
	require.NoError(t, err, "the fork loads from its older checkpoint")
	require.Equal(t, before.Seq, st.Seq)
	require.Equal(t, before.Status, st.Status)
	require.Equal(t, stepStates(before), stepStates(st))
	require.Equal(t, before.Steps["c"].Result.StdoutTail, st.Steps["c"].Result.StdoutTail)
	require.Len(t, st.PendingApprovals(), 1)

	resumed, err := f.rt.ResumeAll(f.ctx)
	require.NoError(t, err)
	require.Contains(t, resumed, child.ID)
	f.approveAll(t, child.ID)
	st = f.waitStatus(t, child.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "four\n", st.Steps["d"].Result.StdoutTail)
	var warnings []string
	for _, e := range f.events(t, child.ID) {
		if e.Type == runtime.EvWarning {
			warnings = append(warnings, string(e.Payload))
		}
	}
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "checkpoint "+stored.LatestCheckpointID+" is damaged")
}

func stepStates(st *runtime.RunState) map[string]string {
	out := map[string]string{}
	for id, r := range st.Steps {
		out[id] = r.State
	}
	return out
}

// A plan-edit fork that changes a step done at its checkpoint runs that
// step again (its edited definition never ran); an unchanged done step is
// kept.
func TestForkRunsAgainAnEditedStepThatWasDone(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "two files", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(
			step("a", "file_write", `{"path":"a.txt","content":"A"}`),
			step("b", "file_write", `{"path":"b.txt","content":"B"}`, "a"),
		)})
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed).Status)
	cps, err := f.store.ListCheckpoints(f.ctx, run.ID)
	require.NoError(t, err)
	last := cps[len(cps)-1]
	at, err := f.rt.StateAt(f.ctx, last.ID)
	require.NoError(t, err)
	require.Equal(t, runtime.StepDone, at.Steps["a"].State)
	require.Equal(t, runtime.StepDone, at.Steps["b"].State)

	edited := `{"nodes":[{"id":"a","kind":"tool","tool":"file_write","args":{"path":"a.txt","content":"A2"},"depends_on":[]},
		{"id":"b","kind":"tool","tool":"file_write","args":{"path":"b.txt","content":"B"},"depends_on":["a"]}]}`
	_, _, child, err := f.rt.Fork(f.ctx, runtime.ForkRequest{CheckpointID: last.ID, Delta: json.RawMessage(edited)})
	require.NoError(t, err)
	cst := f.waitStatus(t, child.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, cst.Status, cst.StatusReason)
	var started []string
	for _, e := range f.events(t, child.ID) {
		if e.Type == runtime.EvStepStarted {
			var p struct {
				Step string `json:"step"`
			}
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			started = append(started, p.Step)
		}
	}
	require.Equal(t, []string{"a"}, started, "the edited step runs again, the unchanged one is kept")
	require.Contains(t, string(cst.Steps["a"].Args()), "A2")
}
