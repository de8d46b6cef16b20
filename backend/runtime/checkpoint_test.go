package runtime_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// A step's checkpoint is a row and an event in the step's own commit that
// names the run's base: a long run stores a few whole states, not one per
// step, and every checkpoint is still exact, with concurrent steps too.
func TestCheckpointsShareTheirBase(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, concurrency := range []int{1, 3} {
		var nodes []backend.TaskNode
		for i := 0; i < 20; i++ {
			var deps []string
			if concurrency == 1 && i > 0 {
				deps = []string{fmt.Sprintf("s%d", i-1)}
			}
			nodes = append(nodes, step(fmt.Sprintf("s%d", i), "noop", `{}`, deps...))
		}
		run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "twenty", Plan: plan(nodes...), ApprovalMode: runtime.AutoSandboxed,
			Concurrency: concurrency, MaxSteps: 20})
		require.NoError(t, err)
		f.approveAll(t, run.ID) // only asked where bubblewrap is missing
		st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
		require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

		cps, err := f.store.ListCheckpoints(f.ctx, run.ID)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(cps), 21, "a checkpoint after the plan and after every step")
		bases := map[string]bool{}
		for _, cp := range cps {
			bases[cp.Blob.Digest] = true
		}
		require.LessOrEqual(t, len(bases), 3, "%d checkpoints share a few bases", len(cps))
		f.requireExactCheckpoints(t, run.ID)
	}
}

// The plan cap is a run's setting: 201 steps are refused by default and
// accepted by a run that allows them.
func TestPlanCapIsARunSetting(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var nodes []backend.TaskNode
	for i := 0; i < 201; i++ {
		nodes = append(nodes, step(fmt.Sprintf("s%d", i), "gate", `{}`))
	}
	_, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "too long", Plan: plan(nodes...), MaxSteps: 201})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "the plan has 201 steps, more than the 200 allowed")

	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "allowed", Plan: plan(nodes...), MaxPlanSteps: 500, MaxSteps: 201})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count(f.events(t, run.ID), runtime.EvPlanAccepted) == 1 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, f.rt.Cancel(f.ctx, run.ID, ""))
	st, _, err := f.rt.Load(f.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, st.Order(), 201)
}

// Folding more events into a clone never changes the original: Clone copies
// whatever Apply edits in place.
func TestCloneIsDeep(t *testing.T) {
	t.Parallel()
	ev := func(typ, payload string) backend.Event {
		return backend.Event{Type: typ, Payload: json.RawMessage(payload)}
	}
	graph := `{"graph":{"nodes":[{"id":"a","kind":"tool","tool":"noop","args":{}},{"id":"b","kind":"tool","tool":"noop","args":{}}]}}`
	events := []backend.Event{
		ev(runtime.EvTaskReceived, `{"task":"t"}`),
		ev(runtime.EvDecision, `{}`),
		ev(runtime.EvPlannerAnswered, `{}`),
		ev(runtime.EvPlanInvalid, `{"error":"bad"}`),
		ev(runtime.EvPlannerAnswered, `{}`),
		ev(runtime.EvPlanAccepted, graph),
		ev(runtime.EvStepStarted, `{"step":"a","attempt":1}`),
		ev(runtime.EvStepFinished, `{"step":"a","ok":false,"exitCode":1}`),
		ev(runtime.EvPlanRevising, `{}`),
		ev(runtime.EvPlannerAnswered, `{}`),
		ev(runtime.EvPlanInvalid, `{"error":"worse"}`),
		ev(runtime.EvPlanAccepted, graph),
		ev(runtime.EvApprovalRequested, `{"requestId":"r","step":"b"}`),
		ev(runtime.EvApproved, `{"requestId":"r","step":"b","args":{"x":1}}`),
		ev(runtime.EvStepStarted, `{"step":"b","attempt":1}`),
		ev(runtime.EvStepFinished, `{"step":"b","ok":true}`),
		ev(runtime.EvCritique, `{"step":"b","score":0.9}`),
		ev(runtime.EvCompleted, `{"reason":"done"}`),
	}
	for i := range events {
		events[i].Seq = int64(i + 1)
	}
	for k := range events {
		st := runtime.NewRunState("run_x", "wld_x")
		for _, e := range events[:k] {
			st.Apply(e)
		}
		before, err := json.Marshal(st)
		require.NoError(t, err)
		c := st.Clone()
		for _, e := range events[k:] {
			c.Apply(e)
		}
		after, err := json.Marshal(st)
		require.NoError(t, err)
		require.JSONEq(t, string(before), string(after), "folding events %d.. into a clone changed the original", k+1)
	}
}
