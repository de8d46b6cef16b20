package river_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/postgres/pgtest"
	"ducklm/backend/river"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// TestWorkerProcess is the worker process of TestKilledWorkersLoseNoBranch;
// it does nothing in a normal run.
func TestWorkerProcess(t *testing.T) {
	url := os.Getenv("DUCKLM_TEST_WORKER_URL")
	if url == "" {
		return
	}
	svc := openOn(t, url)
	slots := 2
	if n, err := strconv.Atoi(os.Getenv("DUCKLM_TEST_WORKER_SLOTS")); err == nil && n > 0 {
		slots = n
	}
	_, err := river.StartWorker(context.Background(), url, svc.Worlds,
		river.Options{Slots: slots, JobTimeout: time.Second, RescueAfter: 2 * time.Second})
	require.NoError(t, err)
	select {} // until killed
}

// Worker processes SIGKILLed at random moments during a deliberation: River
// gives their jobs to another worker, every branch is recorded once (a
// retry of a branch that was committed returns it), and every branch's
// seqs are gap-free.
func TestKilledWorkersLoseNoBranch(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	svc := openOn(t, url)
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 9})
	require.NoError(t, err)
	q, err := river.NewQueue(ctx, url)
	require.NoError(t, err)
	defer q.Close()

	type outcome struct {
		res deliberation.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := svc.Deliberation.WithEvaluator(q).Deliberate(ctx, deliberation.Options{
			RunID: run.ID, Strategy: deliberation.Beam, Width: 4, Depth: 8, Budget: 400, Workers: 6})
		done <- outcome{res, err}
	}()
	// Only worker processes that get killed work at first, so every kill
	// lands while there is work; then one worker that lives finishes.
	kills := 6
	if n, err := strconv.Atoi(os.Getenv("DUCKLM_TEST_KILLS")); err == nil && n > 0 {
		kills = n
	}
	for i := 0; i < kills; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "DUCKLM_TEST_WORKER_URL="+url)
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(1500+rand.IntN(1500)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
	}
	finisher, err := river.StartWorker(ctx, url, openOn(t, url).Worlds,
		river.Options{Slots: 2, JobTimeout: time.Second, RescueAfter: 2 * time.Second})
	require.NoError(t, err)
	defer finisher.Stop(context.Background())
	got := <-done
	require.NoError(t, got.err)
	r := got.res.Rounds[0]
	require.Len(t, r.Branches, r.Budget.Used)

	specs, err := svc.Worlds.Specs(ctx)
	require.NoError(t, err)
	require.Len(t, specs, r.Budget.Used+1, "every branch recorded once, none left over by a killed worker")
	for _, b := range r.Branches {
		events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: b.RunID})
		require.NoError(t, err)
		require.NotEmpty(t, events)
		for i, e := range events {
			require.EqualValues(t, i+1, e.Seq)
		}
	}
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	var retried, rescued int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FILTER (WHERE attempt > 1), count(*) FILTER (WHERE coalesce(cardinality(errors), 0) > 0) FROM river_job").Scan(&retried, &rescued))
	t.Logf("%d SIGKILLs of worker processes; %d branches in %d jobs, %d run more than once, %d with an error recorded",
		kills, r.Budget.Used, r.Budget.Used, retried, rescued)
}
