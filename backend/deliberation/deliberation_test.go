package deliberation_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/world"
)

// Without noise, deliberating until done walks a shortest path (the
// acceptance test with a breadth-first search and both strategies from the
// corner is tests/worlds; this short walk keeps the loop under the race
// detector).
func TestUntilDoneWalksAShortestPath(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 1, `{"params":{"noise":0},"pos":[6,6]}`)
	want := bfs(readGrid(t, f, run.ID))
	require.Equal(t, 4, want)
	res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.MCTS, Depth: 3, Budget: 12,
		UntilDone: true, Apply: true})
	require.NoError(t, err)
	require.True(t, res.Done)
	require.Len(t, res.Rounds, want)
}

// Every branch event carries the round's deliberation index and the
// parent's time when the round began; the round's record is one
// external-real event; every branch verifies by re-execution.
func TestBranchesCarryTheRoundsClocksAndVerify(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 3, `{"params":{"noise":0.3}}`)
	_, err := f.worlds.RunSteps(f.ctx, run.ID, world.RunOptions{Steps: 2})
	require.NoError(t, err)
	var res deliberation.Result
	for _, strategy := range []deliberation.Strategy{deliberation.Beam, deliberation.MCTS} {
		res, err = f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Strategy: strategy, Width: 2, Depth: 3, Budget: 30, Seeds: 2, Apply: true})
		require.NoError(t, err)
	}
	rounds, err := f.delib.Rounds(f.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, rounds, 2)
	require.EqualValues(t, 2, rounds[1].DeliberationIndex)
	require.EqualValues(t, 3, rounds[1].ParentTime, "two steps and the first round's applied action")

	r := res.Rounds[0]
	require.NotEmpty(t, r.Branches)
	require.Equal(t, len(r.Branches), r.Budget.Used)
	for _, b := range r.Branches {
		events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: b.RunID})
		require.NoError(t, err)
		require.NotEmpty(t, events)
		for _, e := range events {
			require.EqualValues(t, 2, e.DeliberationIndex, "%s of %s", e.Type, b.WorldID)
			require.EqualValues(t, 3, e.ParentTime, "%s of %s", e.Type, b.WorldID)
			require.Equal(t, backend.WorldLocal, e.Reality)
		}
		rep, err := f.worlds.Verify(f.ctx, b.RunID)
		require.NoError(t, err)
		require.True(t, rep.OK, "branch %s: %+v", b.WorldID, rep.Divergence)
	}
	events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: deliberation.Stream(run.ID)})
	require.NoError(t, err)
	require.Len(t, events, 2)
	for i, e := range events {
		require.Equal(t, deliberation.EventRound, e.Type)
		require.Equal(t, backend.ExternalReal, e.Reality)
		require.EqualValues(t, i+1, e.DeliberationIndex)
	}
	// The parent's own step after the round is its applied choice, and
	// points back to the round's record.
	hist, err := f.worlds.History(f.ctx, run.ID)
	require.NoError(t, err)
	var last json.RawMessage
	var cause string
	for _, e := range hist {
		if e.Type == world.EventStep {
			var p struct {
				Action json.RawMessage `json:"action"`
			}
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			last, cause = p.Action, e.CausationID
		}
	}
	require.JSONEq(t, string(r.Chosen), string(last))
	require.Equal(t, r.EventID, cause)
	require.Equal(t, events[1].ID, cause)
}

// Identical states reached by different actions are recognised by digest and
// not expanded again.
func TestIdenticalStatesAreNotSimulatedAgain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 1, `{"params":{"noise":0},"pos":[1,7]}`)
	res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.Beam, Width: 50, Depth: 3, Budget: 500})
	require.NoError(t, err)
	r := res.Rounds[0]
	require.Positive(t, r.Budget.Deduplicated, "E then W and W then E meet")
	seen := map[string]bool{}
	dups := 0
	for _, b := range r.Branches {
		if b.Duplicate {
			dups++
			continue
		}
		require.False(t, seen[b.Parent+string(b.Action)], "a state is expanded once")
		seen[b.Parent+string(b.Action)] = true
	}
	require.Equal(t, r.Budget.Deduplicated, dups)
	// No branch forks a duplicate.
	dupWorlds := map[string]bool{}
	for _, b := range r.Branches {
		if b.Duplicate {
			dupWorlds[b.WorldID] = true
		}
	}
	for _, b := range r.Branches {
		require.False(t, dupWorlds[b.Parent], "branch %s forks a duplicate state", b.WorldID)
	}
}

