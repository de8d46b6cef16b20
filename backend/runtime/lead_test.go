package runtime_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// A step safe to repeat that ends at once records its start in its
// result's commit: one commit a step, the start still before the result.
// A step that changes something records its start alone first.
func TestAQuickReadIsOneCommit(t *testing.T) {
	t.Parallel()
	for _, effect := range []bool{false, true} {
		lb := newLoopBenchOf(t, trivialTool{effect: effect})
		lb.store.reset()
		runID := lb.run(t, trivialPlan(5, true), 1)
		shapes := lb.store.shapes
		if effect {
			require.Equal(t, 5, shapes["step.started"], "%v", shapes)
			require.Equal(t, 5, shapes["step.finished"], "%v", shapes)
			require.Zero(t, shapes["step.started+step.finished"], "%v", shapes)
		} else {
			require.Equal(t, 5, shapes["step.started+step.finished"], "%v", shapes)
			require.Zero(t, shapes["step.started"], "%v", shapes)
		}
		events, err := lb.ledger.Query(lb.ctx, backend.EventQuery{Stream: runID})
		require.NoError(t, err)
		started := map[string]int64{}
		for _, e := range events {
			var p struct{ Step string }
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			switch e.Type {
			case runtime.EvStepStarted:
				require.Zero(t, started[p.Step], "started once")
				started[p.Step] = e.Seq
			case runtime.EvStepFinished:
				require.NotZero(t, started[p.Step], "%s finished after its start", p.Step)
				require.Less(t, started[p.Step], e.Seq)
			}
		}
		require.Len(t, started, 5)
		st, _, err := lb.rt.Load(lb.ctx, runID)
		require.NoError(t, err)
		require.Equal(t, 5, st.StepsRun)
	}
}

// slowRead only reads, and waits for the test before it answers.
type slowRead struct{ *gateTool }

func (slowRead) Name() string                    { return "slow_read" }
func (slowRead) Repeatable(json.RawMessage) bool { return true }

// A read that takes longer than an instant shows as running: its start is
// recorded alone (without its own sync) while it runs, and only once.
func TestASlowReadShowsRunning(t *testing.T) {
	t.Parallel()
	gate := newGate()
	f := setup(t, withTool(slowRead{gate}))
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "read slowly", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(step("a", "slow_read", `{}`), step("b", "slow_read", `{}`, "a"))})
	require.NoError(t, err)
	f.approveAll(t, run.ID)
	require.Equal(t, "a", <-gate.entered)
	require.Eventually(t, func() bool {
		st, _, err := f.rt.Load(f.ctx, run.ID)
		return err == nil && st.Steps["a"].State == runtime.StepRunning
	}, 10*time.Second, 5*time.Millisecond, "the read shows running while it runs")
	close(gate.open)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, 2, count(f.events(t, run.ID), runtime.EvStepStarted))
}
