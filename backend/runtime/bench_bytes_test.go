package runtime_test

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	gsqlite "github.com/libtnb/sqlite"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
)

// rawTwin is a database of its own beside a benchmark's, with the
// ledger's settings and table, for durable single-row INSERTs through
// plain database/sql: the raw twin of one ledger append.
type rawTwin struct {
	db     *sql.DB
	stream string
	seq    int
}

func openRawTwin(b testing.TB, dir string) *rawTwin {
	b.Helper()
	db, err := sql.Open(gsqlite.DriverName, store.DSN(filepath.Join(dir, "raw.db")))
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	_, err = db.Exec(`CREATE TABLE IF NOT EXISTS events (pos INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, stream_id TEXT NOT NULL,
		seq BIGINT NOT NULL, type TEXT NOT NULL, schema_version INTEGER NOT NULL, payload TEXT NOT NULL, reality TEXT NOT NULL,
		causation_id TEXT NOT NULL, correlation_id TEXT NOT NULL, recorded_at BIGINT NOT NULL, parent_time BIGINT NOT NULL,
		deliberation_index BIGINT NOT NULL, world_local_time BIGINT NOT NULL, UNIQUE (stream_id, seq))`)
	require.NoError(b, err)
	return &rawTwin{db: db, stream: backend.NewID(backend.KindRun)}
}

// appends times n durable single-row INSERTs, one transaction each.
func (r *rawTwin) appends(b testing.TB, n int) time.Duration {
	b.Helper()
	t0 := time.Now()
	for range n {
		r.seq++
		tx, err := r.db.Begin()
		require.NoError(b, err)
		_, err = tx.Exec(`INSERT INTO events (id, stream_id, seq, type, schema_version, payload, reality, causation_id,
			correlation_id, recorded_at, parent_time, deliberation_index, world_local_time) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			backend.NewID(backend.KindEvent), r.stream, r.seq, "step.finished", 1, `{"step":"s1","ok":true}`, "external_real", "", "",
			time.Now().UnixMicro(), 0, 0, r.seq)
		require.NoError(b, err)
		require.NoError(b, tx.Commit())
	}
	return time.Since(t0)
}

// dataBytes is what a data directory holds: the database's pages (after a
// checkpoint of its write-ahead log) and the blobs' bytes.
func dataBytes(b testing.TB, lb *loopBench) int64 {
	b.Helper()
	_, err := lb.db.SQL.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	require.NoError(b, err)
	var pages, size int64
	require.NoError(b, lb.db.SQL.QueryRow("PRAGMA page_count").Scan(&pages))
	require.NoError(b, lb.db.SQL.QueryRow("PRAGMA page_size").Scan(&size))
	total := pages * size
	require.NoError(b, filepath.WalkDir(filepath.Join(lb.dir, "blobs"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	}))
	return total
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTaskRunBytes runs one trivial task run of 200 and one of 10,000
// chained steps and reports what a step adds to the data directory, and
// the CPU a step costs near its start and at its end: checkpoints that do
// not grow with the run keep both flat. One 100-step window's CPU wanders
// by ±50% on a shared machine (a collection, a base written, another
// process's cache misses), so a long run compares the medians of ten
// 100-step windows at each end.
//
//	B/step          data directory bytes (database pages and blobs) per step
//	cpu-ms/step@100 process CPU per step: the median of the 100-step windows
//	                from step 100 to 1,100 (a 200-step run: steps 50-150)
//	cpu-ms/step@end the median of the last ten 100-step windows (a 200-step
//	                run: the last 100 steps)
//	cpu-end/100     their ratio
func BenchmarkTaskRunBytes(b *testing.B) {
	for _, n := range []int{200, 10_000} {
		b.Run(map[int]string{200: "steps=200", 10_000: "steps=10000"}[n], func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				lb := newLoopBench(b)
				lb.run(b, trivialPlan(2, true), 1) // the schema's first pages, the first blobs
				before := dataBytes(b, lb)
				var mu sync.Mutex
				finished := 0
				marks := map[int]time.Duration{}
				want := func(k int) bool { return k == 50 || k == 150 || k%100 == 0 }
				lb.ledger.OnCommit(func(events []backend.Event) {
					mu.Lock()
					defer mu.Unlock()
					for _, e := range events {
						if e.Type == runtime.EvStepFinished {
							finished++
							if want(finished) {
								marks[finished] = cpuTime()
							}
						}
					}
				})
				b.StartTimer()
				lb.run(b, trivialPlan(n, true), 1)
				b.StopTimer()
				perStep := float64(dataBytes(b, lb)-before) / float64(n)
				mu.Lock()
				window := func(end int) float64 { return float64(marks[end]-marks[end-100]) / 100 / 1e6 }
				early, late := window(150), window(n)
				if n >= 2_000 {
					var first, last []float64
					for k := 1; k <= 10; k++ {
						first = append(first, window(100+100*k))
						last = append(last, window(n-100*(k-1)))
					}
					early, late = median(first), median(last)
				}
				mu.Unlock()
				b.ReportMetric(perStep, "B/step")
				b.ReportMetric(early, "cpu-ms/step@100")
				b.ReportMetric(late, "cpu-ms/step@end")
				b.ReportMetric(late/early, "cpu-end/100")
				b.StartTimer()
			}
		})
	}
}

// median returns the median of vs (which it sorts).
func median(vs []float64) float64 {
	slices.Sort(vs)
	if n := len(vs); n%2 == 1 {
		return vs[n/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}
