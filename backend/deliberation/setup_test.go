package deliberation_test

import (
	"context"
	"encoding/json"
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

type fixture struct {
	ctx    context.Context
	ledger *store.Ledger
	worlds *world.Service
	delib  *deliberation.Service
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
	worlds := world.New(store.NewWorlds(db, ledger), ledger, blobs, starlark.DefaultLimits(), worldproc.Shared())
	return fixture{ctx: context.Background(), ledger: ledger, worlds: worlds, delib: deliberation.New(worlds, ledger)}
}

// grid creates a Branching Grid and forks it with the state patch (noise,
// a start position, ...), returning the fork's run: the parent to
// deliberate.
func grid(t testing.TB, f fixture, seed int64, patch string) backend.WorldRun {
	t.Helper()
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: seed})
	require.NoError(t, err)
	_, _, child, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: run.LatestCheckpointID,
		Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(patch)})
	require.NoError(t, err)
	return child
}

type gridState struct {
	Size  int      `json:"size"`
	Pos   [2]int   `json:"pos"`
	Goal  [2]int   `json:"goal"`
	Walls [][2]int `json:"walls"`
	Steps int      `json:"steps"`
}

func readGrid(t testing.TB, f fixture, runID string) gridState {
	t.Helper()
	raw, err := f.worlds.State(f.ctx, runID)
	require.NoError(t, err)
	var g gridState
	require.NoError(t, json.Unmarshal(raw, &g))
	return g
}

// bfs is the test's own breadth-first search over the grid: the fewest moves
// from pos to goal.
func bfs(g gridState) int {
	wall := map[[2]int]bool{}
	for _, w := range g.Walls {
		wall[w] = true
	}
	dist := map[[2]int]int{g.Pos: 0}
	queue := [][2]int{g.Pos}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == g.Goal {
			return dist[c]
		}
		for _, d := range [][2]int{{0, -1}, {1, 0}, {0, 1}, {-1, 0}} {
			n := [2]int{c[0] + d[0], c[1] + d[1]}
			if n[0] < 0 || n[1] < 0 || n[0] >= g.Size || n[1] >= g.Size || wall[n] {
				continue
			}
			if _, ok := dist[n]; !ok {
				dist[n] = dist[c] + 1
				queue = append(queue, n)
			}
		}
	}
	return -1
}
