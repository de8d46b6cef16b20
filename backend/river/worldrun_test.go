package river_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/river"
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

// A world run queued as a job whose worker is SIGKILLed part-way: the job
// goes back to the queue, another worker resumes the run from its last
// checkpoint and the steps saved after it, and the run ends at its target
// time with every step recorded once, its seqs gap-free, re-executing to
// what was recorded and in the very state the same run reaches in one
// process.
func TestWorldRunOnWorkersResumesAfterAKill(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	svc := openOn(t, url)
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "counter", Program: []byte(counter), Seed: 21})
	require.NoError(t, err)
	q, err := river.NewQueue(ctx, url)
	require.NoError(t, err)
	defer q.Close()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()

	id := fmt.Sprintf("victim-run-%d", os.Getpid())
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DUCKLM_TEST_WORKER_URL="+url, "DUCKLM_TEST_WORKER_ID="+id, "DUCKLM_TEST_WORKER_SLOTS=1")
	require.NoError(t, cmd.Start())
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	const steps = 6_000
	type outcome struct {
		res world.StepOutcome
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := q.RunWorld(ctx, run.ID, run.WorldLocalTime, steps, nil, 1000)
		done <- outcome{res, err}
	}()
	// Killed at a random point of the run's first half, while the job is
	// under way.
	var at int64
	killAt := int64(1 + rand.IntN(steps/2))
	require.Eventually(t, func() bool {
		var running int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'running'
			AND attempted_by[cardinality(attempted_by)] = $1`, id).Scan(&running))
		r, err := svc.Worlds.Run(ctx, run.ID)
		require.NoError(t, err)
		at = r.WorldLocalTime
		return running == 1 && at >= killAt
	}, 3*time.Minute, 2*time.Millisecond, "the victim saves some steps")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	r, err := svc.Worlds.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Less(t, r.WorldLocalTime, int64(steps), "the kill landed before the run's end")

	finisher, err := river.StartWorker(ctx, url, openOn(t, url).Worlds, river.Options{ReapEvery: 200 * time.Millisecond})
	require.NoError(t, err)
	defer finisher.Stop(context.Background())
	got := <-done
	require.NoError(t, got.err)
	require.EqualValues(t, steps, got.res.Run.WorldLocalTime)

	events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: run.ID})
	require.NoError(t, err)
	stepsAt := map[int64]int{}
	for i, e := range events {
		require.EqualValues(t, i+1, e.Seq)
		if e.Type == world.EventStep {
			stepsAt[e.WorldLocalTime]++
		}
	}
	require.Len(t, stepsAt, steps, "every step recorded")
	for tm, n := range stepsAt {
		require.Equal(t, 1, n, "step at time %d recorded once", tm)
	}
	rep, err := svc.Worlds.Verify(ctx, run.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "the run re-executes to what was recorded")

	_, same, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "counter", Program: []byte(counter), Seed: 21})
	require.NoError(t, err)
	here, err := svc.Worlds.RunSteps(ctx, same.ID, world.RunOptions{Steps: steps})
	require.NoError(t, err)
	require.JSONEq(t, string(here.State), string(got.res.State), "the same state as the run in one process")
	var reaped int
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(cardinality(errors)), 0) FROM river_job`).Scan(&reaped))
	require.Equal(t, 1, reaped, "the victim's death is recorded on the job")
	t.Logf("killed at world time %d (aimed at %d) of %d; %d events", at, killAt, steps, len(events))
}
