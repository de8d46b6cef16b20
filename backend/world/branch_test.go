package world_test

import (
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/world"
)

// chooser is counter with actions and score: add 1 or 2, aim for 5.
const chooser = counter + `
def actions(state):
    return [{"add": 1}, {"add": 2}]

def score(state):
    if state["sum"] > 1000:
        fail("too much")
    return -abs(5 - state["n"])
`

func acts(s ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(s))
	for i, a := range s {
		out[i] = json.RawMessage(a)
	}
	return out
}

func TestBranchIsOneCommitWithTheRoundsClocks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "chooser", Program: []byte(chooser), Seed: 7})
	require.NoError(t, err)
	steps(t, f, run.ID, 2)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)

	var commits atomic.Int64
	f.ledger.OnCommit(func([]backend.Event) { commits.Add(1) })
	seed := int64(99)
	res, err := f.worlds.Branch(f.ctx, world.BranchRequest{
		CheckpointID: cp.ID, Actions: acts(`{"add": 1}`, `{"add":2}`, `null`), Seed: &seed,
		ParentTime: 2, DeliberationIndex: 3,
	})
	require.NoError(t, err)
	require.EqualValues(t, 1, commits.Load(), "a branch of three steps is one commit")
	require.Empty(t, res.Failed)
	require.Equal(t, 3, res.Steps)
	require.True(t, res.HasScore)
	require.Equal(t, 0.0, res.Score, "n is 5 after 2+3 steps")
	require.Equal(t, acts(`{"add":1}`, `{"add":2}`), res.Next)
	require.Equal(t, backend.DivergeActionOverride, res.Fork.Divergence)
	require.Equal(t, backend.SeedDerive, res.Fork.SeedPolicy)
	require.JSONEq(t, `{"actions":[{"add":1},{"add":2},null],"seed":99}`, string(res.Fork.Delta))
	require.Equal(t, res.Checkpoint.Blob.Digest, res.Digest)

	events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: res.Run.ID})
	require.NoError(t, err)
	types := []string{}
	for _, e := range events {
		types = append(types, e.Type)
		require.EqualValues(t, 2, e.ParentTime, e.Type)
		require.EqualValues(t, 3, e.DeliberationIndex, e.Type)
		require.Equal(t, backend.WorldLocal, e.Reality)
	}
	require.Equal(t, []string{world.EventForked, world.EventStep, world.EventEmitted, world.EventStep, world.EventEmitted,
		world.EventStep, world.EventEmitted, world.EventCheckpoint}, types)
	require.EqualValues(t, 5, events[len(events)-1].WorldLocalTime)

	rep, err := f.reopen().Verify(f.ctx, res.Run.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
	require.Equal(t, 5, rep.Steps)

	// A deeper branch forks the first one's end, and the same seed and
	// actions from the same place give the same digest.
	deeper, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: res.Checkpoint.ID, Actions: acts(`null`), ParentTime: 2, DeliberationIndex: 3})
	require.NoError(t, err)
	require.Equal(t, res.Run.ID, deeper.Run.BaseRunID)
	rep, err = f.reopen().Verify(f.ctx, deeper.Run.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
	again, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: cp.ID, Actions: acts(`{"add":1}`, `{"add":2}`, `null`), Seed: &seed})
	require.NoError(t, err)
	require.Equal(t, res.Digest, again.Digest)
	require.NotEqual(t, res.Run.ID, again.Run.ID)

	// The branch's run opens like any other: it can be stepped and forked.
	out, err := f.worlds.Step(f.ctx, deeper.Run.ID, nil)
	require.NoError(t, err)
	require.EqualValues(t, 7, out.Run.WorldLocalTime)
}

func TestBranchRecordsAProgramErrorAsAFailedBranch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "chooser", Program: []byte(chooser), Seed: 7})
	require.NoError(t, err)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	res, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: cp.ID, Actions: acts(`{"add":2000}`)})
	require.NoError(t, err)
	require.Contains(t, res.Failed, "too much")
	require.False(t, res.HasScore)
	require.Equal(t, backend.RunFailed, res.Run.Status)
	stored, err := f.worlds.Run(f.ctx, res.Run.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunFailed, stored.Status)
	rep, err := f.worlds.Verify(f.ctx, res.Run.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)

	_, err = f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: cp.ID})
	require.ErrorContains(t, err, "at least one action")
	_, err = f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: cp.ID, Actions: acts(`{`)})
	require.ErrorContains(t, err, "not valid JSON")
}

// A branch with a key is recorded once: a retry (a queue job run again after
// its worker died past the commit) returns the recorded branch and adds
// nothing to the ledger or the lineage.
func TestBranchWithAKeyIsRecordedOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "chooser", Program: []byte(chooser), Seed: 7})
	require.NoError(t, err)
	steps(t, f, run.ID, 2)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	req := world.BranchRequest{CheckpointID: cp.ID, Actions: acts(`{"add": 1}`, `{"add": 2}`), Key: "round 1 / branch 3"}
	first, err := f.worlds.Branch(f.ctx, req)
	require.NoError(t, err)
	events, err := f.ledger.Count(f.ctx)
	require.NoError(t, err)

	again, err := f.worlds.Branch(f.ctx, req)
	require.NoError(t, err)
	require.Equal(t, first.Fork.ID, again.Fork.ID)
	require.Equal(t, first.Run.ID, again.Run.ID)
	require.Equal(t, first.Checkpoint.ID, again.Checkpoint.ID)
	require.Equal(t, first.Digest, again.Digest)
	require.Equal(t, first.Score, again.Score)
	require.Equal(t, first.Next, again.Next)
	after, err := f.ledger.Count(f.ctx)
	require.NoError(t, err)
	require.Equal(t, events, after, "nothing is recorded twice")

	other, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: cp.ID, Actions: acts(`{"add": 1}`), Key: "round 1 / branch 4"})
	require.NoError(t, err)
	require.NotEqual(t, first.Run.ID, other.Run.ID, "another key is another branch")
}
