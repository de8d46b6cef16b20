package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
)

// realMemory is the memory store on the fixture's database, opened after
// setup (the runtime's MemoryWriter, as the service wires it); slow delays
// each verdict.
type realMemory struct {
	s    *memory.Store
	slow time.Duration
	n    atomic.Int64
}

func (m *realMemory) Decide(ctx context.Context, c memory.Candidate) (runtime.MemoryVerdict, error) {
	m.n.Add(1)
	time.Sleep(m.slow)
	return m.s.Decide(ctx, c)
}

func withRealMemory(t *testing.T, slow time.Duration) (*fixture, *realMemory) {
	t.Helper()
	m := &realMemory{slow: slow}
	f := setup(t, func(d *runtime.Deps) { d.Memory = m })
	s, err := memory.Open(f.ctx, memory.Options{Repo: store.NewMemories(f.db, f.ledger), SnapshotDir: filepath.Join(f.dir, "memory")})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	m.s = s
	return f, m
}

// readTwice is two steps that read the same file: the first result is
// stored as a memory, the second merged into it.
func readTwice(t *testing.T) (*backend.TaskGraph, string) {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("The deploy key rotates every 90 days."), 0o600))
	return plan(step("a", "file_read", `{"path":"notes.txt"}`), step("b", "file_read", `{"path":"notes.txt"}`, "a")), ws
}

// A step's result carries its memory decision: one event and one commit
// for the result, its critique, its checkpoint and the memory written, no
// memory.decided event, and the decisions read and replay as before.
func TestAResultCarriesItsMemoryDecision(t *testing.T) {
	t.Parallel()
	f, m := withRealMemory(t, 0)
	g, ws := readTwice(t)
	_, deferred0 := f.db.Commits()
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "remember the key's rotation", ApprovalMode: runtime.AutoSandboxed,
		Plan: g, Workspace: ws})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.EqualValues(t, 2, m.n.Load())

	events := f.events(t, run.ID)
	require.Zero(t, count(events, memory.EvDecided), "no memory.decided: the results carry the decisions")
	require.Equal(t, 1, count(events, memory.EvPolicy))
	var results []backend.Event
	for i, e := range events {
		if e.Type == runtime.EvStepFinished {
			results = append(results, e)
			require.True(t, memory.Records(e), "%s", e.Payload)
		}
		if e.Type == memory.EvPolicy {
			require.Equal(t, runtime.EvStepFinished, events[i+1].Type, "the table is recorded in the first result's commit, just before it")
		}
	}
	require.Len(t, results, 2)
	decided, err := memory.ReadDecided(events)
	require.NoError(t, err)
	require.Len(t, decided, 2)
	require.Equal(t, results[0].ID, decided[0].Source.EventID)
	require.Equal(t, results[1].ID, decided[1].Source.EventID)
	require.Equal(t, decided[0].MemoryID, decided[1].MemoryID, "the second read merged into the first's memory")
	for _, d := range decided {
		require.Equal(t, d.Decision, d.Table.Decide(d.Input), "the decision replays")
	}
	mem, err := store.NewMemories(f.db, f.ledger).Get(f.ctx, decided[0].MemoryID)
	require.NoError(t, err)
	require.Len(t, mem.Sources, 2)
	require.Equal(t, results[0].ID, mem.Sources[0].EventID)
	require.Equal(t, results[1].ID, mem.Sources[1].EventID)

	// The record of each step keeps its result, not the decision.
	for _, id := range []string{"a", "b"} {
		require.Nil(t, st.Steps[id].Result.Memory)
		require.NotNil(t, st.Steps[id].Critique)
	}
	// A quick read-only step is one synced commit, its start riding on its
	// result's: the memory adds none, deferred or synced.
	_, deferred := f.db.Commits()
	require.EqualValues(t, 0, deferred-deferred0, "the starts ride on the results")
}

// A verdict that is not ready in time does not hold the result: the result
// is recorded, and the decision follows as a memory.decided event caused
// by it.
func TestASlowMemoryVerdictFollowsTheResult(t *testing.T) {
	t.Parallel()
	f, _ := withRealMemory(t, 200*time.Millisecond)
	g, ws := readTwice(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "remember slowly", ApprovalMode: runtime.AutoSandboxed,
		Plan: g, Workspace: ws})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	events := f.events(t, run.ID)
	require.Equal(t, 2, count(events, memory.EvDecided))
	byID := map[string]backend.Event{}
	for _, e := range events {
		byID[e.ID] = e
		if e.Type == runtime.EvStepFinished {
			var p map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			require.NotContains(t, p, memory.FieldCarried)
		}
	}
	for _, e := range events {
		if e.Type == memory.EvDecided {
			require.Equal(t, runtime.EvStepFinished, byID[e.CausationID].Type)
		}
	}
	decided, err := memory.ReadDecided(events)
	require.NoError(t, err)
	require.Len(t, decided, 2)
}
