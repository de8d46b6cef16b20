package world_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

var _ world.Store = (*store.Worlds)(nil)

type fixture struct {
	ctx    context.Context
	db     *store.DB
	ledger *store.Ledger
	blobs  *blob.Store
	worlds *world.Service
	dir    string
}

func setup(t testing.TB) fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	ledger := store.NewLedger(db)
	return fixture{
		ctx: context.Background(), db: db, ledger: ledger, blobs: blobs, dir: dir,
		worlds: world.New(store.NewWorlds(db, ledger), ledger, blobs, starlark.DefaultLimits(), worldproc.Shared()),
	}
}

// reopen returns a fresh service on the same data: nothing cached in memory.
func (f fixture) reopen() *world.Service {
	return world.New(store.NewWorlds(f.db, f.ledger), f.ledger, f.blobs, starlark.DefaultLimits(), worldproc.Shared())
}

// counter is a small random world: a counter plus a draw from the rng.
const counter = `
def init(seed):
    return {"n": 0, "sum": 0, "params": {"inc": 1}}

def step(state, action, rng):
    d = rng.randint(0, 9)
    s = {"n": state["n"] + state["params"]["inc"], "sum": state["sum"] + d, "params": state["params"]}
    if action != None and type(action) == "dict" and action.get("add"):
        s["sum"] = s["sum"] + action["add"]
    return s, [{"drew": d}]

def observe(state, role):
    if role == "public":
        return {"n": state["n"]}
    return state
`

func create(t testing.TB, f fixture, seed int64) (backend.WorldSpec, backend.WorldRun) {
	t.Helper()
	spec, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "counter", Program: []byte(counter), Seed: seed})
	require.NoError(t, err)
	return spec, run
}

func steps(t testing.TB, f fixture, runID string, n int) world.StepOutcome {
	t.Helper()
	var out world.StepOutcome
	for i := 0; i < n; i++ {
		var err error
		out, err = f.worlds.Step(f.ctx, runID, nil)
		require.NoError(t, err)
	}
	return out
}

func state(t testing.TB, f fixture, runID string) map[string]any {
	t.Helper()
	raw, err := f.worlds.State(f.ctx, runID)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func sqlite_worlds(f fixture) *store.Worlds { return store.NewWorlds(f.db, f.ledger) }
