package memory_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/store"
)

// carrier appends a step's result that carries a memory decision, as the
// runtime does: on a run of its own world, with the decision's rows in the
// result's transaction.
type carrier struct {
	worlds *store.Worlds
	run    backend.WorldRun
}

func newCarrier(t *testing.T, f *fixture) *carrier {
	t.Helper()
	w := store.NewWorlds(f.db, f.ledger)
	now := time.Now().UTC()
	spec := backend.WorldSpec{ID: backend.NewID(backend.KindWorld), Name: "carry", Domain: backend.DomainReal, Backend: "task",
		Params: json.RawMessage("{}"), CreatedAt: now}
	run := backend.WorldRun{ID: f.run, WorldID: spec.ID, Status: backend.RunRunning, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, w.CreateSpecAndRun(f.ctx, spec, run))
	// A run's stream starts with its task.
	_, err := f.ledger.Append(f.ctx, f.run, 0, backend.Event{Type: "task.received", Payload: json.RawMessage(`{"task":"carry"}`), Reality: backend.ExternalReal})
	require.NoError(t, err)
	return &carrier{worlds: w, run: run}
}

// record appends the result event of c with the decision it carries;
// expect is the stream's seq the append expects (backend.ExpectAny: any).
func (cr *carrier) record(t *testing.T, f *fixture, c memory.Candidate, carried *memory.Carried, expect int64) error {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"step": "a", "ok": true, memory.FieldCarried: carried.Payload})
	require.NoError(t, err)
	e := backend.Event{ID: c.EventID, Type: "step.finished", Payload: payload, Reality: backend.ExternalReal}
	run := cr.run
	run.UpdatedAt = time.Now().UTC()
	_, err = cr.worlds.SaveRun(f.ctx, run, expect, append(append([]backend.Event{}, carried.Before...), e), nil, carried.Write)
	return err
}

func (f *fixture) carry(t *testing.T, c memory.Candidate) *memory.Carried {
	t.Helper()
	p, err := f.store.Decide(f.ctx, c)
	require.NoError(t, err)
	carried, err := p.Carry(f.ctx, p.Decision())
	require.NoError(t, err)
	require.NotNil(t, carried)
	return carried
}

// A decision carried by its cause's event is written in that event's
// transaction: no memory.decided event, the table once before the first,
// the memory's provenance pointing at the event, and it reads and replays
// as a memory.decided does.
func TestACarriedDecisionIsWrittenWithItsCause(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cr := newCarrier(t, f)

	first := f.candidate("The answer to the question is 42.")
	carried := f.carry(t, first)
	require.Len(t, carried.Before, 1, "the policy's table, before the run's first decision")
	require.Equal(t, memory.EvPolicy, carried.Before[0].Type)
	require.NotNil(t, carried.Write)
	require.NoError(t, cr.record(t, f, first, carried, backend.ExpectAny))
	stored := carried.Finish(f.ctx, true)
	require.NotEmpty(t, stored.MemoryID)
	require.Equal(t, first.EventID, stored.EventID)

	m, err := f.repo.Get(f.ctx, stored.MemoryID)
	require.NoError(t, err)
	require.Equal(t, first.EventID, m.Provenance.EventID)
	hits, err := f.store.Retrieve(f.ctx, "the answer to the question", 1, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 1, "the stored memory is in the index")

	// The same text again merges, and the table is not recorded twice.
	again := f.candidate("The answer to the question is 42.")
	carried = f.carry(t, again)
	require.Empty(t, carried.Before)
	require.NoError(t, cr.record(t, f, again, carried, backend.ExpectAny))
	merged := carried.Finish(f.ctx, true)
	require.Equal(t, stored.MemoryID, merged.MemoryID)
	m, err = f.repo.Get(f.ctx, stored.MemoryID)
	require.NoError(t, err)
	require.Equal(t, 1, m.MergedCount)
	require.Len(t, m.Sources, 2)
	require.Equal(t, again.EventID, m.Sources[1].EventID)

	require.Empty(t, f.events(t, memory.EvDecided))
	require.Len(t, f.events(t, memory.EvPolicy), 1)
	decided := f.decided(t)
	require.Len(t, decided, 2)
	require.Equal(t, mp.Store, decided[0].Decision.Action)
	require.Equal(t, mp.Merge, decided[1].Decision.Action)
	require.Equal(t, first.EventID, decided[0].Source.EventID, "a carried decision's cause is its own event")
	require.Equal(t, again.EventID, decided[1].Source.EventID)
	for _, e := range f.events(t, "step.finished") {
		require.True(t, memory.Records(e))
	}
}

// A decision whose cause could not be recorded writes nothing, records its
// table again with the next, and lets the store's next decision go.
func TestACarriedDecisionWhoseCauseIsNotRecordedWritesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cr := newCarrier(t, f)

	c := f.candidate("The build takes nine minutes on two cores.")
	carried := f.carry(t, c)
	err := cr.record(t, f, c, carried, 41) // the stream is not at 41
	require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err), "%v", err)
	d := carried.Finish(f.ctx, false)
	require.NotEmpty(t, d.Skipped)
	if d.MemoryID != "" {
		_, err = f.repo.Get(f.ctx, d.MemoryID)
		require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "the memory was not written without its cause")
	}
	require.Empty(t, f.events(t, memory.EvPolicy))

	// The store is free: the next decision goes, and records the table.
	next := f.candidate("The build takes nine minutes on two cores.")
	carried = f.carry(t, next)
	require.Len(t, carried.Before, 1)
	require.NoError(t, cr.record(t, f, next, carried, backend.ExpectAny))
	require.NotEmpty(t, carried.Finish(f.ctx, true).MemoryID)
	_ = f.decided(t)
}

// Another store on the same database brings a carried decision's memory
// into its index, as it does a memory.decided's.
func TestFollowBringsInACarriedDecision(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cr := newCarrier(t, f)
	other := f.open(t, nil)

	c := f.candidate("Deploys happen on Tuesdays after the review.")
	carried := f.carry(t, c)
	require.NoError(t, cr.record(t, f, c, carried, backend.ExpectAny))
	carried.Finish(f.ctx, true)

	hits, err := other.Retrieve(f.ctx, "deploys happen on tuesdays", 1, memory.Filter{})
	require.NoError(t, err)
	require.Empty(t, hits, "the other store has not followed yet")
	events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: f.run})
	require.NoError(t, err)
	require.NoError(t, other.Follow(f.ctx, events))
	hits, err = other.Retrieve(f.ctx, "deploys happen on tuesdays", 1, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 1)
}

// Only an event's "memory" object is a carried decision.
func TestRecordsTellsACarriedDecisionFromAnotherMemoryField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, payload string
		want         bool
	}{
		{"step.finished", `{"step":"a","memory":{"input":{"criticScore":0.9},"memoryId":"mem_01"}}`, true},
		{memory.EvDecided, `{"input":{}}`, true},
		{"step.finished", `{"step":"a","output":{"memory":"a lot"}}`, false},
		{"step.finished", `{"step":"a","memory":{"input":`, false},
		{memory.EvPolicy, `{"digest":"x","table":{},"memory":{}}`, false},
	} {
		require.Equal(t, c.want, memory.Records(backend.Event{Type: c.typ, Payload: json.RawMessage(c.payload)}), "%s %s", c.typ, c.payload)
	}
}
