package worldproc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/starlark"
	"ducklm/backend/worldproc"
)

// A probe — a branch's steps, then actions and score where they led, in one
// exchange — gives what the calls one by one give, in this process and in a
// worker: the same steps (states, events, clock), the same actions and
// score, and a world that goes on identically after it. From states where a
// call fails it fails and leaves the world as it was.
func TestProbeGivesWhatTheCallsOneByOneGive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, worldproc.Options{})
	for _, where := range []string{"here", "worker"} {
		var runner starlark.Runner
		if where == "worker" {
			runner = pool
		}
		prog, err := starlark.CompileWith(ctx, runner, "grid.star", starlark.BranchingGrid, starlark.Limits{})
		require.NoError(t, err)
		start := prog.New()
		_, err = start.Initialize(ctx, 5)
		require.NoError(t, err)
		cp, err := start.CheckpointBytes()
		require.NoError(t, err)
		first, err := start.Actions(ctx)
		require.NoError(t, err)
		for n := 1; n <= 20; n += 6 {
			moves := make([]json.RawMessage, n)
			for i := range moves {
				moves[i] = first[i%len(first)]
			}
			if n > 1 {
				moves[1] = nil // a null action: along a shortest path
			}
			one, probe := prog.New(), prog.New()
			require.NoError(t, one.RestoreBytes(cp))
			require.NoError(t, probe.RestoreBytes(cp))
			require.NoError(t, one.Reseed(uint64(n)))
			require.NoError(t, probe.Reseed(uint64(n)))

			got, err := probe.Probe(ctx, moves, true, true)
			require.NoError(t, err, "%s, %d moves", where, n)
			var steps int
			for _, a := range moves {
				if one.Done() {
					break
				}
				if len(a) == 0 {
					a = json.RawMessage("null")
				}
				res, err := one.Step(ctx, a)
				require.NoError(t, err)
				require.Equal(t, res, got.Steps[steps], "%s, %d moves: step %d", where, n, steps+1)
				steps++
			}
			require.Len(t, got.Steps, steps)
			require.Equal(t, !one.Done(), got.Asked)
			if !one.Done() {
				next, err := one.Actions(ctx)
				require.NoError(t, err)
				require.Equal(t, next, got.Next)
			}
			score, err := one.Score(ctx)
			require.NoError(t, err)
			require.True(t, got.Judged)
			require.Equal(t, score, got.Score)
			a, err := one.CheckpointBytes()
			require.NoError(t, err)
			b, err := probe.CheckpointBytes()
			require.NoError(t, err)
			require.Equal(t, string(a), string(b), "%s, %d moves: the world after", where, n)
			if !one.Done() {
				ra, errA := one.Step(ctx, nil)
				rb, errB := probe.Step(ctx, nil)
				require.Equal(t, errA, errB)
				require.Equal(t, ra, rb, "%s, %d moves: the step after (the RNG went on alike)", where, n)
			}
		}

		// A failing step, actions or score: an error, the world unchanged.
		for _, bad := range []struct{ src, fails string }{
			{"def step(state, action, rng):\n    fail(\"no step\")\n", "no step"},
			{"def actions(state):\n    fail(\"no actions\")\n", "no actions"},
			{"def score(state):\n    return float(\"nan\")\n", "score returned NaN"},
		} {
			src := string(starlark.BranchingGrid) + "\n" + bad.src
			p, err := starlark.CompileWith(ctx, runner, "bad.star", []byte(src), starlark.Limits{})
			require.NoError(t, err)
			w := p.New()
			require.NoError(t, w.RestoreBytes(cp))
			before, err := w.CheckpointBytes()
			require.NoError(t, err)
			_, err = w.Probe(ctx, first[:1], true, true)
			require.Error(t, err, "%s: %s", where, bad.fails)
			require.True(t, strings.Contains(err.Error(), bad.fails), "%s: %v", where, err)
			after, err := w.CheckpointBytes()
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "%s: a failed probe leaves the world as it was", where)
		}
	}
}
