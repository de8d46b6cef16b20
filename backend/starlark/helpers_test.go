package starlark_test

import (
	"context"
	"encoding/json"
	"testing"

	"ducklm/backend"
	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

// compile compiles src or fails the test.
func compile(t testing.TB, src string, limits starlark.Limits) *starlark.Program {
	t.Helper()
	p, err := starlark.Compile("test.star", []byte(src), limits)
	require.NoError(t, err)
	return p
}

// newWorld compiles src and initializes a world of it with seed.
func newWorld(t testing.TB, src string, seed uint64) *starlark.World {
	t.Helper()
	w := compile(t, src, starlark.Limits{}).New()
	_, err := w.Initialize(context.Background(), seed)
	require.NoError(t, err)
	return w
}

// requireCode asserts err is a *backend.Error with code and a message that
// contains every fragment.
func requireCode(t testing.TB, err error, code string, fragments ...string) {
	t.Helper()
	require.Error(t, err)
	var be *backend.Error
	require.ErrorAs(t, err, &be, "error %v is not a *backend.Error", err)
	require.Equal(t, code, be.Code, "error: %v", err)
	for _, f := range fragments {
		require.Contains(t, be.Message, f)
	}
}

func step(t testing.TB, w *starlark.World, action string) backend.StepResult {
	t.Helper()
	res, err := w.Step(context.Background(), json.RawMessage(action))
	require.NoError(t, err)
	return res
}

func checkpoint(t testing.TB, w *starlark.World) []byte {
	t.Helper()
	b, err := w.CheckpointBytes()
	require.NoError(t, err)
	return b
}

// counterProgram is a small randomized world used beside the grid: a random
// walk over a dict of counters with floats, nested lists and events.
const counterProgram = `
def init(seed, rng):
    return {"n": 0, "x": rng.normal(0, 1), "hist": [], "bag": {"a": 1}}

def step(state, action, rng):
    state["n"] += 1
    k = rng.choice(["a", "b", "c", "d"])
    state["bag"][k] = state["bag"].get(k, 0) + rng.randint(-3, 3)
    state["x"] = state["x"] * 0.9 + rng.normal(0, 0.5)
    state["hist"] = (state["hist"] + [rng.random()])[-5:]
    order = rng.shuffle(sorted(state["bag"].keys()))
    events = [{"k": k, "order": order}] if rng.random() < 0.5 else []
    if action != None:
        events.append({"action": action})
    return state, events

def observe(state, role):
    if role == "n":
        return state["n"]
    return state
`
