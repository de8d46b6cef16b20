package starlark_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"ducklm/backend"
	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

const chooser = `
def init(seed):
    return {"x": 0, "goal": 3}

def step(state, action, rng):
    state["x"] += action
    return state, [], state["x"] == state["goal"]

def observe(state, role):
    return state

def actions(state):
    return [-1, 1] if state["x"] != state["goal"] else []

def score(state):
    return -abs(state["goal"] - state["x"])
`

func TestActionsAndScore(t *testing.T) {
	t.Parallel()
	p := compile(t, chooser, starlark.Limits{})
	require.True(t, p.HasActions())
	require.True(t, p.HasScore())
	w := p.New()
	_, err := w.Initialize(context.Background(), 1)
	require.NoError(t, err)
	ctx := context.Background()
	acts, err := w.Actions(ctx)
	require.NoError(t, err)
	require.Equal(t, []json.RawMessage{json.RawMessage("-1"), json.RawMessage("1")}, acts)
	sc, err := w.Score(ctx)
	require.NoError(t, err)
	require.Equal(t, -3.0, sc)
	before := checkpoint(t, w)
	step(t, w, "1")
	sc, err = w.Score(ctx)
	require.NoError(t, err)
	require.Equal(t, -2.0, sc)
	_, err = w.Actions(ctx)
	require.NoError(t, err)
	// Asking never changes the world: the checkpoint after a step is what
	// the step alone made.
	w2 := p.New()
	require.NoError(t, w2.RestoreBytes(before))
	step(t, w2, "1")
	require.Equal(t, checkpoint(t, w), checkpoint(t, w2))
}

func TestActionsAndScoreAreOptional(t *testing.T) {
	t.Parallel()
	p := compile(t, counterProgram, starlark.Limits{})
	require.False(t, p.HasActions())
	require.False(t, p.HasScore())
	w := p.New()
	_, err := w.Initialize(context.Background(), 1)
	require.NoError(t, err)
	_, err = w.Actions(context.Background())
	requireCode(t, err, backend.EINVALID, "does not define actions(state)")
	_, err = w.Score(context.Background())
	requireCode(t, err, backend.EINVALID, "does not define score(state)")
}

func TestActionsAndScoreErrors(t *testing.T) {
	t.Parallel()
	base := strings.Split(chooser, "def actions")[0]
	for _, c := range []struct {
		extra string
		call  string
		frags []string
	}{
		{"def actions(state):\n    return 3\n", "actions", []string{"actions returned a int; expected a list of actions"}},
		{"def actions(state):\n    return [lambda: 1]\n", "actions", []string{"actions returned a value that is not JSON"}},
		{"def score(state):\n    return \"high\"\n", "score", []string{"score returned a string; expected a number"}},
		{"def score(state):\n    return float(\"nan\")\n", "score", []string{"score returned NaN"}},
		{"def score(state):\n    fail(\"no\")\n", "score", []string{"no", "(in score)"}},
	} {
		p := compile(t, base+c.extra, starlark.Limits{})
		w := p.New()
		_, err := w.Initialize(context.Background(), 1)
		require.NoError(t, err)
		if c.call == "actions" {
			_, err = w.Actions(context.Background())
		} else {
			_, err = w.Score(context.Background())
		}
		requireCode(t, err, backend.EINVALID, c.frags...)
	}
	_, err := starlark.Compile("x.star", []byte(base+"actions = 3\n"), starlark.Limits{})
	requireCode(t, err, backend.EINVALID, "defines actions as a int")
	_, err = starlark.Compile("x.star", []byte(base+"def score(a, b):\n    return 1\n"), starlark.Limits{})
	requireCode(t, err, backend.EINVALID, "score cannot be called as score(state)")
}

// The grid offers the open directions and scores a state by the length of
// the shortest whole path through it (steps taken plus steps still needed),
// negated: higher is better.
func TestGridActionsAndScore(t *testing.T) {
	t.Parallel()
	p := compile(t, string(starlark.BranchingGrid), starlark.Limits{})
	require.True(t, p.HasActions())
	require.True(t, p.HasScore())
	w := p.New()
	ctx := context.Background()
	_, err := w.Initialize(ctx, 3)
	require.NoError(t, err)
	acts, err := w.Actions(ctx)
	require.NoError(t, err)
	require.Equal(t, []json.RawMessage{json.RawMessage(`"E"`), json.RawMessage(`"S"`)}, acts, "N and W leave the grid at (0,0)")
	sc, err := w.Score(ctx)
	require.NoError(t, err)
	require.Equal(t, -24.0, sc, "the shortest path from (0,0) is 24 moves")

	patched := strings.Replace(string(w.State()), `"noise":0.2`, `"noise":0`, 1)
	require.NoError(t, w.ReplaceState(json.RawMessage(patched)))
	step(t, w, `"E"`) // (1,0): E is a wall
	acts, err = w.Actions(ctx)
	require.NoError(t, err)
	require.Equal(t, []json.RawMessage{json.RawMessage(`"S"`), json.RawMessage(`"W"`)}, acts)
	sc, err = w.Score(ctx)
	require.NoError(t, err)
	require.Equal(t, -24.0, sc, "one step along a shortest path keeps the whole path at 24")
	step(t, w, `"W"`) // back: a detour of two moves
	sc, err = w.Score(ctx)
	require.NoError(t, err)
	require.Equal(t, -26.0, sc)
	for !w.Done() {
		step(t, w, `null`)
	}
	acts, err = w.Actions(ctx)
	require.NoError(t, err)
	require.Empty(t, acts, "a world at its goal offers nothing")
	sc, err = w.Score(ctx)
	require.NoError(t, err)
	require.Equal(t, -26.0, sc)
}
