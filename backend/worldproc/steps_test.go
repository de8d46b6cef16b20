package worldproc_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/starlark"
	"ducklm/backend/worldproc"
)

// countingRunner counts the calls a world makes through its runner.
type countingRunner struct {
	starlark.Runner
	calls atomic.Int64
}

func (r *countingRunner) Call(ctx context.Context, src starlark.Source, c starlark.Call) (starlark.Reply, error) {
	r.calls.Add(1)
	return r.Runner.Call(ctx, src, c)
}

// TestStepManyIsOneExchangeWithTheWorker: a batch of steps crosses the pipe
// once, not once a step, and gives what this process gives step by step.
func TestStepManyIsOneExchangeWithTheWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	runner := &countingRunner{Runner: newPool(t, worldproc.Options{Workers: 1})}
	local, err := starlark.Compile("grid.star", starlark.BranchingGrid, starlark.Limits{})
	require.NoError(t, err)
	remote, err := starlark.CompileWith(ctx, runner, "grid.star", starlark.BranchingGrid, starlark.Limits{})
	require.NoError(t, err)
	lw, rw := local.New(), remote.New()
	_, err = lw.Initialize(ctx, 5)
	require.NoError(t, err)
	_, err = rw.Initialize(ctx, 5)
	require.NoError(t, err)

	before := runner.calls.Load()
	got, err := rw.StepMany(ctx, json.RawMessage(`"E"`), 100)
	require.NoError(t, err)
	require.Equal(t, int64(1), runner.calls.Load()-before, "100 steps, one exchange")
	var want []backend.StepResult
	for range 100 {
		res, err := lw.Step(ctx, json.RawMessage(`"E"`))
		require.NoError(t, err)
		want = append(want, res)
	}
	require.Equal(t, want, got)
	lc, err := lw.CheckpointBytes()
	require.NoError(t, err)
	rc, err := rw.CheckpointBytes()
	require.NoError(t, err)
	require.Equal(t, string(lc), string(rc))
}

// TestAWorkerDyingInABatchFailsTheStepThatKilledIt: when the worker dies of
// its memory limit inside a batch, the steps before the one that outgrew it
// are still taken (again, one by one) and only that step fails, with the
// sentence a single step gives.
func TestAWorkerDyingInABatchFailsTheStepThatKilledIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, worldproc.Options{Workers: 1})
	src := `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    n = state["n"] + 1
    if n == 6:
        s = "x"
        while True:
            s = s + s
    return {"n": n}, [{"at": n}]
def observe(state, role):
    return state
`
	prog, err := starlark.CompileWith(ctx, pool, "grows.star", []byte(src), hostileLimits)
	require.NoError(t, err)
	w := prog.New()
	_, err = w.Initialize(ctx, 1)
	require.NoError(t, err)
	got, err := w.StepMany(ctx, nil, 20)
	requireCode(t, err, backend.ELIMIT, "memory limit of 64 MiB", "during step", "worldMemoryMiB")
	require.Len(t, got, 5)
	require.Equal(t, int64(5), w.Time())
	require.JSONEq(t, `{"n": 5}`, string(w.State()))
	require.Equal(t, `{"at":5}`, string(got[4].Emitted[0]))
}
