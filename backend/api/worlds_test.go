package api_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/settings"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// TestWorldDetailShowsTheLimitsItsProgramRunsUnder: a simulated world's
// detail carries the limits of its program's calls, the memory limit as the
// settings choose it.
func TestWorldDetailShowsTheLimitsItsProgramRunsUnder(t *testing.T) {
	a, svc := setupSvc(t)
	w, err := a.CreateWorld(api.WorldInput{Example: "branching_grid", Seed: 7})
	require.NoError(t, err)
	d, err := a.WorldDetail(w.Run.ID)
	require.NoError(t, err)
	require.NotNil(t, d.Limits)
	require.Equal(t, starlark.Limits{MaxSteps: 1_000_000, MaxStateBytes: 8 << 20, MaxMemoryBytes: 512 << 20}, *d.Limits)

	_, err = svc.SaveSettings(settings.Settings{WorldMemoryMiB: 1024})
	require.NoError(t, err)
	d, err = a.WorldDetail(w.Run.ID)
	require.NoError(t, err)
	require.Equal(t, int64(1024<<20), d.Limits.MaxMemoryBytes)
}

// TestRunWorldRefusesABadActionAndLeavesTheRunAsItWas: the window's step
// shares the CLI's: an action the program refuses is the caller's error
// (its sentence), and the run, its events and its state stay as they were.
func TestRunWorldRefusesABadActionAndLeavesTheRunAsItWas(t *testing.T) {
	a, svc := setupSvc(t)
	w, err := a.CreateWorld(api.WorldInput{Example: "branching_grid", Seed: 7})
	require.NoError(t, err)
	_, err = a.RunWorld(api.StepInput{RunID: w.Run.ID, Action: `"S"`})
	require.NoError(t, err)
	before, err := a.WorldDetail(w.Run.ID)
	require.NoError(t, err)
	events, err := svc.Worlds.History(context.Background(), w.Run.ID)
	require.NoError(t, err)

	for _, in := range []api.StepInput{
		{RunID: w.Run.ID, Action: `"UP"`},
		{RunID: w.Run.ID, Action: `"UP"`, Steps: 5, CheckpointEvery: 1},
	} {
		_, err = a.RunWorld(in)
		require.ErrorContains(t, err, "nothing was recorded")
		require.ErrorContains(t, err, "action must be one of N, S, E, W")
		after, err := a.WorldDetail(w.Run.ID)
		require.NoError(t, err)
		require.Equal(t, before, after)
		now, err := svc.Worlds.History(context.Background(), w.Run.ID)
		require.NoError(t, err)
		require.Equal(t, events, now)
	}
	out, err := a.RunWorld(api.StepInput{RunID: w.Run.ID, Action: `"N"`})
	require.NoError(t, err)
	require.Equal(t, backend.RunRunning, out.Run.Status)
}

// TestAnIdleWorldRunIsNotStepping: a simulated run that is open (status
// running) but that no batch of steps moves is idle: neither its detail
// nor the world list says it is stepping; while a batch is computed, both
// do, and after it neither does.
func TestAnIdleWorldRunIsNotStepping(t *testing.T) {
	a, svc := setupSvc(t)
	w, err := a.CreateWorld(api.WorldInput{Example: "branching_grid", Seed: 7})
	require.NoError(t, err)
	_, err = a.RunWorld(api.StepInput{RunID: w.Run.ID, Action: `"S"`, Steps: 3})
	require.NoError(t, err)

	stepping := func() (bool, bool) {
		d, err := a.WorldDetail(w.Run.ID)
		require.NoError(t, err)
		require.Equal(t, backend.RunRunning, d.Run.Status)
		p, err := a.ListWorlds(backend.WorldQuery{Domain: backend.DomainSimulated})
		require.NoError(t, err)
		require.Len(t, p.Worlds, 1)
		o, err := a.LineageOutline()
		require.NoError(t, err)
		require.Len(t, o.Worlds, 1)
		require.Equal(t, p.Worlds[0].LatestRun.Stepping, o.Worlds[0].Stepping, "the list and the lineage agree")
		return d.Stepping, p.Worlds[0].LatestRun.Stepping
	}
	d, l := stepping()
	require.False(t, d, "detail of an idle run")
	require.False(t, l, "list row of an idle run")

	var during [][2]bool
	_, err = svc.Worlds.RunSteps(context.Background(), w.Run.ID, world.RunOptions{Steps: 2, SaveEvery: 1, Progress: func(int, int) {
		d, l := svc.Worlds.Stepping(w.Run.ID), false
		if p, err := svc.Worlds.ListWorlds(context.Background(), backend.WorldQuery{Domain: backend.DomainSimulated}); err == nil {
			l = p.Worlds[0].LatestRun.Stepping
		}
		if o, err := svc.Worlds.LineageOutline(context.Background()); err != nil || !o.Worlds[0].Stepping {
			l = false
		}
		during = append(during, [2]bool{d, l})
	}})
	require.NoError(t, err)
	require.NotEmpty(t, during)
	for _, s := range during {
		require.Equal(t, [2]bool{true, true}, s, "while a batch is computed")
	}

	d, l = stepping()
	require.False(t, d, "detail after the batch")
	require.False(t, l, "list row after the batch")
}
