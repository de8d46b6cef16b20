package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/planner"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
)

type memorySpy struct {
	mu      sync.Mutex
	seen    []memory.Candidate
	applied []backend.Decision
	fails   bool
	// deferred counts the applies whose context deferred its sync.
	deferred int
	// ledger, when set, records each applied decision as the memory store
	// does: a memory.decided event caused by the step's result.
	ledger *store.Ledger
}

func (m *memorySpy) Decide(ctx context.Context, c memory.Candidate) (runtime.MemoryVerdict, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, c)
	if m.fails {
		return nil, errors.New("the memory store is broken")
	}
	return &spyVerdict{spy: m, c: c}, nil
}

// spyVerdict decides to store and records what the loop applied.
type spyVerdict struct {
	spy *memorySpy
	c   memory.Candidate
}

func (v *spyVerdict) Decision() backend.Decision {
	return backend.NewDecision(backend.DecisionStoreMemory, map[string]string{"action": "store"}, 1, "worth keeping")
}

func (v *spyVerdict) Drop() {}

func (v *spyVerdict) Apply(ctx context.Context, d backend.Decision) (memory.Decided, error) {
	v.spy.mu.Lock()
	defer v.spy.mu.Unlock()
	v.spy.applied = append(v.spy.applied, d)
	if backend.SyncDeferred(ctx) {
		v.spy.deferred++
	}
	if v.spy.ledger != nil {
		e := backend.Event{Type: memory.EvDecided, Payload: []byte(`{}`), Reality: backend.ExternalReal, CausationID: v.c.EventID}
		if _, err := v.spy.ledger.Append(ctx, v.c.RunID, backend.ExpectAny, e); err != nil {
			return memory.Decided{}, err
		}
	}
	return memory.Decided{}, nil
}

func TestScoredResultsAreOfferedToMemoryAndFailuresDoNotStopTheRun(t *testing.T) {
	t.Parallel()
	for _, fails := range []bool{false, true} {
		spy := &memorySpy{fails: fails}
		f := setup(t, func(d *runtime.Deps) { d.Memory = spy })
		run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "remember", ApprovalMode: runtime.AutoSandboxed,
			Plan: plan(step("w", "file_write", `{"path":"m.txt","content":"the answer is 42"}`), step("r", "file_read", `{"path":"m.txt"}`, "w"))})
		require.NoError(t, err)
		st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
		require.Equal(t, backend.RunCompleted, st.Status, "a memory failure skips the write; the run goes on")
		spy.mu.Lock()
		require.Len(t, spy.seen, 2)
		if !fails {
			// The loop applied the policy's store_memory decision, as the policy gave it.
			require.Len(t, spy.applied, 2)
			for _, d := range spy.applied {
				require.Equal(t, backend.DecisionStoreMemory, d.Type)
				require.Equal(t, "worth keeping", d.Reason)
			}
		}
		for _, c := range spy.seen {
			require.Equal(t, run.ID, c.RunID)
			e, err := f.ledger.Get(f.ctx, c.EventID)
			require.NoError(t, err, "provenance points at the step's result event")
			require.Equal(t, runtime.EvStepFinished, e.Type)
			require.Positive(t, c.CriticScore)
		}
		spy.mu.Unlock()
	}
}

// recordingPlanner is the offline planner, keeping the requests it gets.
type recordingPlanner struct {
	mu   sync.Mutex
	seen []planner.Request
}

func (p *recordingPlanner) Plan(ctx context.Context, req planner.Request) (backend.Decision, error) {
	p.mu.Lock()
	p.seen = append(p.seen, req)
	p.mu.Unlock()
	return planner.Offline{}.Plan(ctx, req)
}

func TestRetrievedMemoriesReachThePlanner(t *testing.T) {
	t.Parallel()
	rec := &recordingPlanner{}
	var queries []string
	var mu sync.Mutex
	f := setup(t, func(d *runtime.Deps) {
		d.Offline = rec
		d.Memories = func(ctx context.Context, query string) ([]string, error) {
			mu.Lock()
			queries = append(queries, query)
			mu.Unlock()
			return []string{"(fact) the build server is at 10.0.0.7"}, nil
		}
	})
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "$ echo hi", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	f.approveAll(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.seen)
	require.Contains(t, rec.seen[0].Context, "Memory: (fact) the build server is at 10.0.0.7\n",
		"what the memory store retrieved is in the planner's context")
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, queries, "$ echo hi", "retrieval asks about the task")
}

// TestMemoryDecisionsALostCommitMissesAreMadeAgain: a memory decision's
// commit does not sync (the run's next synced commit makes it durable), so
// a crash may lose it; the run taken up again offers each finished step
// whose decision is not in the ledger once more, and only those. The spy
// plays a lost commit by not recording its decisions at all.
func TestMemoryDecisionsALostCommitMissesAreMadeAgain(t *testing.T) {
	t.Parallel()
	for _, recorded := range []bool{true, false} {
		spy := &memorySpy{}
		f := setup(t, func(d *runtime.Deps) { d.Memory = spy })
		if recorded {
			spy.ledger = f.ledger
		}
		run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "remember, then die", ApprovalMode: runtime.AutoSandboxed,
			Plan: plan(step("n", "noop", `{}`), step("h", "hang", `{}`, "n"))})
		require.NoError(t, err)
		f.approveAll(t, run.ID)
		<-f.hang.entered
		spy.mu.Lock()
		require.NotEmpty(t, spy.seen, "the first step's result was offered")
		require.Equal(t, len(spy.applied), spy.deferred, "a decision's commit does not sync")
		first := spy.seen[0].EventID
		spy.mu.Unlock()

		// The process dies in the hang; the old controller is abandoned in
		// it, as a killed process would be.
		rt := runtime.New(f.deps)
		f.rtMu.Lock()
		f.rt = rt
		f.rtMu.Unlock()
		t.Cleanup(rt.Close)
		_, err = rt.ResumeAll(f.ctx)
		require.NoError(t, err)
		// The hang, in doubt, is approved again and passes.
		st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
		require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
		spy.mu.Lock()
		require.Equal(t, first, spy.seen[0].EventID)
		var again int
		for _, c := range spy.seen[1:] {
			if c.EventID == first {
				again++
			}
		}
		// Without its record (a commit a crash lost), the decision is made
		// again whenever the run is taken up: after the hang's approval,
		// after the restart, after the re-approval.
		if recorded {
			require.Zero(t, again, "a decision in the ledger is not made again")
		} else {
			require.GreaterOrEqual(t, again, 2, "the decision the crash lost is made again")
		}
		require.Len(t, spy.seen, 2+again, "and the hang's result is offered")
		spy.mu.Unlock()
	}
}
