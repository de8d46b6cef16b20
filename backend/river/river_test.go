package river_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/river"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var _ deliberation.Evaluator = (*river.Queue)(nil)

func openOn(t *testing.T, url string) *service.Service {
	t.Helper()
	svc, err := serviceOn(t, url)
	require.NoError(t, err)
	return svc
}

func serviceOn(t testing.TB, url string) (*service.Service, error) {
	svc, err := service.OpenWith(context.Background(), t.TempDir(), service.Options{DatabaseURL: url})
	if err == nil {
		t.Cleanup(func() { svc.Close() })
	}
	return svc, err
}

// A round of deliberation whose branches run as River jobs on two workers
// (each its own installation on the shared database) records every branch
// once, each one re-executes to what the worker recorded, and each score is
// what the program says of the branch's end.
func TestDeliberationBranchesRunOnWorkers(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	svc := openOn(t, url)
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 5})
	require.NoError(t, err)
	_, err = svc.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 2})
	require.NoError(t, err)

	for i := 0; i < 2; i++ {
		w, err := river.StartWorker(ctx, url, openOn(t, url).Worlds, river.Options{Slots: 2})
		require.NoError(t, err)
		t.Cleanup(func() { w.Stop(context.Background()) })
	}
	q, err := river.NewQueue(ctx, url)
	require.NoError(t, err)
	defer q.Close()
	res, err := svc.Deliberation.WithEvaluator(q).Deliberate(ctx, deliberation.Options{
		RunID: run.ID, Strategy: deliberation.Beam, Width: 2, Depth: 3, Budget: 24, Seeds: 2})
	require.NoError(t, err)

	r := res.Rounds[0]
	require.NotEmpty(t, r.Chosen)
	require.Positive(t, r.Budget.Used)
	require.Len(t, r.Branches, r.Budget.Used)
	for _, b := range r.Branches {
		runs, err := svc.Worlds.Runs(ctx, b.WorldID)
		require.NoError(t, err)
		require.Len(t, runs, 1, "branch %s is recorded once", b.WorldID)
		events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: b.RunID})
		require.NoError(t, err)
		for i, e := range events {
			require.EqualValues(t, i+1, e.Seq)
			require.Equal(t, r.DeliberationIndex, e.DeliberationIndex)
		}
		rep, err := svc.Worlds.Verify(ctx, b.RunID)
		require.NoError(t, err)
		require.True(t, rep.OK, "branch %s re-executes to what its worker recorded", b.RunID)
		if b.HasScore {
			as, err := svc.Worlds.Assess(ctx, runs[0].LatestCheckpointID)
			require.NoError(t, err)
			require.Equal(t, as.Score, b.Score)
		}
	}
	n, err := q.Pending(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	// Each job's branches, its completion and its announcement are ONE
	// transaction: every branch row was written by the transaction that
	// completed its job (PostgreSQL's xmin names it).
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	rows, err := pool.Query(ctx, `SELECT j.xmin::text, r.xmin::text, r.id FROM river_job j
		CROSS JOIN LATERAL jsonb_array_elements((j.metadata->>'output')::jsonb) AS b
		JOIN world_runs r ON r.id = b->'run'->>'id'
		WHERE j.kind = 'ducklm.branches'`)
	require.NoError(t, err)
	seen := 0
	for rows.Next() {
		var job, branch, id string
		require.NoError(t, rows.Scan(&job, &branch, &id))
		require.Equal(t, job, branch, "branch run %s is committed with its job's completion", id)
		seen++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, r.Budget.Used, seen, "every branch is in a completed job's output")
}

// Workers and queues that start at once on a new database set up River's
// tables once, without failing each other.
func TestWorkersStartingAtOnceMigrateOnce(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	svc := openOn(t, url)
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			if i%2 == 0 {
				q, err := river.NewQueue(ctx, url)
				if err == nil {
					q.Close()
				}
				errs <- err
				return
			}
			w, err := river.StartWorker(ctx, url, svc.Worlds, river.Options{})
			if err == nil {
				err = w.Stop(ctx)
			}
			errs <- err
		}()
	}
	for i := 0; i < 6; i++ {
		require.NoError(t, <-errs)
	}
}
