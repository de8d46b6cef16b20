package river_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/deliberation"
	"ducklm/backend/postgres/pgtest"
	"ducklm/backend/river"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// BenchmarkBranchesOnWorkers measures a round of deliberation whose
// branches run on 1 and on 2 worker processes (one slot each) against one
// PostgreSQL, and reports branches/s: the ratio of the two is the speed-up
// (DUCKLM_BENCH_BUDGET sets the round's budget, 2000 by default;
// DUCKLM_BENCH_IN_FLIGHT the branches queued at once, 64).
func BenchmarkBranchesOnWorkers(b *testing.B) {
	budget, inFlight := 2000, 64
	if n, err := strconv.Atoi(os.Getenv("DUCKLM_BENCH_BUDGET")); err == nil && n > 0 {
		budget = n
	}
	if n, err := strconv.Atoi(os.Getenv("DUCKLM_BENCH_IN_FLIGHT")); err == nil && n > 0 {
		inFlight = n
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.Setenv("OLLAMA_HOST", "127.0.0.1:1")
			url := pgtest.URL(b)
			ctx := context.Background()
			svc, err := serviceOn(b, url)
			require.NoError(b, err)
			for i := 0; i < workers; i++ {
				cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), "DUCKLM_TEST_WORKER_URL="+url, "DUCKLM_TEST_WORKER_SLOTS=1")
				require.NoError(b, cmd.Start())
				b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			}
			q, err := river.NewQueue(ctx, url)
			require.NoError(b, err)
			defer q.Close()
			delib := svc.Deliberation.WithEvaluator(q)
			var branches int
			var elapsed time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: int64(11 + i)})
				require.NoError(b, err)
				b.StartTimer()
				start := time.Now()
				res, err := delib.Deliberate(ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.Beam, Width: 64,
					Depth: 20, Budget: budget, Workers: inFlight})
				require.NoError(b, err)
				elapsed += time.Since(start)
				branches += res.Rounds[0].Budget.Used
			}
			b.ReportMetric(float64(branches)/elapsed.Seconds(), "branches/s")
			b.ReportMetric(float64(branches)/float64(b.N), "branches/round")
		})
	}
}
