package deliberation_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/world"
)

// ticking is an evaluator whose every branch costs a second of a fake
// clock, and which may do something after its nth branch.
type ticking struct {
	inner deliberation.Evaluator
	mu    sync.Mutex
	now   time.Time
	calls int
	after map[int]func()
}

func (e *ticking) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *ticking) Branch(ctx context.Context, req world.BranchRequest) (world.BranchResult, error) {
	res, err := e.inner.Branch(ctx, req)
	e.mu.Lock()
	e.now = e.now.Add(time.Second)
	e.calls++
	fn := e.after[e.calls]
	e.mu.Unlock()
	if fn != nil {
		fn()
	}
	return res, err
}

// The wall time is checked between the children of a batch, not only
// between batches: a batch of six branches (two first moves under three
// seeds each) that runs out of time after the first child stops there,
// with that whole child recorded and ranked.
func TestWallTimeStopsInsideABatch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 1, `{"params":{"noise":0}}`)
	ev := &ticking{inner: f.worlds, now: time.Unix(0, 0)}
	d := f.delib.WithEvaluator(ev).WithClock(ev.clock)
	res, err := d.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.Beam, Depth: 5, Budget: 100,
		Seeds: 3, Workers: 1, WallTime: 1500 * time.Millisecond})
	require.NoError(t, err)
	b := res.Rounds[0].Budget
	require.Equal(t, "time", b.Stopped)
	require.Equal(t, 3, b.Used, "the first child's three seeds, then the time was up")
	require.Len(t, res.Rounds[0].Candidates, 1)
	require.Len(t, res.Rounds[0].Branches, 3)
}

// A cancelled deliberation says so with its own code, not as bad input,
// and the branches it recorded stay.
func TestCancelledDeliberationIsCancelled(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 1, `{"params":{"noise":0}}`)
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	ev := &ticking{inner: f.worlds, now: time.Unix(0, 0), after: map[int]func(){3: cancel}}
	res, err := f.delib.WithEvaluator(ev).Deliberate(ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.Beam,
		Depth: 5, Budget: 100, Workers: 1, Rounds: 3, Apply: true})
	require.Error(t, err)
	require.Equal(t, backend.ECANCELLED, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "cancelled")
	require.Contains(t, backend.ErrorMessage(err), "stay")
	require.Empty(t, res.Rounds)
	below, err := f.worlds.Descendants(f.ctx, run.WorldID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(below), 3, "the branches recorded before the cancel stay")

	// A deliberation that runs out of its caller's time says that instead.
	late, stop := context.WithDeadline(f.ctx, time.Now().Add(-time.Second))
	defer stop()
	_, err = f.delib.Deliberate(late, deliberation.Options{RunID: run.ID, Depth: 5, Budget: 100})
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "time")
}

// The lineage's outline says which round of deliberation each branch
// serves, and the round's record scores every branch, so the window can
// draw a search as a subtree of its parent coloured by score.
func TestOutlineNamesEachBranchsRound(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run := grid(t, f, 1, `{"params":{"noise":0}}`)
	for range 2 {
		_, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Depth: 2, Budget: 10})
		require.NoError(t, err)
	}
	rounds, err := f.delib.Rounds(f.ctx, run.ID)
	require.NoError(t, err)
	o, err := f.worlds.LineageOutline(f.ctx)
	require.NoError(t, err)
	round := map[string]int64{}
	for _, w := range o.Worlds {
		round[w.ID] = w.Round
	}
	require.Zero(t, round[run.WorldID], "the deliberating world is no branch")
	for _, r := range rounds {
		require.NotEmpty(t, r.Scores, "the record scores its branches")
		for w, score := range r.Scores {
			require.Equal(t, r.DeliberationIndex, round[w], w)
			require.LessOrEqual(t, score, 0.0, "the grid scores minus a path length")
		}
	}
}
