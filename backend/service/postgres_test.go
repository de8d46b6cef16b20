package service_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

// TestMain stops the throw-away PostgreSQL the team-server tests started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Two installations (two data directories) pointed at one PostgreSQL share
// their worlds, runs, events, checkpoints and blobs: what one records, the
// other reads and continues.
func TestTwoDataDirectoriesShareOnePostgres(t *testing.T) {
	t.Setenv("OLLAMA_HOST", deadHost)
	url := pgtest.URL(t)
	ctx := context.Background()
	open := func() *service.Service {
		svc, err := service.OpenWith(ctx, t.TempDir(), service.Options{DatabaseURL: url})
		require.NoError(t, err)
		t.Cleanup(func() { svc.Close() })
		return svc
	}
	a, b := open(), open()

	spec, run, err := a.Worlds.Create(ctx, world.NewWorld{Name: "shared grid", Program: starlark.BranchingGrid, Seed: 7})
	require.NoError(t, err)
	_, err = a.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 6, CheckpointEvery: 3})
	require.NoError(t, err)

	runs, err := b.Worlds.Runs(ctx, spec.ID)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.EqualValues(t, 6, runs[0].WorldLocalTime)
	cps, err := b.Worlds.Checkpoints(ctx, run.ID)
	require.NoError(t, err)
	require.NotEmpty(t, cps)
	program, err := b.Blobs.Get(ctx, spec.Program)
	require.NoError(t, err, "blobs live in the database, so the other machine reads them")
	require.Equal(t, starlark.BranchingGrid, program)

	// The other installation continues the run where the first stopped.
	_, err = b.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 2})
	require.NoError(t, err)
	head, err := a.Ledger.Head(ctx, run.ID)
	require.NoError(t, err)
	events, err := a.Ledger.Query(ctx, backend.EventQuery{Stream: run.ID})
	require.NoError(t, err)
	require.Len(t, events, int(head))
	for i, e := range events {
		require.EqualValues(t, i+1, e.Seq)
	}

	oa, err := a.Overview(ctx, 5)
	require.NoError(t, err)
	ob, err := b.Overview(ctx, 5)
	require.NoError(t, err)
	require.Equal(t, oa.Counts, ob.Counts)
	require.Equal(t, oa.SchemaVersion, oa.LatestSchemaVersion)
	require.NotContains(t, oa.DatabasePath, "ducklm.db", "the window names the PostgreSQL database, not a file")
}

// A window on one installation follows another's run live: commits of
// other processes reach this process's bus (LISTEN/NOTIFY, then the ledger).
func TestOtherProcessesCommitsArriveLive(t *testing.T) {
	t.Setenv("OLLAMA_HOST", deadHost)
	url := pgtest.URL(t)
	ctx := context.Background()
	open := func() *service.Service {
		svc, err := service.OpenWith(ctx, t.TempDir(), service.Options{DatabaseURL: url})
		require.NoError(t, err)
		t.Cleanup(func() { svc.Close() })
		return svc
	}
	a, b := open(), open()
	all := b.Bus.Subscribe(ctx, "", 1)
	defer all.Close()

	_, run, err := a.Worlds.Create(ctx, world.NewWorld{Name: "watched", Program: starlark.BranchingGrid, Seed: 3})
	require.NoError(t, err)
	one := b.Bus.Subscribe(ctx, run.ID, 1)
	defer one.Close()
	deadline := time.After(60 * time.Second)
	receive := func(from, to int64) {
		for seq := from; seq <= to; seq++ {
			select {
			case e := <-one.C():
				require.Equal(t, seq, e.Seq, "in order, without a gap or a duplicate")
			case <-deadline:
				t.Fatalf("event %d of %d of the other installation's run never arrived", seq, to)
			}
		}
	}
	// The history first (read from the ledger), then what comes live.
	created, err := a.Ledger.Head(ctx, run.ID)
	require.NoError(t, err)
	receive(1, created)
	_, err = a.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 5, SaveEvery: 1})
	require.NoError(t, err)
	head, err := a.Ledger.Head(ctx, run.ID)
	require.NoError(t, err)
	require.Greater(t, head, created)
	receive(created+1, head)
	for {
		select {
		case e := <-all.C():
			if e.Stream == run.ID && e.Seq == head {
				return
			}
		case <-deadline:
			t.Fatal("the all-streams subscription never saw the other installation's last event")
		}
	}
}
