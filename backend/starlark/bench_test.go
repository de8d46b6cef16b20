package starlark_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

// BenchmarkWorldStep measures Branching Grid steps driven by null actions
// (a breadth-first search per step), restarting the world at the goal.
func BenchmarkWorldStep(b *testing.B) {
	p := compile(b, string(starlark.BranchingGrid), starlark.Limits{})
	w := p.New()
	ctx := context.Background()
	_, err := w.Initialize(ctx, 1)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if w.Done() {
			_, err = w.Initialize(ctx, 1)
			require.NoError(b, err)
		}
		if _, err := w.Step(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// bigStateProgram's state is about 1 MB of canonical JSON.
const bigStateProgram = `
def init(seed, rng):
    return {"rows": [{"id": i, "x": rng.random(), "tag": "row-%d" % i, "ok": i % 2 == 0} for i in range(17000)]}

def step(state, action, rng):
    state["rows"][0]["x"] = rng.random()
    return state

def observe(state, role):
    return len(state["rows"])
`

func bigWorld(b *testing.B) *starlark.World {
	p := compile(b, bigStateProgram, starlark.Limits{})
	w := p.New()
	_, err := w.Initialize(context.Background(), 1)
	require.NoError(b, err)
	require.InDelta(b, 1<<20, len(w.State()), 1<<17)
	return w
}

// BenchmarkCheckpoint1MB measures CheckpointBytes of a ~1 MB state.
func BenchmarkCheckpoint1MB(b *testing.B) {
	w := bigWorld(b)
	ck, err := w.CheckpointBytes()
	require.NoError(b, err)
	b.SetBytes(int64(len(ck)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.CheckpointBytes(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestore1MB measures RestoreBytes of a ~1 MB checkpoint, which
// parses and re-canonicalizes the state to verify it.
func BenchmarkRestore1MB(b *testing.B) {
	w := bigWorld(b)
	ck, err := w.CheckpointBytes()
	require.NoError(b, err)
	b.SetBytes(int64(len(ck)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.RestoreBytes(ck); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStep1MB measures one step of a world with a ~1 MB state: the
// state is decoded and re-encoded on every step.
func BenchmarkStep1MB(b *testing.B) {
	w := bigWorld(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Step(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorldStepOverhead measures the host's cost per step (thread,
// decode, encode, commit) with a program that does almost nothing.
func BenchmarkWorldStepOverhead(b *testing.B) {
	w := compile(b, minimalProgram, starlark.Limits{}).New()
	ctx := context.Background()
	_, err := w.Initialize(ctx, 1)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Step(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkGridBranch is the computation of one deliberation branch on the
// Branching Grid, in memory and alone: restore the parent's checkpoint,
// take one action, list the actions, score, checkpoint. DUCKLM_BENCH_GRID
// sets the grid (64). scripts/bench-workers.sh runs it in 1 and in 2
// processes at once: what this machine's cores give the branches' own
// work, with no database, no queue and no searcher, the ceiling the
// workers' speed-up is read against.
func BenchmarkGridBranch(b *testing.B) {
	n := 64
	if v, err := strconv.Atoi(os.Getenv("DUCKLM_BENCH_GRID")); err == nil && v > 0 {
		n = v
	}
	src, err := starlark.BranchingGridOfSize(n)
	require.NoError(b, err)
	p := compile(b, string(src), starlark.Limits{})
	ctx := context.Background()
	start := p.New()
	_, err = start.Initialize(ctx, 11)
	require.NoError(b, err)
	cp, err := start.CheckpointBytes()
	require.NoError(b, err)
	acts, err := start.Actions(ctx)
	require.NoError(b, err)
	require.NotEmpty(b, acts)
	i := 0
	for b.Loop() {
		w := p.New()
		if err := w.RestoreBytes(cp); err != nil {
			b.Fatal(err)
		}
		if err := w.Reseed(uint64(i)); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Step(ctx, acts[i%len(acts)]); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Actions(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Score(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := w.CheckpointBytes(); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "branches/s")
}
