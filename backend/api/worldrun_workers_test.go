package api_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/api"
	"ducklm/backend/river"
	"ducklm/backend/service"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

// counter is a world that never ends: each step draws from the RNG.
const counter = `
def init(seed):
    return {"n": 0, "sum": 0}

def step(state, action, rng):
    d = rng.randint(0, 9)
    return {"n": state["n"] + 1, "sum": state["sum"] + d}, [{"drew": d}]

def observe(state, role):
    return state
`

// The window's Run on the team's workers queues the steps as one job: a
// worker takes them, the progress counts steps up to all of them, and the
// run replays exactly (Verify). Without a worker alive
// it is refused with a sentence, and nothing is queued.
func TestTheWindowRunsAWorldOnTheTeamsWorkers(t *testing.T) {
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
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "counter", Program: []byte(counter), Seed: 5})
	require.NoError(t, err)

	in := api.StepInput{RunID: run.ID, Steps: 250, OnWorkers: true, Op: "world-on-workers"}
	_, err = a.RunWorld(in)
	require.EqualError(t, err, "no worker is alive to take the run; start one with `ducklm worker` on a machine that reaches the team's database, or run the steps here")

	other := open() // the worker's own installation
	w, err := river.StartWorker(ctx, url, other.Worlds, river.Options{Slots: 1, Recorder: other.DB})
	require.NoError(t, err)
	defer w.Stop(context.Background())

	var mu sync.Mutex
	var seen []service.Progress
	stop := svc.Progress.Subscribe(func(p service.Progress) {
		if p.Op == in.Op {
			mu.Lock()
			seen = append(seen, p)
			mu.Unlock()
		}
	})
	out, err := a.RunWorld(in)
	stop()
	require.NoError(t, err)
	require.EqualValues(t, 250, out.Run.WorldLocalTime)
	mu.Lock()
	require.NotEmpty(t, seen)
	last := seen[len(seen)-1]
	mu.Unlock()
	require.Equal(t, service.Progress{Op: in.Op, Phase: "on the team's workers", Done: 250, Total: 250, Unit: "steps"}, last)
	require.Eventually(t, func() bool {
		list, err := a.Workers()
		require.NoError(t, err)
		require.Len(t, list.Workers, 1)
		return list.Workers[0].Done > 0
	}, time.Minute, 50*time.Millisecond, "the steps ran on the worker")

	rep, err := a.Verify(run.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "the worker's steps replay exactly: %+v", rep.Divergence)
}

// On this machine's own SQLite database a world run on workers is refused
// with a sentence that says where to choose the team's.
func TestWorldRunsOnWorkersNeedTheTeamsDatabase(t *testing.T) {
	a := setup(t)
	created, err := a.CreateWorld(api.WorldInput{Example: "branching_grid", Seed: 1})
	require.NoError(t, err)
	_, err = a.RunWorld(api.StepInput{RunID: created.Run.ID, Steps: 5, OnWorkers: true})
	require.EqualError(t, err, "world runs run on workers only for a team's PostgreSQL; this window uses this machine's SQLite database (choose the team's in Settings → Database)")
	detail, err := a.WorldDetail(created.Run.ID)
	require.NoError(t, err)
	require.Zero(t, detail.Run.WorldLocalTime, "nothing ran")
}

// Stop on a world run on the team's workers cancels its job: the worker
// stops at its next save, the run keeps the steps taken, and it replays.
func TestAWorldRunOnWorkersStops(t *testing.T) {
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
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "counter", Program: []byte(counter), Seed: 5})
	require.NoError(t, err)
	other := open()
	w, err := river.StartWorker(ctx, url, other.Worlds, river.Options{Slots: 1, Recorder: other.DB})
	require.NoError(t, err)
	defer w.Stop(context.Background())

	stopped, err := a.CancelWorldRun("nothing-running")
	require.NoError(t, err)
	require.False(t, stopped)

	const steps = 5_000_000 // far more than the test waits for
	in := api.StepInput{RunID: run.ID, Steps: steps, OnWorkers: true, Op: "world-run-stop"}
	done := make(chan error, 1)
	go func() { _, err := a.RunWorld(in); done <- err }()
	require.Eventually(t, func() bool {
		r, err := svc.Worlds.Run(ctx, run.ID)
		require.NoError(t, err)
		return r.WorldLocalTime > 0
	}, time.Minute, 20*time.Millisecond, "the worker took steps")
	stopped, err = a.CancelWorldRun(in.Op)
	require.NoError(t, err)
	require.True(t, stopped)
	select {
	case err := <-done:
		require.EqualError(t, err, "the run on the team's workers was stopped; it keeps the steps its worker saved")
	case <-ctx.Done():
		t.Fatal("RunWorld did not return after Stop")
	}
	// The worker stops too: its job ends.
	require.Eventually(t, func() bool {
		list, err := a.Workers()
		require.NoError(t, err)
		return len(list.Workers) == 1 && len(list.Workers[0].Jobs) == 0 && list.Workers[0].Done > 0
	}, time.Minute, 50*time.Millisecond, "the worker left the job")
	r, err := svc.Worlds.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Less(t, r.WorldLocalTime, int64(steps))
	rep, err := a.Verify(run.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
}
