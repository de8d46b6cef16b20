package river_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/river"
	"ducklm/backend/starlark"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

// held is a Brancher that holds each branch until released.
type held struct {
	next    river.Brancher
	started chan struct{}
	release chan struct{}
}

func (h *held) Branch(ctx context.Context, req world.BranchRequest) (world.BranchResult, error) {
	select {
	case h.started <- struct{}{}:
	default:
	}
	select {
	case <-h.release:
	case <-ctx.Done():
		return world.BranchResult{}, ctx.Err()
	}
	return h.next.Branch(ctx, req)
}

// A worker keeps its row in the workers table: idle when it starts, its
// job while it works one, stopped when it leaves; the window's API lists it
// on the team's database.
func TestWorkersRecordHeartbeatAndCurrentJob(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	svc := openOn(t, url)
	a := api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 3})
	require.NoError(t, err)
	cps, err := svc.Worlds.Checkpoints(ctx, run.ID)
	require.NoError(t, err)
	require.NotEmpty(t, cps)

	h := &held{next: openOn(t, url).Worlds, started: make(chan struct{}, 1), release: make(chan struct{})}
	w, err := river.StartWorker(ctx, url, h, river.Options{Slots: 1, Recorder: svc.DB})
	require.NoError(t, err)
	stopped := false
	defer func() {
		if !stopped {
			w.Stop(context.Background())
		}
	}()
	find := func() backend.Worker {
		v, err := a.Workers()
		require.NoError(t, err)
		require.True(t, v.Shared)
		for _, x := range v.Workers {
			if x.ID == w.ID {
				return x
			}
		}
		t.Fatalf("worker %s is not listed: %+v", w.ID, v.Workers)
		return backend.Worker{}
	}
	me := find()
	require.Equal(t, backend.WorkerIdle, me.State)
	require.Equal(t, 1, me.Slots)
	require.NotZero(t, me.PID)

	q, err := river.NewQueue(ctx, url)
	require.NoError(t, err)
	defer q.Close()
	got := make(chan error, 1)
	go func() {
		_, err := q.Branch(ctx, world.BranchRequest{CheckpointID: cps[0].ID, Actions: []json.RawMessage{json.RawMessage(`"E"`)}})
		got <- err
	}()
	<-h.started
	require.Eventually(t, func() bool { return find().State == backend.WorkerWorking }, time.Minute, 50*time.Millisecond,
		"the job under way shows within the coalescing delay")
	me = find()
	require.Len(t, me.Jobs, 1)
	require.Equal(t, "branches", me.Jobs[0].Kind)
	require.Contains(t, me.Jobs[0].Label, "1 branches of round 0 from "+cps[0].ID)
	close(h.release)
	require.NoError(t, <-got)
	require.Eventually(t, func() bool { x := find(); return x.State == backend.WorkerIdle && x.Done == 1 }, time.Minute, 50*time.Millisecond)

	require.NoError(t, w.Stop(ctx))
	stopped = true
	me = find()
	require.Equal(t, backend.WorkerStopped, me.State)
	require.False(t, me.StoppedAt.IsZero())
}

// A worker process gets one Go processor per slot, at most the cores, and
// keeps what GOMAXPROCS says when it is set.
func TestProcsForSlots(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	river.ProcsForSlots(1)
	require.Equal(t, 1, runtime.GOMAXPROCS(0))
	river.ProcsForSlots(runtime.NumCPU() + 3)
	require.Equal(t, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	river.ProcsForSlots(0)
	require.Equal(t, 1, runtime.GOMAXPROCS(0), "no slots: unchanged")
	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	river.ProcsForSlots(1)
	require.Equal(t, 2, runtime.GOMAXPROCS(0), "the variable wins")
}
