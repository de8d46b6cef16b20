package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
)

// countingEvents counts the loop's reads of the ledger.
type countingEvents struct {
	*store.Ledger
	queries atomic.Int64
}

func (e *countingEvents) Query(ctx context.Context, q backend.EventQuery) ([]backend.Event, error) {
	e.queries.Add(1)
	return e.Ledger.Query(ctx, q)
}

// foreignWriter records a decision on the run's stream through the ledger
// for each scored step, as the memory store does.
type foreignWriter struct {
	ledger *store.Ledger
	mu     sync.Mutex
	n      int
}

func (w *foreignWriter) Decide(_ context.Context, c memory.Candidate) (runtime.MemoryVerdict, error) {
	return foreignVerdict{w: w, c: c}, nil
}

// foreignVerdict stores: applying it appends to the run's stream.
type foreignVerdict struct {
	w *foreignWriter
	c memory.Candidate
}

func (v foreignVerdict) Decision() backend.Decision {
	return backend.NewDecision(backend.DecisionStoreMemory, struct{}{}, 1, "store")
}

func (v foreignVerdict) Drop() {}

func (v foreignVerdict) Apply(ctx context.Context, _ backend.Decision) (memory.Decided, error) {
	_, err := v.w.ledger.Append(ctx, v.c.RunID, backend.ExpectAny,
		backend.Event{Type: memory.EvDecided, Payload: []byte(`{}`), Reality: backend.ExternalReal, WorldLocalTime: v.c.Tick})
	v.w.mu.Lock()
	v.w.n++
	v.w.mu.Unlock()
	return memory.Decided{}, err
}

// Another writer of a run's stream in this process (the memory store) no
// longer makes the driver read the ledger after each of its events, and a
// step's checkpoint still records the run's clock at its seq.
func TestAnotherWritersEventsNeitherMakeTheLoopReadTheLedgerNorSkewItsClock(t *testing.T) {
	t.Parallel()
	var events *countingEvents
	var writer *foreignWriter
	f := setup(t, func(d *runtime.Deps) {
		events = &countingEvents{Ledger: d.Events.(*store.Ledger)}
		writer = &foreignWriter{ledger: events.Ledger}
		d.Events, d.Memory = events, writer
	})
	const n = 12
	var nodes []backend.TaskNode
	for i := 0; i < n; i++ {
		var deps []string
		if i > 0 {
			deps = []string{string(rune('a' + i - 1))}
		}
		nodes = append(nodes, step(string(rune('a'+i)), "file_write", `{"path":"x.txt","content":"the answer is 42"}`, deps...))
	}
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "write", ApprovalMode: runtime.AutoSandboxed, Plan: plan(nodes...)})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(f.ctx, 2*time.Minute)
	defer cancel()
	var st *runtime.RunState
	var reads int64
	for {
		require.NoError(t, f.rt.Wait(ctx, run.ID))
		reads = events.queries.Load() // the driver's reads, before this test's own
		st, _, err = f.rt.Load(f.ctx, run.ID)
		require.NoError(t, err)
		if st.Status.Terminal() {
			break
		}
		require.NoError(t, ctx.Err(), "the run did not end")
		time.Sleep(5 * time.Millisecond) // the driver has not been registered yet
	}
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	writer.mu.Lock()
	require.Equal(t, n, writer.n)
	writer.mu.Unlock()
	require.Less(t, reads, int64(n/2), "the driver read the ledger %d times for a %d-step run", reads, n)

	// Every checkpoint record's clock is the fold's at its seq.
	all := f.events(t, run.ID)
	require.Equal(t, n, count(all, memory.EvDecided))
	cps, err := f.store.ListCheckpoints(f.ctx, run.ID)
	require.NoError(t, err)
	require.Greater(t, len(cps), n)
	for _, cp := range cps {
		fold := runtime.NewRunState(run.ID, st.WorldID)
		for _, e := range all {
			if e.Seq > cp.LedgerSeq {
				break
			}
			fold.Apply(e)
		}
		require.Equal(t, fold.Ticks, cp.WorldLocalTime, "checkpoint at seq %d", cp.LedgerSeq)
	}
}
