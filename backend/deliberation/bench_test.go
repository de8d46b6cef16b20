package deliberation_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/deliberation"
)

// BenchmarkSearch1000x20 is the goal: one round of 1,000 branches
// with a horizon of 20 on the Branching Grid, every branch a recorded fork
// (goal: <= 10 s a round). The beam (width 26) walks all 20 levels and
// spends about the whole budget; MCTS stops earlier when every state within
// the horizon has been reached (the grid has few once duplicates merge), so
// branches says what a round recorded. s/round-median is the median over the
// iterations (run with -benchtime Nx).
func BenchmarkSearch1000x20(b *testing.B) {
	for _, strategy := range []deliberation.Strategy{deliberation.MCTS, deliberation.Beam} {
		b.Run(string(strategy), func(b *testing.B) {
			f := setup(b)
			run := grid(b, f, 1, `{}`)
			var used, depth, steps int
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Strategy: strategy,
					Width: 26, Depth: 20, Budget: 1000})
				require.NoError(b, err)
				took = append(took, time.Since(start))
				r := res.Rounds[0]
				used, depth, steps = r.Budget.Used, r.Budget.Depth, r.Budget.Steps
			}
			slices.Sort(took)
			b.ReportMetric(float64(used), "branches")
			b.ReportMetric(float64(depth), "depth")
			b.ReportMetric(float64(steps), "steps")
			b.ReportMetric(took[len(took)/2].Seconds(), "s/round-median")
		})
	}
}
