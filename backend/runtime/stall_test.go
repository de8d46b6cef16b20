package runtime_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// flakyStore refuses the first write that carries an event of type failOn,
// as a database refuses a write it cannot take (a full disk, a lock held
// past the busy timeout).
type flakyStore struct {
	runtime.RunStore
	failOn string
	failed atomic.Int32
}

func (s *flakyStore) SaveRun(ctx context.Context, r backend.WorldRun, expect int64, events []backend.Event, cp *backend.Checkpoint, also ...backend.Prepared) ([]backend.Event, error) {
	for _, e := range events {
		if e.Type == s.failOn && s.failed.CompareAndSwap(0, 1) {
			return nil, backend.Errorf(backend.EUNAVAILABLE, "disk I/O error")
		}
	}
	return s.RunStore.SaveRun(ctx, r, expect, events, cp, also...)
}

// countStalls counts the driver stops that left a run moving (the runtime
// logs each as it drives the run again).
func countStalls(n *atomic.Int32) option {
	return func(d *runtime.Deps) {
		log := d.Log
		d.Log = func(msg string, args ...any) {
			if strings.Contains(msg, "driving it again") {
				n.Add(1)
			}
			log(msg, args...)
		}
	}
}

// A driver that stops on a refused write leaves its run moving; the run is
// driven again and ends, instead of standing in "running" with no driver
// until the next restart (seen against the real model server).
func TestRunStoppedByARefusedWriteIsDrivenAgain(t *testing.T) {
	defer runtime.SetStallPause(20 * time.Millisecond)()
	// (A refused step.started is retried by the driver itself: the step
	// never started.)
	for _, failOn := range []string{runtime.EvDecision, runtime.EvPlanAccepted, runtime.EvCompleted} {
		t.Run(failOn, func(t *testing.T) {
			var stalls atomic.Int32
			store := &flakyStore{failOn: failOn}
			f := setup(t, countStalls(&stalls), func(d *runtime.Deps) { store.RunStore, d.Store = d.Store, store })
			run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{
				Task: "write and read a file", ApprovalMode: runtime.AutoSandboxed,
				Plan: plan(
					step("write", "file_write", `{"path":"a.txt","content":"one"}`),
					step("read", "file_read", `{"path":"a.txt"}`, "write"),
				),
			})
			require.NoError(t, err)
			st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
			require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
			require.EqualValues(t, 1, store.failed.Load(), "the store refused one write")
			require.Positive(t, stalls.Load(), "the stop is logged")
			require.Equal(t, runtime.StepDone, st.Steps["read"].State)
		})
	}
}
