package world_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

// countingRunner counts the calls the world service makes to its runner.
type countingRunner struct {
	starlark.Runner
	calls atomic.Int64
}

func (r *countingRunner) Call(ctx context.Context, src starlark.Source, c starlark.Call) (starlark.Reply, error) {
	r.calls.Add(1)
	return r.Runner.Call(ctx, src, c)
}

// TestRunStepsTakesStepsInBatchesBetweenSaves: a run crosses the pipe to
// the program's worker once per save or checkpoint, not once a step, and
// records what one step at a time records.
func TestRunStepsTakesStepsInBatchesBetweenSaves(t *testing.T) {
	t.Parallel()
	f := setup(t)
	runner := &countingRunner{Runner: worldproc.Shared()}
	worlds := world.New(store.NewWorlds(f.db, f.ledger), f.ledger, f.blobs, starlark.DefaultLimits(), runner)
	_, batched, err := worlds.Create(f.ctx, world.NewWorld{Name: "counter", Program: []byte(counter), Seed: 4})
	require.NoError(t, err)
	_, single := create(t, f, 4)

	before := runner.calls.Load()
	_, err = worlds.RunSteps(f.ctx, batched.ID, world.RunOptions{Steps: 1000, CheckpointEvery: 250})
	require.NoError(t, err)
	// Saves every 100 steps, checkpoints every 250: batches end at 100,
	// 200, 250, 300, 400, 500, 600, 700, 750, 800, 900 and 1,000.
	require.Equal(t, int64(12), runner.calls.Load()-before, "1,000 steps in twelve exchanges")
	_, err = f.worlds.RunSteps(f.ctx, single.ID, world.RunOptions{Steps: 1000, CheckpointEvery: 250, SaveEvery: 1})
	require.NoError(t, err)

	a, err := f.worlds.History(f.ctx, single.ID)
	require.NoError(t, err)
	b, err := worlds.History(f.ctx, batched.ID)
	require.NoError(t, err)
	require.Equal(t, shape(a), shape(b))
	cps, err := worlds.Checkpoints(f.ctx, batched.ID)
	require.NoError(t, err)
	require.Len(t, cps, 1+4)
	rep, err := f.reopen().Verify(f.ctx, batched.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
}

// TestRunStepsFailingInsideABatchKeepsTheStepsBefore: a step that fails in
// the middle of a batch fails the run at that step; every step before it is
// recorded, as when steps were taken one at a time.
func TestRunStepsFailingInsideABatchKeepsTheStepsBefore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	src := `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    n = state["n"] + 1
    if n == 142:
        fail("step 142 fails")
    return {"n": n}, [{"at": n}]
def observe(state, role):
    return state
`
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "fails", Program: []byte(src)})
	require.NoError(t, err)
	saved := 0
	_, err = f.worlds.RunSteps(f.ctx, run.ID, world.RunOptions{Steps: 300, CheckpointEvery: 100,
		Progress: func(s, _ int) { saved = s }})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "step 142 fails")
	require.Equal(t, 100, saved, "progress told of the first checkpoint's steps")

	got, err := sqlite_worlds(f).GetRun(f.ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunFailed, got.Status)
	require.Equal(t, int64(141), got.WorldLocalTime)
	events, err := f.worlds.History(f.ctx, run.ID)
	require.NoError(t, err)
	stepsSeen := 0
	for _, e := range events {
		if e.Type == world.EventStep {
			stepsSeen++
			require.Equal(t, int64(stepsSeen), e.WorldLocalTime, "each step at its own time")
		}
	}
	require.Equal(t, 141, stepsSeen)
	require.Equal(t, world.EventFailed, events[len(events)-1].Type)
	require.JSONEq(t, `{"n": 141}`, string(mustState(t, f, run.ID)))
}

// TestRunStepsWhoseWorkerDiesInsideABatchFailsAtThatStep: a step that
// outgrows the memory limit kills the worker in the middle of a batch; the
// run fails at that step with the limit's sentence, and every step before it
// is recorded (taken again one by one), so verify passes.
func TestRunStepsWhoseWorkerDiesInsideABatchFailsAtThatStep(t *testing.T) {
	t.Parallel()
	f := setup(t)
	limits := starlark.Limits{MaxSteps: 1 << 40, MaxMemoryBytes: 64 << 20}
	worlds := world.New(store.NewWorlds(f.db, f.ledger), f.ledger, f.blobs, limits, worldproc.Shared())
	src := `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    n = state["n"] + 1
    if n == 137:
        s = "x"
        while True:
            s = s + s
    return {"n": n}, [{"at": n}]
def observe(state, role):
    return state
`
	_, run, err := worlds.Create(f.ctx, world.NewWorld{Name: "grows", Program: []byte(src)})
	require.NoError(t, err)
	_, err = worlds.RunSteps(f.ctx, run.ID, world.RunOptions{Steps: 300, CheckpointEvery: 100})
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err), "%v", err)
	require.Contains(t, backend.ErrorMessage(err), "memory limit of 64 MiB during step")

	got, err := sqlite_worlds(f).GetRun(f.ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunFailed, got.Status)
	require.Equal(t, int64(136), got.WorldLocalTime)
	events, err := worlds.History(f.ctx, run.ID)
	require.NoError(t, err)
	n := 0
	for _, e := range events {
		if e.Type == world.EventStep {
			n++
		}
	}
	require.Equal(t, 136, n, "every step before the one that outgrew the limit is recorded")
	rep, err := worlds.Verify(f.ctx, run.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
}
