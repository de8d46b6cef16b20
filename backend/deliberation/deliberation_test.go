package deliberation_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/world"
)

// Without noise, deliberating until done walks a shortest path: as many
// moves as the test's own breadth-first search says, from two starts and
// with both strategies.
func TestUntilDoneOnTheNoiselessGridIsOptimal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		patch string
		opt   deliberation.Options
	}{
		{"beam from the corner", `{"params":{"noise":0}}`, deliberation.Options{Strategy: deliberation.Beam, Width: 2, Depth: 3, Budget: 24}},
		{"beam from the middle", `{"params":{"noise":0},"pos":[3,7]}`, deliberation.Options{Strategy: deliberation.Beam, Width: 3, Depth: 2, Budget: 24}},
		{"mcts from the corner", `{"params":{"noise":0}}`, deliberation.Options{Strategy: deliberation.MCTS, Depth: 4, Budget: 16}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			run := grid(t, f, 1, c.patch)
			want := bfs(readGrid(t, f, run.ID))
			require.Positive(t, want)
			opt := c.opt
			opt.RunID, opt.UntilDone, opt.Apply = run.ID, true, true
			res, err := f.delib.Deliberate(f.ctx, opt)
			require.NoError(t, err)
			require.True(t, res.Done, "the goal is reached")
			require.Len(t, res.Rounds, want, "one round per move, as many moves as the shortest path")
			end := readGrid(t, f, run.ID)
			require.Equal(t, end.Goal, end.Pos)
			require.Equal(t, want, end.Steps-readGridAt(t, f, run))
			require.Equal(t, backend.RunCompleted, res.Run.Status)
			for i, r := range res.Rounds {
				require.NotEmpty(t, r.Candidates)
				require.Equal(t, r.Chosen, r.Candidates[0].Action)
				require.LessOrEqual(t, r.Budget.Used, opt.Budget)
				if i > 0 {
					require.Equal(t, res.Rounds[i-1].DeliberationIndex+1, r.DeliberationIndex)
					require.Equal(t, res.Rounds[i-1].ParentTime+1, r.ParentTime)
				}
			}
			recorded, err := f.delib.Rounds(f.ctx, run.ID)
			require.NoError(t, err)
			require.Len(t, recorded, want)
		})
	}
}

// readGridAt is the steps the parent had taken before deliberating.
func readGridAt(t *testing.T, f fixture, run backend.WorldRun) int {
	t.Helper()
	return int(run.WorldLocalTime)
}

// With noise, a choice made on the mean over K seeds picks the action that
// is better in expectation more often than a choice made on one seed. At
// (5,3), in the corridor between two walls, only N and S are open and only S
// is on a shortest path; but when the one seed slips, N often lands better.
func TestExpectedScoreBeatsOneSeedUnderNoise(t *testing.T) {
	t.Parallel()
	f := setup(t)
	base := grid(t, f, 1, `{"params":{"noise":0.5},"pos":[5,3]}`)
	cp, err := f.worlds.Checkpoint(f.ctx, base.ID)
	require.NoError(t, err)
	right := json.RawMessage(`"S"`)
	var single, expected int
	const trials = 100
	// Trials run four at a time: a deliberation waits on its commits most
	// of the time, so the disk and the cores are shared better.
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for seed := range int64(trials) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, _, run, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeSeedChange,
				Delta: json.RawMessage(`{"seed":` + itoa(seed) + `}`)})
			if !assert.NoError(t, err) {
				return
			}
			for _, k := range []int{1, 10} {
				res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Depth: 1, Seeds: k, Budget: 100})
				if !assert.NoError(t, err) {
					return
				}
				r := res.Rounds[0]
				assert.Len(t, r.Seeds, k)
				assert.Len(t, r.Candidates, 2, "N and S are open at (5,3)")
				if string(r.Chosen) == string(right) {
					mu.Lock()
					if k == 1 {
						single++
					} else {
						expected++
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed())
	t.Logf("right choices out of %d: one seed %d, ten seeds %d", trials, single, expected)
	// Expected about 50 against 90 (see above); the margins are several
	// standard deviations of a 100-trial count.
	require.Greater(t, expected, single+15)
	require.GreaterOrEqual(t, expected, 75)
}

func itoa(i int64) string {
	b, _ := json.Marshal(i)
	return string(b)
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
	// The parent's own step after the round is its applied choice.
	hist, err := f.worlds.History(f.ctx, run.ID)
	require.NoError(t, err)
	var last json.RawMessage
	for _, e := range hist {
		if e.Type == world.EventStep {
			var p struct {
				Action json.RawMessage `json:"action"`
			}
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			last = p.Action
		}
	}
	require.JSONEq(t, string(r.Chosen), string(last))
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
