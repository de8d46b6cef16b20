package runtime_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// Loads one after another never go back: a run's folded seq read later is
// never lower than one read before, while its steps run and are answered.
func TestLoadsNeverGoBack(t *testing.T) {
	f := setup(t)
	for round := 0; round < 5; round++ {
		run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "edit notes", ApprovalMode: runtime.AskEvery, Workspace: t.TempDir(),
			Plan: plan(
				step("first", "file_write", `{"path":"notes.txt","content":"one\ntwo\n"}`),
				step("second", "file_write", `{"path":"notes.txt","content":"one\nthree\n"}`, "first"),
			)})
		require.NoError(t, err)
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			var last int64
			for {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				st, _, err := f.rt.Load(f.ctx, run.ID)
				if err != nil {
					done <- err
					return
				}
				if st.Seq < last {
					done <- backend.Errorf(backend.EINTERNAL, "seq went back from %d to %d", last, st.Seq)
					return
				}
				last = st.Seq
			}
		}()
		for _, id := range []string{"first", "second"} {
			var as []runtime.Approval
			require.Eventually(t, func() bool {
				as, err = f.rt.Approvals(f.ctx, run.ID)
				return err == nil && len(as) == 1 && as[0].Step == id
			}, 30*time.Second, 2*time.Millisecond)
			require.NoError(t, f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true, By: "test"}))
		}
		f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
		close(stop)
		require.NoError(t, <-done)
	}
}
