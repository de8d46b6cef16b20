package api_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/service"
)

func TestDeliberateFromTheWindow(t *testing.T) {
	a, svc := setupSvc(t)
	c, err := a.CreateWorld(api.WorldInput{Example: "branching_grid", Seed: 4})
	require.NoError(t, err)

	// A long search, cancelled as soon as its progress shows.
	var reports atomic.Int64
	stop := svc.Progress.Subscribe(func(p service.Progress) {
		if p.Op == "long" && reports.Add(1) == 1 {
			go a.CancelDeliberation("long")
		}
	})
	cancelled, err := a.Deliberate(api.DeliberateInput{RunID: c.Run.ID, Strategy: "mcts", Depth: 20, Budget: 100000, Op: "long"})
	stop()
	// A cancel the user asked for is the call's answer, not its failure
	// (over HTTP an error is a 422 the browser logs as a failed request).
	require.NoError(t, err)
	require.Contains(t, cancelled.Cancelled, "the deliberation was cancelled after 0 finished rounds")
	require.Empty(t, cancelled.Rounds)
	require.Positive(t, reports.Load())
	rounds, err := a.Deliberations(c.Run.ID)
	require.NoError(t, err)
	require.Empty(t, rounds, "a cancelled round has no record")
	was, err := a.CancelDeliberation("long")
	require.NoError(t, err)
	require.False(t, was, "nothing runs as long any more")

	res, err := a.Deliberate(api.DeliberateInput{RunID: c.Run.ID, Strategy: "beam", Width: 2, Depth: 3, Budget: 30, Op: "short"})
	require.NoError(t, err)
	require.Len(t, res.Rounds, 1)
	require.Empty(t, res.Cancelled)
	rounds, err = a.Deliberations(c.Run.ID)
	require.NoError(t, err)
	require.Len(t, rounds, 1)
	// The first screen counts the worlds the Worlds screen lists, and the
	// branches it leaves out apart (they are drawn under their round).
	o, err := a.Overview()
	require.NoError(t, err)
	list, err := a.ListWorlds(backend.WorldQuery{Domain: backend.DomainSimulated, WithoutBranches: true})
	require.NoError(t, err)
	require.EqualValues(t, 1, o.Counts.SimulatedWorlds)
	require.EqualValues(t, list.Total, o.Counts.SimulatedWorlds)
	require.EqualValues(t, list.Branches, o.Counts.DeliberationBranches)
	require.GreaterOrEqual(t, o.Counts.DeliberationBranches, int64(len(res.Rounds[0].Branches)), "every branch of the round, and those the cancelled search had recorded")
	out, err := a.ApplyDeliberation(c.Run.ID, rounds[0].DeliberationIndex)
	require.NoError(t, err)
	require.EqualValues(t, 1, out.Run.WorldLocalTime)
	_, err = a.ApplyDeliberation(c.Run.ID, rounds[0].DeliberationIndex)
	require.ErrorContains(t, err, "deliberate again")

	_, err = a.Deliberate(api.DeliberateInput{RunID: c.Run.ID, Strategy: "greedy"})
	require.ErrorContains(t, err, `unknown strategy "greedy"`)
}

// TestADeliberationRoundSaysWhetherTheWorldTookItsChoice: a recorded round
// says whether the run took its choice and at what world time (applied
// from the window later, or by the deliberation itself), and why its
// search stopped.
func TestADeliberationRoundSaysWhetherTheWorldTookItsChoice(t *testing.T) {
	a, _ := setupSvc(t)
	c, err := a.CreateWorld(api.WorldInput{Example: "branching_grid", Seed: 4})
	require.NoError(t, err)

	res, err := a.Deliberate(api.DeliberateInput{RunID: c.Run.ID, Strategy: "beam", Width: 2, Depth: 3, Budget: 30})
	require.NoError(t, err)
	require.Zero(t, res.Rounds[0].AppliedAt, "a round not applied")
	rounds, err := a.Deliberations(c.Run.ID)
	require.NoError(t, err)
	require.Zero(t, rounds[0].AppliedAt, "a round not applied")
	require.Contains(t, []string{"budget", "time", "exhausted"}, rounds[0].Budget.Stopped)

	_, err = a.ApplyDeliberation(c.Run.ID, rounds[0].DeliberationIndex)
	require.NoError(t, err)
	rounds, err = a.Deliberations(c.Run.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, rounds[0].AppliedAt, "applied from the window: the world took it at t=1")

	res, err = a.Deliberate(api.DeliberateInput{RunID: c.Run.ID, Strategy: "beam", Width: 2, Depth: 3, Budget: 30, Apply: true})
	require.NoError(t, err)
	require.EqualValues(t, 2, res.Rounds[0].AppliedAt)
	rounds, err = a.Deliberations(c.Run.ID)
	require.NoError(t, err)
	require.Len(t, rounds, 2)
	require.EqualValues(t, 1, rounds[0].AppliedAt)
	require.EqualValues(t, 2, rounds[1].AppliedAt, "applied by the deliberation")
}
