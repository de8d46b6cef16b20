package river_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/deliberation"
	"ducklm/backend/river"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

// resultDigest names what a round found, whatever ids its branches got:
// the chosen action, the branch count and a digest of every branch's
// action, depth, seed and outcome. Two runs of one search agree on it.
func resultDigest(r deliberation.Round) string {
	lines := make([]string, 0, len(r.Branches))
	for _, br := range r.Branches {
		lines = append(lines, fmt.Sprintf("%d %s %d %v %v %v %q", br.Depth, br.Action, br.Seed, br.Score, br.HasScore, br.Done, br.Failed))
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return fmt.Sprintf("chosen=%s branches=%d digest=%s", r.Chosen, len(r.Branches), hex.EncodeToString(sum[:8]))
}

// inProcessTwin runs opt's round in this process, on a SQLite copy of the
// parent run (imported from its bundle: the same ids, so the same seeds),
// with branches in goroutines: what the workers' round must equal.
func inProcessTwin(b *testing.B, parent []byte, opt deliberation.Options) deliberation.Result {
	ctx := context.Background()
	b.Setenv(service.DatabaseURLEnv, "") // this copy is SQLite
	svc, err := service.OpenWith(ctx, b.TempDir(), service.Options{})
	require.NoError(b, err)
	defer svc.Close()
	path := filepath.Join(b.TempDir(), "parent.ducklm")
	require.NoError(b, os.WriteFile(path, parent, 0o600))
	_, err = bundle.ImportFile(ctx, svc.Bundles(), svc.Ledger, path, bundle.ImportOptions{AllowUnsigned: true})
	require.NoError(b, err)
	res, err := svc.Deliberation.Deliberate(ctx, opt)
	require.NoError(b, err)
	return res
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// benchGrid is the Branching Grid example on an n×n grid.
func benchGrid(b *testing.B, n int) []byte {
	src, err := starlark.BranchingGridOfSize(n)
	require.NoError(b, err)
	return src
}

// benchParent returns the run a round searches from, and its bundle (the
// parent as it is before the round, for the in-process twin). Each run of
// the benchmark has a fresh database, and a world created afresh has new
// ids, from which its branches' seeds come: two runs would search
// different trees. With DUCKLM_BENCH_PARENT (a folder), the first run of a
// grid keeps its new world there as a bundle and every later run (fixed
// true) imports that same bundle, so every round searches the same tree.
func benchParent(b *testing.B, ctx context.Context, svc *service.Service, grid int, fixed bool) (string, []byte) {
	dir := os.Getenv("DUCKLM_BENCH_PARENT")
	path := filepath.Join(dir, fmt.Sprintf("parent-grid%d.ducklm", grid))
	if dir != "" && fixed {
		if data, err := os.ReadFile(path); err == nil {
			res, err := bundle.ImportFile(ctx, svc.Bundles(), svc.Ledger, path, bundle.ImportOptions{AllowUnsigned: true})
			require.NoError(b, err)
			for _, id := range res.AddedIDs {
				if strings.HasPrefix(id, string(backend.KindRun)+"_") {
					return id, data
				}
			}
			require.FailNow(b, "the parent bundle holds no run", path)
		}
	}
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: benchGrid(b, grid), Seed: 11})
	require.NoError(b, err)
	var parent bytes.Buffer
	_, err = bundle.Export(ctx, svc.Bundles(), run.ID, &parent, bundle.ExportOptions{})
	require.NoError(b, err)
	if dir != "" && fixed {
		require.NoError(b, os.WriteFile(path, parent.Bytes(), 0o600))
	}
	return run.ID, parent.Bytes()
}

