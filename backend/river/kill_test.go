package river_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	neturl "net/url"
	"os"
	"os/exec"
	"runtime/pprof"
	"syscall"
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

// TestWorkerProcess is the worker process of TestKilledWorkersLoseNoBranch
// and BenchmarkBranchesOnWorkers; it does nothing in a normal run.
func TestWorkerProcess(t *testing.T) {
	url := os.Getenv("DUCKLM_TEST_WORKER_URL")
	if url == "" {
		return
	}
	river.ProcsForSlots(envInt("DUCKLM_TEST_WORKER_SLOTS", 2)) // as ducklm worker does
	svc, err := service.OpenWith(context.Background(), t.TempDir(), service.Options{DatabaseURL: url, Quiet: true})
	require.NoError(t, err)
	_, err = river.StartWorker(context.Background(), url, svc.Worlds, river.Options{
		Slots: envInt("DUCKLM_TEST_WORKER_SLOTS", 2), ID: os.Getenv("DUCKLM_TEST_WORKER_ID"),
		JobTimeout: 30 * time.Second, RescueAfter: time.Minute, ReapEvery: 200 * time.Millisecond, Recorder: svc.DB})
	require.NoError(t, err)
	if path := os.Getenv("DUCKLM_TEST_WORKER_CPUPROFILE"); path != "" {
		// A CPU profile of the worker for the first seconds of its life
		// (DUCKLM_TEST_WORKER_PROFILE_SECONDS, 10): it is killed, not stopped.
		f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
		require.NoError(t, err)
		require.NoError(t, pprof.StartCPUProfile(f))
		time.Sleep(time.Duration(envInt("DUCKLM_TEST_WORKER_PROFILE_SECONDS", 10)) * time.Second)
		pprof.StopCPUProfile()
		require.NoError(t, f.Close())
	}
	select {} // until killed
}

