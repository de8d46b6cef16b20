package worlds_test

// The acceptance tests of deliberation on the Branching Grid: without noise,
// rounds until done walk a shortest path (checked against a breadth-first
// search written here); with noise, a choice on the mean of K seeds beats a
// choice on one seed over 100 seeds. They live here, not beside the package,
// because they are long and need no race detector.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/deliberation"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

type delibFixture struct {
	ctx    context.Context
	worlds *world.Service
	delib  *deliberation.Service
}

func openDeliberation(t *testing.T) delibFixture {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	ledger := store.NewLedger(db)
	worlds := world.New(store.NewWorlds(db, ledger), ledger, blobs, starlark.DefaultLimits(), worldproc.Shared())
	return delibFixture{ctx: context.Background(), worlds: worlds, delib: deliberation.New(worlds, ledger)}
}

// gridRun creates a Branching Grid and forks it with patch (noise, a start
// position), returning the fork's run: the parent to deliberate.
func gridRun(t *testing.T, f delibFixture, seed int64, patch string) backend.WorldRun {
	t.Helper()
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: seed})
	require.NoError(t, err)
	_, _, child, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: run.LatestCheckpointID,
		Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(patch)})
	require.NoError(t, err)
	return child
}

type gridMap struct {
	Size  int      `json:"size"`
	Pos   [2]int   `json:"pos"`
	Goal  [2]int   `json:"goal"`
	Walls [][2]int `json:"walls"`
	Steps int      `json:"steps"`
}

func readMap(t *testing.T, f delibFixture, runID string) gridMap {
	t.Helper()
	raw, err := f.worlds.State(f.ctx, runID)
	require.NoError(t, err)
	var g gridMap
	require.NoError(t, json.Unmarshal(raw, &g))
	return g
}

// bfs is the test's own breadth-first search over the grid: the fewest moves
// from pos to goal.
func bfs(g gridMap) int {
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

// Without noise, deliberating until done walks a shortest path: as many
// moves as the test's own breadth-first search says, from two starts and
// with both strategies.
func TestUntilDoneOnTheNoiselessGridIsOptimal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		patch string
		opt   deliberation.Options
	}{
		{"beam from the corner", `{"params":{"noise":0}}`, deliberation.Options{Strategy: deliberation.Beam, Width: 2, Depth: 3, Budget: 24}},
		{"beam from the middle", `{"params":{"noise":0},"pos":[3,7]}`, deliberation.Options{Strategy: deliberation.Beam, Width: 3, Depth: 2, Budget: 24}},
		{"mcts from the corner", `{"params":{"noise":0}}`, deliberation.Options{Strategy: deliberation.MCTS, Depth: 4, Budget: 16}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := openDeliberation(t)
			run := gridRun(t, f, 1, c.patch)
			want := bfs(readMap(t, f, run.ID))
			require.Positive(t, want)
			opt := c.opt
			opt.RunID, opt.UntilDone, opt.Apply = run.ID, true, true
			res, err := f.delib.Deliberate(f.ctx, opt)
			require.NoError(t, err)
			require.True(t, res.Done, "the goal is reached")
			require.Len(t, res.Rounds, want, "one round per move, as many moves as the shortest path")
			end := readMap(t, f, run.ID)
			require.Equal(t, end.Goal, end.Pos)
			require.Equal(t, want, end.Steps-readGridAt(t, f, run))
			require.Equal(t, backend.RunCompleted, res.Run.Status)
			for i, r := range res.Rounds {
				require.NotEmpty(t, r.Candidates)
				require.Equal(t, r.Chosen, r.Candidates[0].Action)
				require.LessOrEqual(t, r.Budget.Used, opt.Budget)
				if i > 0 {
					require.Equal(t, res.Rounds[i-1].DeliberationIndex+1, r.DeliberationIndex)
					require.Equal(t, res.Rounds[i-1].ParentTime+1, r.ParentTime)
				}
			}
			recorded, err := f.delib.Rounds(f.ctx, run.ID)
			require.NoError(t, err)
			require.Len(t, recorded, want)
		})
	}
}

// readGridAt is the steps the parent had taken before deliberating.
func readGridAt(t *testing.T, f delibFixture, run backend.WorldRun) int {
	t.Helper()
	return int(run.WorldLocalTime)
}

// With noise, a choice made on the mean over K seeds picks the action that
// is better in expectation more often than a choice made on one seed. At
// (5,3), in the corridor between two walls, only N and S are open and only S
// is on a shortest path; but when the one seed slips, N often lands better.
func TestExpectedScoreBeatsOneSeedUnderNoise(t *testing.T) {
	t.Parallel()
	f := openDeliberation(t)
	base := gridRun(t, f, 1, `{"params":{"noise":0.5},"pos":[5,3]}`)
	cp, err := f.worlds.Checkpoint(f.ctx, base.ID)
	require.NoError(t, err)
	right := json.RawMessage(`"S"`)
	var single, expected int
	const trials = 100
	// Trials run four at a time: a deliberation waits on its commits most
	// of the time, so the disk and the cores are shared better.
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for seed := range int64(trials) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, _, run, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeSeedChange,
				Delta: json.RawMessage(`{"seed":` + itoa(seed) + `}`)})
			if !assert.NoError(t, err) {
				return
			}
			for _, k := range []int{1, 10} {
				res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Depth: 1, Seeds: k, Budget: 100})
				if !assert.NoError(t, err) {
					return
				}
				r := res.Rounds[0]
				assert.Len(t, r.Seeds, k)
				assert.Len(t, r.Candidates, 2, "N and S are open at (5,3)")
				if string(r.Chosen) == string(right) {
					mu.Lock()
					if k == 1 {
						single++
					} else {
						expected++
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed())
	t.Logf("right choices out of %d: one seed %d, ten seeds %d", trials, single, expected)
	// Expected about 50 against 90 (see above); the margins are several
	// standard deviations of a 100-trial count.
	require.Greater(t, expected, single+15)
	require.GreaterOrEqual(t, expected, 75)
}

func itoa(i int64) string {
	b, _ := json.Marshal(i)
	return string(b)
}
