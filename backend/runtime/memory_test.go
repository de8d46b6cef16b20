package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/runtime"
)

type memorySpy struct {
	mu    sync.Mutex
	seen  []memory.Candidate
	fails bool
}

func (m *memorySpy) Consider(ctx context.Context, c memory.Candidate) (memory.Decided, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, c)
	if m.fails {
		return memory.Decided{}, errors.New("the memory store is broken")
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