// Worker processes SIGKILLed during a deliberation, each at a moment set by
// the round's progress: a victim works until it has finished 0 to 2 jobs
// and is running another, then dies a few milliseconds into it. Every kill
// lands before the round ends; the job it interrupted goes back to the
// queue (the next worker reaps it: the victim's liveness lock is free) and
// runs again. Every branch is recorded once, none is missing, no event is
// duplicated, every branch's seqs are gap-free. DUCKLM_TEST_KILLS sets the
// number of kills (6; the acceptance run uses 100).
func TestKilledWorkersLoseNoBranch(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	kills := envInt("DUCKLM_TEST_KILLS", 6)
	const batch = 2
	budget := (4*kills + 20) * batch // more than the victims can finish
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute+time.Duration(kills)*10*time.Second)
	defer cancel()
	svc := openOn(t, url)
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 9})
	require.NoError(t, err)
	q, err := river.NewQueue(ctx, url, river.QueueOptions{Batch: batch})
	require.NoError(t, err)
	defer q.Close()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()

	type outcome struct {
		res deliberation.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := svc.Deliberation.WithEvaluator(q).Deliberate(ctx, deliberation.Options{
			RunID: run.ID, Strategy: deliberation.Beam, Width: 128, Depth: 40, Seeds: 2, Budget: budget, Workers: 16})
		done <- outcome{res, err}
	}()
	roundOver := func() bool {
		select {
		case got := <-done:
			done <- got
			return true
		default:
			return false
		}
	}
	jobsOf := func(id string) (completed, running int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'completed'), count(*) FILTER (WHERE state = 'running')
			FROM river_job WHERE attempted_by[cardinality(attempted_by)] = $1`, id).Scan(&completed, &running))
		return
	}

	midJob := 0
	start := time.Now()
	for i := 0; i < kills; i++ {
		id := fmt.Sprintf("victim-%d-%d", os.Getpid(), i)
		cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
		// The victim's connections carry its id, so the test can wait for
		// the server to be done with them after the kill.
		named, err := neturl.Parse(url)
		require.NoError(t, err)
		q := named.Query()
		q.Set("application_name", id)
		named.RawQuery = q.Encode()
		cmd.Env = append(os.Environ(), "DUCKLM_TEST_WORKER_URL="+named.String(), "DUCKLM_TEST_WORKER_ID="+id, "DUCKLM_TEST_WORKER_SLOTS=1")
		require.NoError(t, cmd.Start())
		finish := rand.IntN(3)
		deadline := time.Now().Add(3 * time.Minute)
		for {
			require.False(t, roundOver(), "the round ended before kill %d of %d: it must outlast the kills", i+1, kills)
			require.True(t, time.Now().Before(deadline), "victim %s never took a job", id)
			if c, r := jobsOf(id); c >= finish && r > 0 {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
		require.False(t, roundOver(), "kill %d of %d landed after the round ended", i+1, kills)
		// A commit the victim had sent when it died still lands: the server
		// ends its sessions after them. Whether it died with a job under way
		// is read once they are gone (a job completed by that last commit
		// read as running when a loaded CI machine was slower to end them).
		for gone := time.Now().Add(30 * time.Second); ; {
			var sessions int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, id).Scan(&sessions))
			if sessions == 0 {
				break
			}
			require.True(t, time.Now().Before(gone), "the server kept %d sessions of the killed victim %s", sessions, id)
			time.Sleep(2 * time.Millisecond)
		}
		if _, r := jobsOf(id); r > 0 {
			midJob++ // it died with a job under way, not between two
		}
	}
	killPhase := time.Since(start)
	finisher, err := river.StartWorker(ctx, url, openOn(t, url).Worlds,
		river.Options{Slots: 2, JobTimeout: 30 * time.Second, RescueAfter: time.Minute, ReapEvery: 200 * time.Millisecond})
	require.NoError(t, err)
	defer finisher.Stop(context.Background())
	got := <-done
	require.NoError(t, got.err)
	r := got.res.Rounds[0]
	require.Equal(t, budget, r.Budget.Used, "the round spent its whole budget")
	require.Len(t, r.Branches, r.Budget.Used)

	// Every branch once: one world, one run, one fork record each; nothing
	// else left by a killed worker.
	specs, err := svc.Worlds.Specs(ctx)
	require.NoError(t, err)
	require.Len(t, specs, r.Budget.Used+1, "every branch recorded once, none left over by a killed worker")
	var forks, runs, streams, events, dupIDs, badStreams int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM forks), (SELECT count(*) FROM world_runs),
		(SELECT count(*) FROM streams), (SELECT count(*) FROM events),
		(SELECT count(*) FROM (SELECT id FROM events GROUP BY id HAVING count(*) > 1) d),
		(SELECT count(*) FROM (SELECT s.id FROM streams s LEFT JOIN events e ON e.stream_id = s.id
			GROUP BY s.id, s.head_seq HAVING count(e.pos) <> s.head_seq OR coalesce(max(e.seq), 0) <> s.head_seq OR count(DISTINCT e.seq) <> count(e.pos)) b)`).
		Scan(&forks, &runs, &streams, &events, &dupIDs, &badStreams))
	require.Equal(t, r.Budget.Used, forks)
	var branchRuns, branchWorlds int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(r.id), count(DISTINCT w.id) FROM world_specs w
		JOIN world_runs r ON r.world_id = w.id WHERE w.parent_world_id IS NOT NULL`).Scan(&branchRuns, &branchWorlds))
	require.Equal(t, r.Budget.Used, branchRuns, "one run per branch")
	require.Equal(t, r.Budget.Used, branchWorlds)
	require.Zero(t, dupIDs, "no event recorded twice")
	require.Zero(t, badStreams, "every stream's seqs are 1..head, gap-free")
	for _, b := range r.Branches {
		evs, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: b.RunID})
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		for i, e := range evs {
			require.EqualValues(t, i+1, e.Seq)
		}
	}
	var jobs, retried, reaped int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE attempt > 1),
		coalesce(sum(cardinality(errors)), 0) FROM river_job`).Scan(&jobs, &retried, &reaped))
	require.GreaterOrEqual(t, reaped, midJob, "every job a victim died in went back to the queue, with the death recorded")
	t.Logf("%d SIGKILLs of worker processes during a %d-branch round (kill phase %s), %d of them with a job under way; "+
		"%d jobs, %d run more than once, %d deaths recorded on jobs; %d events, none duplicated, seqs gap-free",
		kills, r.Budget.Used, killPhase.Round(time.Second), midJob, jobs, retried, reaped, events)
}
