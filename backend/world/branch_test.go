package world_test

import (
	"database/sql"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/store"
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

// A batch of branches (a queue job's) is recorded in ONE transaction with
// what the caller runs inside it: each branch is what Branch records, an
// error inside the commit leaves none of them, and a batch run again (its
// worker died after the commit) records nothing twice and returns what was
// recorded, one branch at a time, without running the caller's part again.
func TestBranchesAreOneCommitAndWhatBranchRecords(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "chooser", Program: []byte(chooser), Seed: 7})
	require.NoError(t, err)
	steps(t, f, run.ID, 2)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	seed := int64(42)
	reqs := []world.BranchRequest{
		{CheckpointID: cp.ID, Actions: acts(`{"add": 1}`), Key: "job 1 / 1", ParentTime: 2, DeliberationIndex: 1},
		{CheckpointID: cp.ID, Actions: acts(`{"add": 2}`, `null`), Seed: &seed, Key: "job 1 / 2", ParentTime: 2, DeliberationIndex: 1},
		{CheckpointID: cp.ID, Actions: acts(`{"add": 2000}`), Key: "job 1 / 3", ParentTime: 2, DeliberationIndex: 1},
	}
	before, err := f.ledger.Count(f.ctx)
	require.NoError(t, err)

	_, committed, err := f.worlds.Branches(f.ctx, reqs, func(*sql.Tx, []world.BranchResult) error {
		return backend.Errorf(backend.ECONFLICT, "the job went to another worker")
	})
	require.ErrorContains(t, err, "another worker")
	require.False(t, committed)
	n, err := f.ledger.Count(f.ctx)
	require.NoError(t, err)
	require.Equal(t, before, n, "an error inside the commit leaves no branch")
	_, err = f.worlds.Run(f.ctx, world.BranchRunID(reqs[0].Key))
	require.Error(t, err, "nor its run")

	calls := 0
	var inside []world.BranchResult
	out, committed, err := f.worlds.Branches(f.ctx, reqs, func(tx *sql.Tx, out []world.BranchResult) error {
		calls++
		inside = out
		var runs int
		// The branches are written in this transaction, before it commits.
		require.NoError(t, tx.QueryRowContext(f.ctx, "SELECT count(*) FROM world_runs WHERE id IN (?, ?, ?)",
			out[0].Run.ID, out[1].Run.ID, out[2].Run.ID).Scan(&runs))
		require.Equal(t, 3, runs)
		return nil
	})
	require.NoError(t, err)
	require.True(t, committed)
	require.Equal(t, 1, calls)
	require.Equal(t, out, inside, "the commit's part sees the results returned")
	require.Len(t, out, 3)

	// Each branch is what Branch records from the same request.
	for i, req := range reqs {
		req.Key = ""
		one, err := f.worlds.Branch(f.ctx, req)
		require.NoError(t, err)
		got := out[i]
		require.Equal(t, one.Digest, got.Digest, "branch %d", i)
		require.Equal(t, one.Score, got.Score)
		require.Equal(t, one.HasScore, got.HasScore)
		require.Equal(t, one.Next, got.Next)
		require.Equal(t, one.Steps, got.Steps)
		require.Equal(t, one.Failed, got.Failed)
		require.Equal(t, one.Run.Status, got.Run.Status)
		require.JSONEq(t, string(one.State), string(got.State))
		require.Equal(t, got.Run.ID, got.Checkpoint.RunID)
		stored, err := f.worlds.Run(f.ctx, got.Run.ID)
		require.NoError(t, err)
		require.Equal(t, got.Checkpoint.ID, stored.LatestCheckpointID)
		require.Equal(t, got.Run.Status, stored.Status)
		fk, err := store.NewWorlds(f.db, f.ledger).ForkOf(f.ctx, got.Run.WorldID)
		require.NoError(t, err)
		require.Equal(t, got.Fork.ID, fk.ID)
		ckp, err := f.worlds.GetCheckpoint(f.ctx, got.Checkpoint.ID)
		require.NoError(t, err)
		require.Equal(t, got.Checkpoint.LedgerSeq, ckp.LedgerSeq)
		mine, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: got.Run.ID})
		require.NoError(t, err)
		theirs, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: one.Run.ID})
		require.NoError(t, err)
		require.Len(t, mine, len(theirs))
		for j := range mine {
			require.EqualValues(t, j+1, mine[j].Seq, "seqs 1..n")
			require.Equal(t, theirs[j].Type, mine[j].Type)
			require.Equal(t, theirs[j].WorldLocalTime, mine[j].WorldLocalTime)
			require.Equal(t, theirs[j].DeliberationIndex, mine[j].DeliberationIndex)
		}
		require.Equal(t, ckp.LedgerSeq, mine[len(mine)-1].Seq, "the end checkpoint covers the stream")
		rep, err := f.reopen().Verify(f.ctx, got.Run.ID)
		require.NoError(t, err)
		require.True(t, rep.OK, "branch %d: %+v", i, rep.Divergence)
	}
	require.Contains(t, out[2].Failed, "too much")

	// The same batch again: nothing new, the recorded branches come back,
	// and the caller's part is not run (its job completes elsewhere).
	n, err = f.ledger.Count(f.ctx)
	require.NoError(t, err)
	again, committed, err := f.worlds.Branches(f.ctx, reqs, func(*sql.Tx, []world.BranchResult) error {
		t.Fatal("a batch recorded before does not commit again")
		return nil
	})
	require.NoError(t, err)
	require.False(t, committed)
	after, err := f.ledger.Count(f.ctx)
	require.NoError(t, err)
	require.Equal(t, n, after, "nothing is recorded twice")
	for i := range out {
		require.Equal(t, out[i].Run.ID, again[i].Run.ID)
		require.Equal(t, out[i].Fork.ID, again[i].Fork.ID)
		require.Equal(t, out[i].Checkpoint.ID, again[i].Checkpoint.ID)
		require.Equal(t, out[i].Digest, again[i].Digest)
		require.Equal(t, out[i].Score, again[i].Score)
	}

	// A batch of which one branch is recorded and one is new records the
	// new one only.
	fresh := world.BranchRequest{CheckpointID: out[0].Checkpoint.ID, Actions: acts(`{"add": 1}`), Key: "job 2 / 1", ParentTime: 2, DeliberationIndex: 1}
	mixed, committed, err := f.worlds.Branches(f.ctx, []world.BranchRequest{reqs[0], fresh}, nil)
	require.NoError(t, err)
	require.False(t, committed)
	require.Equal(t, out[0].Run.ID, mixed[0].Run.ID)
	events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: mixed[1].Run.ID})
	require.NoError(t, err)
	require.NotEmpty(t, events)
	final, err := f.ledger.Count(f.ctx)
	require.NoError(t, err)
	require.Equal(t, after+int64(len(events)), final)
}
