package starlark_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/starlark"
)

// failsAt5 fails its fifth step; done after the eighth if it got there.
const failsAt5 = `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    n = state["n"] + 1
    if n == 5:
        fail("the fifth step fails")
    return {"n": n, "d": rng.randint(0, 99)}, [{"at": n}], n >= 8
def observe(state, role):
    return state
`

// stepOneByOne takes up to n steps with Step, as StepMany must give them.
func stepOneByOne(t *testing.T, w *starlark.World, action string, n int) ([]backend.StepResult, error) {
	t.Helper()
	var out []backend.StepResult
	for len(out) < n && !w.Done() {
		res, err := w.Step(context.Background(), json.RawMessage(action))
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// TestStepManyGivesWhatStepGives: a batch of steps is byte for byte the
// steps taken one at a time — states, events, clock, RNG (the checkpoint
// holds it) — and stops where the world is done or a step fails, with that
// step's own error.
func TestStepManyGivesWhatStepGives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name, src, action string
		n                 int
	}{
		{"counter", counterProgram, `{"go": 1}`, 37},
		{"grid", string(starlark.BranchingGrid), `"N"`, 50},
		{"done", failsAt5, "null", 3}, // ends at 3 of 8
	} {
		one, many := newWorld(t, c.src, 9), newWorld(t, c.src, 9)
		want, err := stepOneByOne(t, one, c.action, c.n)
		require.NoError(t, err)
		got, err := many.StepMany(ctx, json.RawMessage(c.action), c.n)
		require.NoError(t, err, c.name)
		require.Equal(t, want, got, c.name)
		require.Equal(t, one.Time(), many.Time(), c.name)
		require.Equal(t, string(checkpoint(t, one)), string(checkpoint(t, many)), c.name)
	}

	w := newWorld(t, failsAt5, 2)
	ref := newWorld(t, failsAt5, 2)
	want, wantErr := stepOneByOne(t, ref, "null", 10)
	got, err := w.StepMany(ctx, nil, 10)
	requireCode(t, err, backend.EINVALID, "the fifth step fails")
	require.Equal(t, backend.ErrorMessage(wantErr), backend.ErrorMessage(err))
	require.Len(t, got, 4, "the steps before the failing one are taken")
	require.Equal(t, want, got)
	require.Equal(t, int64(4), w.Time())
	require.Equal(t, string(checkpoint(t, ref)), string(checkpoint(t, w)), "the world stands after the fourth step")
}
