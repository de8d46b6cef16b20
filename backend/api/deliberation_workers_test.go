package api_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/river"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

// The window's Deliberate runs a round's branches on the team's workers
// when asked: the worker records them (its count of jobs done grows), the
// round ranks them as an in-process one does, and the progress counts them.
func TestTheWindowDeliberatesOnTheTeamsWorkers(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	open := func() *service.Service {
		svc, err := service.OpenWith(ctx, t.TempDir(), service.Options{DatabaseURL: url})
		require.NoError(t, err)
		t.Cleanup(func() { svc.Close() })
		return svc
	}
	svc := open()
	a := api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 5})
	require.NoError(t, err)
	_, err = svc.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 2})
	require.NoError(t, err)

	in := api.DeliberateInput{RunID: run.ID, Strategy: "beam", Width: 2, Depth: 3, Budget: 12, Seeds: 1, Rounds: 1, OnWorkers: 4, Op: "on-workers"}
	_, err = a.Deliberate(in)
	require.EqualError(t, err, "no worker is alive to take the branches; start one with `ducklm worker` on a machine that reaches the team's database, or run the branches here")

	other := open() // the worker's own installation
	w, err := river.StartWorker(ctx, url, other.Worlds, river.Options{Slots: 2, Recorder: other.DB})
	require.NoError(t, err)
	defer w.Stop(context.Background())

	var reports atomic.Int64
	stop := svc.Progress.Subscribe(func(p service.Progress) {
		if p.Op == "on-workers" {
			reports.Add(1)
		}
	})
	res, err := a.Deliberate(in)
	stop()
	require.NoError(t, err)
	require.Len(t, res.Rounds, 1)
	r := res.Rounds[0]
	require.Positive(t, r.Budget.Used)
	require.NotEmpty(t, r.Chosen)
	require.Positive(t, reports.Load(), "the window follows the round's progress")

	// The worker counts a finished job in its row within about half a second.
	require.Eventually(t, func() bool {
		list, err := a.Workers()
		require.NoError(t, err)
		require.Len(t, list.Workers, 1)
		return list.Workers[0].Done > 0
	}, time.Minute, 50*time.Millisecond, "the branches ran on the worker")
	for _, b := range r.Branches {
		events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: b.RunID})
		require.NoError(t, err)
		require.NotEmpty(t, events, "branch %s is recorded in the shared ledger", b.RunID)
	}
}

func TestDeliberatingOnWorkersNeedsTheTeamsDatabase(t *testing.T) {
	a := setup(t)
	_, err := a.Deliberate(api.DeliberateInput{RunID: "run_x", Strategy: "beam", Width: 1, Depth: 1, Budget: 1, Seeds: 1, Rounds: 1, OnWorkers: 2})
	require.EqualError(t, err, "branches run on workers only for a team's PostgreSQL; this window uses this machine's SQLite database (choose the team's in Settings → Database)")
}