// countingEvaluator stands where worker processes could: every branch goes
// through it, and it sees how many run at once.
type countingEvaluator struct {
	next        deliberation.Evaluator
	calls, busy atomic.Int64
	mu          sync.Mutex
	most        int64
}

func (c *countingEvaluator) Branch(ctx context.Context, req world.BranchRequest) (world.BranchResult, error) {
	c.calls.Add(1)
	n := c.busy.Add(1)
	defer c.busy.Add(-1)
	c.mu.Lock()
	c.most = max(c.most, n)
	c.mu.Unlock()
	return c.next.Branch(ctx, req)
}

func TestBranchesRunThroughOneEvaluatorBoundedByWorkers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 2, `{}`)
	ev := &countingEvaluator{next: f.worlds}
	res, err := f.delib.WithEvaluator(ev).Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.Beam,
		Width: 4, Depth: 4, Budget: 60, Seeds: 3, Workers: 3})
	require.NoError(t, err)
	require.EqualValues(t, res.Rounds[0].Budget.Used, ev.calls.Load())
	require.LessOrEqual(t, ev.most, int64(3))
	require.Greater(t, ev.most, int64(1), "branches ran concurrently")
}

func TestBadInputIsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 2, `{}`)
	plain, plainRun, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "plain", Seed: 1, Program: []byte(`
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    return state
def observe(state, role):
    return state
`)})
	require.NoError(t, err)
	other := grid(t, f, 3, `{}`)
	otherCp, err := f.worlds.Checkpoint(f.ctx, other.ID)
	require.NoError(t, err)
	for _, c := range []struct {
		opt  deliberation.Options
		frag string
	}{
		{deliberation.Options{RunID: run.ID, Strategy: "greedy"}, `unknown strategy "greedy"`},
		{deliberation.Options{RunID: run.ID, Rounds: 3}, "need --apply"},
		{deliberation.Options{RunID: run.ID, UntilDone: true}, "need --apply"},
		{deliberation.Options{RunID: run.ID, Depth: -1}, "the depth must be from 1 to"},
		{deliberation.Options{RunID: run.ID, Seeds: 1000}, "the number of seeds must be from 1 to 64"},
		{deliberation.Options{RunID: run.ID, Budget: 3, Seeds: 2}, "needs at least 4"},
		{deliberation.Options{RunID: plainRun.ID}, "must define actions(state) and score(state)"},
		{deliberation.Options{RunID: run.ID, CheckpointID: otherCp.ID}, "belongs to run"},
		{deliberation.Options{RunID: "wld_x"}, "not a valid"},
	} {
		_, err := f.delib.Deliberate(f.ctx, c.opt)
		require.ErrorContains(t, err, c.frag)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%v", err)
	}
	_ = plain
	// A checkpoint behind the run's present cannot be applied.
	old, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	_, err = f.worlds.Step(f.ctx, run.ID, nil)
	require.NoError(t, err)
	_, err = f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, CheckpointID: old.ID, Apply: true})
	require.ErrorContains(t, err, "--apply continues the run from where it is")
	// Without --apply it may look back.
	res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, CheckpointID: old.ID, Depth: 2})
	require.NoError(t, err)
	require.EqualValues(t, old.WorldLocalTime, res.Rounds[0].ParentTime)
}

// Cancelling stops the search at once: no round is recorded, and what was
// recorded is whole branches.
func TestCancelRecordsNoRound(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 2, `{}`)
	ctx, cancel := context.WithCancel(f.ctx)
	var seen atomic.Int64
	_, err := f.delib.Deliberate(ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.MCTS, Depth: 10, Budget: 500,
		Progress: func(p deliberation.Progress) {
			if seen.Add(1) == 3 {
				cancel()
			}
		}})
	require.ErrorIs(t, err, context.Canceled)
	rounds, err := f.delib.Rounds(f.ctx, run.ID)
	require.NoError(t, err)
	require.Empty(t, rounds)
}

// A recorded round's choice can be applied later, while the run is still
// where the round began; not after it moved.
func TestApplyARecordedRound(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 2, `{"params":{"noise":0}}`)
	res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Depth: 3, Budget: 30})
	require.NoError(t, err)
	idx := res.Rounds[0].DeliberationIndex
	out, err := f.delib.Apply(f.ctx, run.ID, idx)
	require.NoError(t, err)
	require.EqualValues(t, 1, out.Run.WorldLocalTime)
	_, err = f.delib.Apply(f.ctx, run.ID, idx)
	require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err), "%v", err)
	require.ErrorContains(t, err, "deliberate again")
	_, err = f.delib.Apply(f.ctx, run.ID, 9)
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
}
