package deliberation_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/deliberation"
	"ducklm/backend/world"
)

// letters is a world where every path of actions is its own state (no two
// branches meet, none ends, none fails) and every state offers the same
// three actions: the branches a search explores at each depth follow from
// its shape alone. A path's score is the sum of its letters' weights.
const letters = `
W = {"a": 3, "b": 1, "c": 2}
def init(seed):
    return {"path": "", "score": 0}
def step(state, action, rng):
    return {"path": state["path"] + action, "score": state["score"] + W[action]}, [], False
def observe(state, role):
    return state
def actions(state):
    return ["a", "b", "c"]
def score(state):
    return state["score"]
`

func newWorld(t *testing.T, f fixture, name, program string) string {
	t.Helper()
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: name, Program: []byte(program), Seed: 1})
	require.NoError(t, err)
	return run.ID
}

// A beam of width W expands exactly the W best nodes of each level: 3
// branches at depth 1, then 3·W at every depth after, the W best of depth 1
// their parents.
func TestBeamKeepsExactlyWidthNodesPerLevel(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, width := range []int{1, 2} {
		res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: newWorld(t, f, "letters", letters),
			Strategy: deliberation.Beam, Width: width, Depth: 3, Budget: 200, Seeds: 1})
		require.NoError(t, err)
		r := res.Rounds[0]
		perDepth := map[int]int{}
		scoreOf := map[string]float64{}
		parents := map[string]bool{}
		for _, b := range r.Branches {
			perDepth[b.Depth]++
			scoreOf[b.WorldID] = b.Score
			if b.Depth == 2 {
				parents[b.Parent] = true
			}
		}
		require.Equal(t, map[int]int{1: 3, 2: 3 * width, 3: 3 * width}, perDepth, "width %d", width)
		// The parents of depth 2 are the best of depth 1: a (3), then c (2).
		var got []float64
		for p := range parents {
			got = append(got, scoreOf[p])
		}
		require.ElementsMatch(t, []float64{3, 2}[:width], got, "width %d", width)
	}
}

// trap is a world whose best line starts with the action that looks worst:
// "x" scores 1 at once and nothing more, "y" scores 0 until "z" follows it.
const trap = `
def init(seed):
    return {"path": ""}
def step(state, action, rng):
    p = state["path"] + action
    return {"path": p}, [], len(p) >= 3
def observe(state, role):
    return state
def actions(state):
    return ["x", "y", "z"]
def score(state):
    p = state["path"]
    if p.startswith("yz"):
        return 10
    if p.startswith("x"):
        return 1
    return 0
`

// MCTS must look past the first actions: the line worth 10 is two deep,
// under a first action worth less than another at depth 1.
func TestMCTSFindsABestLineBelowTheFirstActions(t *testing.T) {
	t.Parallel()
	f := setup(t)
	res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: newWorld(t, f, "trap", trap),
		Strategy: deliberation.MCTS, Depth: 3, Budget: 40, Seeds: 1})
	require.NoError(t, err)
	r := res.Rounds[0]
	require.JSONEq(t, `"y"`, string(r.Chosen))
	require.NotEmpty(t, r.Candidates)
	best := r.Candidates[0]
	require.JSONEq(t, `"y"`, string(best.Action))
	require.EqualValues(t, 10, best.Score)
	require.GreaterOrEqual(t, len(best.Line), 2)
	require.JSONEq(t, `"z"`, string(best.Line[1]))
	deeper := 0
	for _, b := range r.Branches {
		if b.Depth > 1 {
			deeper++
		}
	}
	require.Positive(t, deeper)
}
