package memory_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/store"
)

type fixture struct {
	ctx    context.Context
	dir    string
	db     *store.DB
	ledger *store.Ledger
	repo   *store.Memories
	store  *memory.Store
	run    string
}

// setup opens a fresh database and a store on it with the built-in
// embedder and snapshots in dir/memory.
func setup(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ledger := store.NewLedger(db)
	f := &fixture{ctx: context.Background(), dir: dir, db: db, ledger: ledger, repo: store.NewMemories(db, ledger), run: backend.NewID(backend.KindRun)}
	f.store = f.open(t, nil)
	return f
}

// open opens another store on the fixture's database (emb nil: built-in).
func (f *fixture) open(t *testing.T, emb memory.Embedder) *memory.Store {
	t.Helper()
	s, err := memory.Open(f.ctx, memory.Options{Repo: f.repo, Embedder: emb, SnapshotDir: filepath.Join(f.dir, "memory")})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// candidate is a well-judged external fact from the fixture's run.
func (f *fixture) candidate(text string) memory.Candidate {
	return memory.Candidate{Text: text, Type: mp.Fact, RunID: f.run, EventID: backend.NewID(backend.KindEvent), CriticScore: 0.9, RuntimeWeight: 0.8}
}

func (f *fixture) consider(t *testing.T, c memory.Candidate) memory.Decided {
	t.Helper()
	d, err := f.store.Consider(f.ctx, c)
	require.NoError(t, err)
	return d
}

// events returns the run's events of type typ.
func (f *fixture) events(t *testing.T, typ string) []backend.Event {
	t.Helper()
	evs, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: f.run, Types: []string{typ}})
	require.NoError(t, err)
	return evs
}

// decided reads the run's memory.decided payloads (their tables resolved)
// and checks that each replays: the recorded table applied to the recorded
// input gives the recorded decision.
func (f *fixture) decided(t *testing.T) []memory.DecidedPayload {
	t.Helper()
	evs, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: f.run})
	require.NoError(t, err)
	out, err := memory.ReadDecided(evs)
	require.NoError(t, err)
	for _, p := range out {
		require.NotNil(t, p.Table)
		require.Equal(t, p.Decision, p.Table.Decide(p.Input), "the decision replays from its event")
	}
	return out
}

func decodeJSON(data []byte, v any) error { return json.Unmarshal(data, v) }
