package world_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// The worlds benchmarks (see scripts/bench.sh for the goals). Where the goal
// is a ratio, both sides are measured in the same run: BenchmarkFork forks a
// run with a short and a long history, and the summary divides the two.

// appendHistory appends n world-local events to a run's stream directly
// through the ledger, in large batches: legitimate history for questions
// that must not depend on its length.
func appendHistory(b *testing.B, f fixture, runID string, n int) {
	b.Helper()
	const batch = 5000
	payload := json.RawMessage(`{"type":"moved","from":[0,0],"to":[1,0],"slipped":false}`)
	for done := 0; done < n; done += batch {
		events := make([]backend.Event, min(batch, n-done))
		for i := range events {
			events[i] = backend.Event{Type: world.EventEmitted, Payload: payload, Reality: backend.WorldLocal}
		}
		_, err := f.ledger.Append(f.ctx, runID, backend.ExpectAny, events...)
		require.NoError(b, err)
	}
}

// blobBytes is the size of every file under the blob folder.
func blobBytes(b *testing.B, f fixture) int64 {
	b.Helper()
	var total int64
	err := filepath.WalkDir(filepath.Join(f.dir, "blobs"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	require.NoError(b, err)
	return total
}

func perOp(b *testing.B, unit string, scale float64) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/scale/float64(b.N), unit)
}

// BenchmarkFork forks a checkpoint taken after a history of 100 and of
// 100,000 events. A child shares its parent's history by reference, so the
// two should cost the same (goal: ratio <= 1.5, each <= 1 ms). The
// interleaved sub-benchmark alternates the two forks, so a load that drifts
// during the run weighs on both sides of its ratio alike.
func BenchmarkFork(b *testing.B) {
	type parent struct {
		f   fixture
		req world.ForkRequest
	}
	build := func(n int) parent {
		f := setup(b)
		_, run := create(b, f, 1)
		steps(b, f, run.ID, 3)
		appendHistory(b, f, run.ID, n)
		cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
		require.NoError(b, err)
		require.Greater(b, cp.LedgerSeq, int64(n))
		return parent{f, world.ForkRequest{
			CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch,
			Delta: json.RawMessage(`{"params":{"inc":2}}`),
		}}
	}
	fork := func(b *testing.B, p parent) {
		if _, _, _, err := p.f.worlds.Fork(p.f.ctx, p.req); err != nil {
			b.Fatal(err)
		}
	}
	short, long := build(100), build(100_000)
	for _, c := range []struct {
		n int
		p parent
	}{{100, short}, {100_000, long}} {
		b.Run(fmt.Sprintf("history=%d", c.n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fork(b, c.p)
			}
			perOp(b, "ns/fork", 1)
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var ts, tl time.Duration
		for b.Loop() {
			t0 := time.Now()
			fork(b, short)
			t1 := time.Now()
			fork(b, long)
			ts, tl = ts+t1.Sub(t0), tl+time.Since(t1)
		}
		b.ReportMetric(float64(ts.Nanoseconds())/float64(b.N), "ns/fork-100")
		b.ReportMetric(float64(tl.Nanoseconds())/float64(b.N), "ns/fork-100000")
		b.ReportMetric(float64(tl)/float64(ts), "long/short")
	})
}

// BenchmarkForkFloor measures the two durable writes a fork makes, alone:
// one ledger commit (two world-local events on a new stream, fsynced by
// SQLite) and one blob Put of checkpoint bytes that are already stored.
// Read BenchmarkFork's absolute time against them.
func BenchmarkForkFloor(b *testing.B) {
	b.Run("commit", func(b *testing.B) {
		f := setup(b)
		events := []backend.Event{
			{Type: world.EventForked, Payload: json.RawMessage(`{"divergence":"state_patch"}`), Reality: backend.WorldLocal},
			{Type: world.EventCheckpoint, Payload: json.RawMessage(`{"size":300}`), Reality: backend.WorldLocal},
		}
		for b.Loop() {
			if _, err := f.ledger.Append(f.ctx, backend.NewID(backend.KindRun), 0, events...); err != nil {
				b.Fatal(err)
			}
		}
		perOp(b, "ns/commit", 1)
	})
	b.Run("put-stored", func(b *testing.B) {
		f := setup(b)
		_, run := create(b, f, 1)
		cps, err := sqlite_worlds(f).ListCheckpoints(f.ctx, run.ID)
		require.NoError(b, err)
		data, err := f.blobs.Get(f.ctx, cps[0].Blob)
		require.NoError(b, err)
		for b.Loop() {
			if _, err := f.blobs.Put(f.ctx, data, "application/json"); err != nil {
				b.Fatal(err)
			}
		}
		perOp(b, "ns/put", 1)
	})
}

// bigState's init builds about 1 MB of state; its step leaves it unchanged.
const bigState = `
def init(seed, rng):
    return {"rows": [{"id": i, "x": rng.random(), "tag": "row-%d" % i, "ok": i % 2 == 0} for i in range(17000)]}

def step(state, action, rng):
    return state

def observe(state, role):
    return len(state["rows"])
`