// BenchmarkBranchesOnWorkers measures one round of deliberation whose
// branches run on 1 and on 2 worker processes (one slot each) against one
// PostgreSQL, and reports branches/s: the ratio of the two is the speed-up.
// Every run searches the same world with the same seed, so every run
// records the same branches (scripts/bench-workers.sh runs the two
// interleaved, each on a fresh cluster, and prints the table). Beside the
// rate it reports what the extrapolation in docs/team-server.md needs: the
// CPU of the workers (their whole process trees), of PostgreSQL (the
// postmaster's tree) and of the searching process, per branch; commits,
// rows written and WAL bytes per branch.
//
// DUCKLM_BENCH_BUDGET sets the round's budget (2000), DUCKLM_BENCH_IN_FLIGHT
// the branches asked for at once (64), DUCKLM_BENCH_BATCH the branches one
// job carries (8), DUCKLM_BENCH_WORKERS_URL a PostgreSQL to use instead of a
// throw-away one (the namespace script's), DUCKLM_BENCH_EXTERNAL_WORKERS=N
// that N workers were started elsewhere (not by the benchmark).
func BenchmarkBranchesOnWorkers(b *testing.B) {
	budget := envInt("DUCKLM_BENCH_BUDGET", 2000)
	inFlight := envInt("DUCKLM_BENCH_IN_FLIGHT", 64)
	batch := envInt("DUCKLM_BENCH_BATCH", 8)
	grid := envInt("DUCKLM_BENCH_GRID", 9)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.Setenv("OLLAMA_HOST", "127.0.0.1:1")
			url := os.Getenv("DUCKLM_BENCH_WORKERS_URL")
			if url == "" {
				url = pgtest.URL(b)
			}
			ctx := context.Background()
			svc, err := service.OpenWith(context.Background(), b.TempDir(), service.Options{DatabaseURL: url, Quiet: true}) // as `ducklm world deliberate` opens it
			b.Cleanup(func() { svc.Close() })
			require.NoError(b, err)
			var pids []int
			if n := envInt("DUCKLM_BENCH_EXTERNAL_WORKERS", 0); n > 0 {
				workers = n
			} else {
				for i := 0; i < workers; i++ {
					cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
					cmd.Env = append(os.Environ(), "DUCKLM_TEST_WORKER_URL="+url, "DUCKLM_TEST_WORKER_SLOTS=1")
					require.NoError(b, cmd.Start())
					pids = append(pids, cmd.Process.Pid)
					b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				}
			}
			// The round starts when every worker is in the queue: each
			// writes its row once River has started.
			require.Eventually(b, func() bool {
				ws, err := svc.DB.Workers(ctx, time.Now().Add(-time.Minute), time.Now())
				n := 0
				for _, w := range ws {
					if err == nil && w.State == backend.WorkerIdle {
						n++
					}
				}
				return n >= workers
			}, 2*time.Minute, 20*time.Millisecond, "%d workers join the queue", workers)
			q, err := river.NewQueue(ctx, url, river.QueueOptions{Batch: batch})
			require.NoError(b, err)
			defer q.Close()
			pool, err := pgxpool.New(ctx, url)
			require.NoError(b, err)
			defer pool.Close()
			delib := svc.Deliberation.WithEvaluator(q)
			var branches int
			var elapsed time.Duration
			var m, m0 measures
			var lockWaiters, lockSamples int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				runID, parent := benchParent(b, ctx, svc, grid, i == 0)
				m0 = measure(b, ctx, pool, pids)
				stopSampling := sampleLockWaits(ctx, pool)
				b.StartTimer()
				own := ownCPU()
				start := time.Now()
				res, err := delib.Deliberate(ctx, deliberation.Options{RunID: runID, Strategy: deliberation.Beam, Width: 128,
					Depth: 40, Seeds: 2, Budget: budget, Workers: inFlight})
				require.NoError(b, err)
				elapsed += time.Since(start)
				own = ownCPU() - own
				b.StopTimer()
				waiting, samples := stopSampling()
				lockWaiters += waiting
				lockSamples += samples
				m = m.add(measure(b, ctx, pool, pids).sub(m0))
				m.selfCPU += own
				b.StartTimer()
				branches += res.Rounds[0].Budget.Used
				if path := os.Getenv("DUCKLM_BENCH_RESULT"); path != "" {
					b.StopTimer()
					here := inProcessTwin(b, parent, deliberation.Options{RunID: runID, Strategy: deliberation.Beam, Width: 128,
						Depth: 40, Seeds: 2, Budget: budget, Workers: inFlight})
					f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
					require.NoError(b, err)
					fmt.Fprintf(f, "workers=%d on-workers: %s | in-process: %s\n", workers, resultDigest(res.Rounds[0]), resultDigest(here.Rounds[0]))
					require.NoError(b, f.Close())
					b.StartTimer()
				}
			}
			n := float64(branches)
			b.ReportMetric(n/elapsed.Seconds(), "branches/s")
			b.ReportMetric(n/float64(b.N), "branches/round")
			b.ReportMetric(m.workerCPU.Seconds()*1000/n, "worker-cpu-ms/branch")
			b.ReportMetric(m.pgCPU.Seconds()*1000/n, "pg-cpu-ms/branch")
			b.ReportMetric(m.selfCPU.Seconds()*1000/n, "queue-cpu-ms/branch")
			b.ReportMetric(float64(m.commits)/n, "commits/branch")
			b.ReportMetric(float64(m.rows)/n, "rows/branch")
			b.ReportMetric(float64(m.wal)/n, "wal-B/branch")
			b.ReportMetric(float64(m.commits)/elapsed.Seconds(), "commits/s")
			b.ReportMetric(float64(lockWaiters)/float64(max(1, lockSamples)), "ledger-lock-waiters")
		})
	}
}
