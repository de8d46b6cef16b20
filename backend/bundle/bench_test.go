package bundle_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/bundle"
	"ducklm/backend/world"
)

// heapPeak samples HeapInuse until stop and returns its peak.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			mu.Lock()
			peak = max(peak, m.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// benchProgram counts its steps forever and emits one event a step.
const benchProgram = `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    n = state["n"] + 1
    return {"n": n}, [{"tick": n}]
def observe(state, role):
    return state
`

// BenchmarkBundle100k exports a run of 100,000 events (a simulated world's
// stream with step-sized payloads) and imports it into a fresh data
// directory, reporting events per second and the peak heap of each phase.
// DUCKLM_BENCH_BUNDLE_EVENTS changes the count (e.g. 1000000, to see that
// the peak does not grow with it). Run it with -benchtime 1x.
func BenchmarkBundle100k(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("DUCKLM_BENCH_BUNDLE_EVENTS")); err == nil && v > 0 {
		n = v
	}
	from := setup(b)
	// Real steps of a program that never ends: an import re-executes a
	// simulated run before it writes it, so made-up step records would be
	// refused. Each step emits one event, as grid steps do.
	_, run, err := from.worlds.Create(from.ctx, world.NewWorld{Name: "bench", Program: []byte(benchProgram), Seed: 1})
	require.NoError(b, err)
	head, err := from.ledger.Head(from.ctx, run.ID)
	require.NoError(b, err)
	steps := (n - int(head)) / 2 // a step and what it emitted
	_, err = from.worlds.RunSteps(from.ctx, run.ID, world.RunOptions{Steps: steps})
	require.NoError(b, err)
	if head, err = from.ledger.Head(from.ctx, run.ID); err != nil {
		b.Fatal(err)
	}
	n = int(head)
	key, err := bundle.LoadOrCreateKey(from.dir)
	require.NoError(b, err)
	path := filepath.Join(b.TempDir(), "bench.ducklm")

	var exportTime, importTime time.Duration
	var exportPeak, importPeak uint64
	b.ResetTimer()
	for range b.N {
		f, err := os.Create(path)
		require.NoError(b, err)
		stop := heapPeak()
		start := time.Now()
		m, err := bundle.Export(from.ctx, from.local, run.ID, f, bundle.ExportOptions{Key: &key, TempDir: filepath.Dir(path)})
		require.NoError(b, err)
		require.NoError(b, f.Close())
		exportTime += time.Since(start)
		exportPeak = max(exportPeak, stop())
		require.EqualValues(b, n, m.Counts.Events)

		b.StopTimer()
		to := setup(b)
		b.StartTimer()
		stop = heapPeak()
		start = time.Now()
		res, err := bundle.ImportFile(to.ctx, to.local, to.ledger, path, bundle.ImportOptions{AllowUnsigned: true})
		require.NoError(b, err)
		importTime += time.Since(start)
		importPeak = max(importPeak, stop())
		require.EqualValues(b, n, res.Added.Events)
	}
	st, err := os.Stat(path)
	require.NoError(b, err)
	per := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(per(exportTime), "export-events/s")
	b.ReportMetric(per(importTime), "import-events/s")
	b.ReportMetric(float64(exportPeak)/(1<<20), "export-peak-heap-MB")
	b.ReportMetric(float64(importPeak)/(1<<20), "import-peak-heap-MB")
	b.ReportMetric(float64(st.Size())/(1<<20), "bundle-MB")
}
