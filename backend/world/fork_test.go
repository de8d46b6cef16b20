package world_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/world"
)

func latestCheckpoint(t *testing.T, f fixture, runID string) backend.Checkpoint {
	t.Helper()
	cps, err := sqlite_worlds(f).ListCheckpoints(f.ctx, runID)
	require.NoError(t, err)
	require.NotEmpty(t, cps)
	return cps[len(cps)-1]
}

func TestForkRecordsProvenanceAndSharesHistoryByReference(t *testing.T) {
	t.Parallel()
	f := setup(t)
	parent, run := create(t, f, 11)
	steps(t, f, run.ID, 5)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	steps(t, f, run.ID, 5) // the parent goes on after the checkpoint

	fork, child, childRun, err := f.worlds.Fork(f.ctx, world.ForkRequest{
		CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{"params": {"inc": 10}}`),
		SeedPolicy: backend.SeedInherit, Name: "fast", DeliberationIndex: 2,
	})
	require.NoError(t, err)
	require.NotEqual(t, parent.ID, child.ID, "every fork is a new world")
	require.Equal(t, parent.ID, child.ParentWorldID)
	require.Equal(t, fork.ID, child.ForkID)
	require.Equal(t, parent.ID, fork.ParentWorldID)
	require.Equal(t, run.ID, fork.ParentRunID)
	require.Equal(t, cp.ID, fork.CheckpointID)
	require.Equal(t, backend.DivergeStatePatch, fork.Divergence)
	require.JSONEq(t, `{"params":{"inc":10}}`, string(fork.Delta))
	require.Equal(t, backend.SeedInherit, fork.SeedPolicy)
	require.Equal(t, parent.Seed, child.Seed)
	require.Equal(t, run.ID, childRun.BaseRunID)
	require.Equal(t, cp.LedgerSeq, childRun.BaseSeq)
	require.EqualValues(t, 5, childRun.ParentTime)

	// Nothing of the parent's history was copied into the child's stream.
	own, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: childRun.ID})
	require.NoError(t, err)
	require.Len(t, own, 2) // world.forked + its starting checkpoint

	steps(t, f, childRun.ID, 2)
	full, err := f.worlds.History(f.ctx, childRun.ID)
	require.NoError(t, err)
	parentEvents, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: run.ID, ToSeq: cp.LedgerSeq})
	require.NoError(t, err)
	require.Equal(t, parentEvents, full[:len(parentEvents)], "the child's history starts with the parent's, up to the checkpoint")
	rest := full[len(parentEvents):]
	require.Equal(t, world.EventForked, rest[0].Type)
	for _, e := range rest {
		require.Equal(t, childRun.ID, e.Stream)
		require.EqualValues(t, 5, e.ParentTime, "parent_time is the parent's local time at the fork")
		require.EqualValues(t, 2, e.DeliberationIndex)
	}
	require.EqualValues(t, 7, rest[len(rest)-1].WorldLocalTime, "world-local time continues from the checkpoint")

	// The patch took: the child counts by 10 from the parent's state at time 5.
	require.EqualValues(t, 25, state(t, f, childRun.ID)["n"])
	require.EqualValues(t, 10, state(t, f, run.ID)["n"])
}

func TestForkDivergences(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run := create(t, f, 21)
	steps(t, f, run.ID, 3)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	steps(t, f, run.ID, 4)
	parentSum := state(t, f, run.ID)["sum"]

	fork := func(div backend.DivergenceType, delta string, policy backend.SeedPolicy) (backend.WorldSpec, backend.WorldRun, error) {
		_, spec, r, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: div, Delta: json.RawMessage(delta), SeedPolicy: policy})
		return spec, r, err
	}

	// Inherit with no change replays the parent exactly.
	_, same, err := fork(backend.DivergeStatePatch, `{}`, backend.SeedInherit)
	require.NoError(t, err)
	steps(t, f, same.ID, 4)
	require.Equal(t, parentSum, state(t, f, same.ID)["sum"])

	// A seed change draws differently from the same state.
	spec, reseeded, err := fork(backend.DivergeSeedChange, `{"seed": 99}`, backend.SeedInherit)
	require.NoError(t, err)
	require.EqualValues(t, 99, spec.Seed)
	steps(t, f, reseeded.ID, 4)
	require.NotEqual(t, parentSum, state(t, f, reseeded.ID)["sum"])

	// Derived seeds are reproducible from the fork, fresh ones are not the parent's.
	derived, _, err := fork(backend.DivergeSeedChange, `{}`, backend.SeedDerive)
	require.NoError(t, err)
	require.NotEqual(t, int64(21), derived.Seed)
	fresh, _, err := fork(backend.DivergeSeedChange, `{}`, backend.SeedFresh)
	require.NoError(t, err)
	require.NotEqual(t, derived.Seed, fresh.Seed)
	_, _, err = fork(backend.DivergeSeedChange, `{}`, backend.SeedInherit)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))

	// An action override applies its actions first.
	_, over, err := fork(backend.DivergeActionOverride, `{"actions": [{"add": 1000}]}`, backend.SeedInherit)
	require.NoError(t, err)
	require.EqualValues(t, 4, over.WorldLocalTime)
	require.Greater(t, state(t, f, over.ID)["sum"].(float64), 1000.0)

	// A parameter change changes an existing scalar only.
	_, param, err := fork(backend.DivergeParameterChange, `{"inc": 3}`, backend.SeedInherit)
	require.NoError(t, err)
	steps(t, f, param.ID, 1)
	require.EqualValues(t, 6, state(t, f, param.ID)["n"])
	_, _, err = fork(backend.DivergeParameterChange, `{"newkey": 3}`, backend.SeedInherit)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, _, err = fork(backend.DivergeParameterChange, `{"inc": {"x": 1}}`, backend.SeedInherit)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))

	// A program change runs the new program from the restored state.
	prog := `
def init(seed):
    return {}
def step(state, action, rng):
    s = dict(state)
    s["n"] = state["n"] - 1
    return s
def observe(state, role):
    return state
`
	delta, _ := json.Marshal(map[string]string{"program": prog})
	progSpec, changed, err := fork(backend.DivergeProgramChange, string(delta), backend.SeedInherit)
	require.NoError(t, err)
	require.NotEqual(t, progSpec.Program.Digest, spec.Program.Digest)
	steps(t, f, changed.ID, 2)
	require.EqualValues(t, 1, state(t, f, changed.ID)["n"])

	// Bad deltas are refused with a sentence and store nothing.
	before, err := sqlite_worlds(f).ListSpecs(f.ctx)
	require.NoError(t, err)
	for _, bad := range []struct {
		div   backend.DivergenceType
		delta string
	}{
		{backend.DivergeStatePatch, `{nope`},
		{backend.DivergeStatePatch, `[1]`},
		{backend.DivergeActionOverride, `{"actions": []}`},
		{backend.DivergeProgramChange, `{"program": "def init(:"}`},
		{backend.DivergePlanEdit, `{}`},
		{"teleport", `{}`},
	} {
		_, _, err := fork(bad.div, bad.delta, backend.SeedInherit)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%s %s", bad.div, bad.delta)
	}
	_, _, _, err = f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: backend.NewID(backend.KindCheckpoint), Divergence: backend.DivergeStatePatch})
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	after, err := sqlite_worlds(f).ListSpecs(f.ctx)
	require.NoError(t, err)
	require.Len(t, after, len(before))
}

func TestForkOfAForkAndInheritedCheckpoints(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, root := create(t, f, 2)
	steps(t, f, root.ID, 3)
	cp1, err := f.worlds.Checkpoint(f.ctx, root.ID)
	require.NoError(t, err)
	_, _, a, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp1.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{"params": {"inc": 2}}`)})
	require.NoError(t, err)
	steps(t, f, a.ID, 3)
	cp2, err := f.worlds.Checkpoint(f.ctx, a.ID)
	require.NoError(t, err)
	_, _, b, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp2.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{"params": {"inc": 5}}`)})
	require.NoError(t, err)
	steps(t, f, b.ID, 1)

	segs, err := f.worlds.Segments(f.ctx, b.ID)
	require.NoError(t, err)
	require.Len(t, segs, 3)
	require.Equal(t, []string{root.ID, a.ID, b.ID}, []string{segs[0].Stream, segs[1].Stream, segs[2].Stream})
	require.EqualValues(t, 3+6+5, state(t, f, b.ID)["n"])

	// A checkpoint of the root seen in b's inherited history forks from the root.
	fork, _, _, err := f.worlds.Fork(f.ctx, world.ForkRequest{ParentRunID: b.ID, CheckpointID: cp1.ID, Divergence: backend.DivergeStatePatch})
	require.NoError(t, err)
	require.Equal(t, root.ID, fork.ParentRunID)
	// A checkpoint outside a run's history is refused.
	_, _, c, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp1.ID, Divergence: backend.DivergeStatePatch})
	require.NoError(t, err)
	_, _, _, err = f.worlds.Fork(f.ctx, world.ForkRequest{ParentRunID: c.ID, CheckpointID: cp2.ID, Divergence: backend.DivergeStatePatch})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}
