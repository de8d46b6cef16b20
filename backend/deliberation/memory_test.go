package deliberation_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/deliberation"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

// greedy is a world where action "b" scores more but, from the second
// move on, allocates without end: the branch that tries it must fail alone.
const greedy = `
def init(seed):
    return {"n": 0, "score": 0}
def step(state, action, rng):
    if action == "b" and state["n"] >= 1:
        s = "x"
        while True:
            s = s + s
    gain = 2 if action == "b" else 1
    n = state["n"] + 1
    return {"n": n, "score": state["score"] + gain}, [], n >= 4
def observe(state, role):
    return state
def actions(state):
    return ["a", "b"]
def score(state):
    return state["score"]
`

// TestBranchOutgrowingItsMemoryFailsAloneInADeliberation: under a 64 MiB
// limit, the branches that run out of memory are failed hypotheses with the
// limit's sentence; the round still ranks the others and the parent run is
// untouched by them.
func TestBranchOutgrowingItsMemoryFailsAloneInADeliberation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	ledger := store.NewLedger(db)
	pool := worldproc.New(worldproc.Options{Workers: 2})
	t.Cleanup(func() { pool.Close() })
	limits := starlark.Limits{MaxSteps: 1 << 40, MaxMemoryBytes: 64 << 20}
	worlds := world.New(store.NewWorlds(db, ledger), ledger, blobs, limits, pool)
	delib := deliberation.New(worlds, ledger)

	_, run, err := worlds.Create(ctx, world.NewWorld{Name: "greedy", Program: []byte(greedy), Seed: 1})
	require.NoError(t, err)
	headBefore, err := ledger.Head(ctx, run.ID)
	require.NoError(t, err)

	res, err := delib.Deliberate(ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.Beam, Width: 2, Depth: 3, Budget: 20})
	require.NoError(t, err)
	round := res.Rounds[0]
	var failed []string
	for _, c := range round.Candidates {
		if c.Failed != "" {
			failed = append(failed, c.Failed)
		}
	}
	// Every line through "b" fails at its second move, so the best line is
	// all "a" (or "b" once, first); some branch failed at the limit.
	require.NotEmpty(t, round.Chosen)
	found := false
	for _, b := range round.Branches {
		r, err := worlds.Run(ctx, b.RunID)
		require.NoError(t, err)
		if r.Status == backend.RunFailed {
			require.Contains(t, r.Error, "memory limit of 64 MiB")
			require.Contains(t, r.Error, "during step")
			require.Equal(t, r.Error, b.Failed)
			found = true
		}
	}
	require.True(t, found, "a branch that tried b twice failed at the memory limit (candidates failed: %q)", failed)

	headAfter, err := ledger.Head(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, headBefore, headAfter, "the parent run is untouched by its branches")
	parent, err := worlds.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunRunning, parent.Status)
}