// BenchmarkCheckpointsUnchanged1MB checkpoints a ~1 MB world whose state
// does not change, on a fresh data folder per iteration, then measures the
// blob folder (goal: 1,000 checkpoints of an unchanged 1 MB state take
// <= 1.1 MB; identical states share one blob).
//   - idle=1000: 1,000 Checkpoint calls with nothing in between.
//   - stepped=20: 20 times a step that returns the state unchanged, then a
//     checkpoint. The world's clock advances, and a checkpoint's bytes hold
//     the clock with the state; the summary scales B/checkpoint to 1,000.
func BenchmarkCheckpointsUnchanged1MB(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
		step bool
	}{{"idle=1000", 1000, false}, {"stepped=20", 20, true}} {
		b.Run(c.name, func(b *testing.B) {
			var bytes, stateBytes, records int64
			for b.Loop() {
				b.StopTimer()
				f := setup(b)
				_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "big", Program: []byte(bigState), Seed: 1})
				require.NoError(b, err)
				raw, err := f.worlds.State(f.ctx, run.ID)
				require.NoError(b, err)
				stateBytes = int64(len(raw))
				require.InDelta(b, 1<<20, stateBytes, 1<<17)
				before := blobBytes(b, f) // the program and the checkpoint Create takes
				b.StartTimer()
				for range c.n {
					if c.step {
						out, err := f.worlds.Step(f.ctx, run.ID, nil)
						if err != nil {
							b.Fatal(err)
						}
						if len(out.State) != len(raw) {
							b.Fatalf("the step changed the state")
						}
					}
					if _, err := f.worlds.Checkpoint(f.ctx, run.ID); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				cps, err := sqlite_worlds(f).ListCheckpoints(f.ctx, run.ID)
				require.NoError(b, err)
				records = int64(len(cps)) // with the one Create takes
				bytes = blobBytes(b, f)
				require.GreaterOrEqual(b, bytes, before)
				b.StartTimer()
			}
			b.ReportMetric(float64(bytes), "blob-bytes")
			b.ReportMetric(float64(stateBytes), "state-bytes")
			b.ReportMetric(float64(records), "records")
			b.ReportMetric(float64(bytes)/float64(records), "B/checkpoint")
			perOp(b, "ms/checkpoint", 1e6*float64(c.n))
		})
	}
}

// BenchmarkListCheckpoints1000 lists the 1,000 checkpoints of one run
// through the registry (goal: <= 8 ms), with a raw database/sql twin of the
// same query on the same database for comparison.
func BenchmarkListCheckpoints1000(b *testing.B) {
	f := setup(b)
	_, run := create(b, f, 1) // Create takes the first checkpoint
	_, err := f.worlds.RunSteps(f.ctx, run.ID, world.RunOptions{Steps: 999, CheckpointEvery: 1})
	require.NoError(b, err)
	// A neighbour run with checkpoints of its own, so the list must select.
	_, other := create(b, f, 2)
	_, err = f.worlds.RunSteps(f.ctx, other.ID, world.RunOptions{Steps: 200, CheckpointEvery: 1})
	require.NoError(b, err)

	b.Run("registry", func(b *testing.B) {
		store := sqlite_worlds(f)
		b.ReportAllocs()
		for b.Loop() {
			cps, err := store.ListCheckpoints(f.ctx, run.ID)
			if err != nil {
				b.Fatal(err)
			}
			if len(cps) != 1000 {
				b.Fatalf("listed %d checkpoints, want 1000", len(cps))
			}
		}
		perOp(b, "ms/list", 1e6)
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows, err := f.db.SQL.QueryContext(f.ctx, `SELECT id, world_id, run_id, world_local_time, ledger_seq, digest, size, created_at
				FROM checkpoints WHERE run_id = ? ORDER BY ledger_seq, id`, run.ID)
			if err != nil {
				b.Fatal(err)
			}
			var cps []backend.Checkpoint
			for rows.Next() {
				var c backend.Checkpoint
				var created int64
				if err := rows.Scan(&c.ID, &c.WorldID, &c.RunID, &c.WorldLocalTime, &c.LedgerSeq, &c.Blob.Digest, &c.Blob.Size, &created); err != nil {
					b.Fatal(err)
				}
				c.Blob.MediaType = "application/json"
				c.CreatedAt = time.UnixMicro(created).UTC()
				cps = append(cps, c)
			}
			if err := rows.Err(); err != nil {
				b.Fatal(err)
			}
			rows.Close()
			if len(cps) != 1000 {
				b.Fatalf("listed %d checkpoints, want 1000", len(cps))
			}
		}
		perOp(b, "ms/list", 1e6)
	})
}

// BenchmarkRunSteps10k runs 10,000 steps per iteration with their events and
// a checkpoint every 100 steps: the counter world (one emitted event a
// step), and the Branching Grid driven by the explicit action "N" (no
// breadth-first search: the agent mostly bumps into the top edge and never
// reaches the goal).
func BenchmarkRunSteps10k(b *testing.B) {
	const n = 10_000
	cases := []struct {
		name    string
		program []byte
		action  json.RawMessage
	}{
		{"counter", []byte(counter), nil},
		{"grid", starlark.BranchingGrid, json.RawMessage(`"N"`)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			f := setup(b)
			_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: c.name, Program: c.program, Seed: 1})
			require.NoError(b, err)
			opts := world.RunOptions{Steps: n, Action: c.action, CheckpointEvery: 100}
			runs := 0
			for b.Loop() {
				out, err := f.worlds.RunSteps(f.ctx, run.ID, opts)
				if err != nil {
					b.Fatal(err)
				}
				runs++
				if out.Done || out.Run.WorldLocalTime != int64(runs*n) {
					b.Fatalf("the world stopped at time %d (done %v); want %d", out.Run.WorldLocalTime, out.Done, runs*n)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "steps/s")
			perOp(b, "ms/run", 1e6)
			cps, err := sqlite_worlds(f).ListCheckpoints(f.ctx, run.ID)
			require.NoError(b, err)
			require.Len(b, cps, 1+b.N*n/100)
		})
	}
}
