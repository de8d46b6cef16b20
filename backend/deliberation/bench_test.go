package deliberation_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/deliberation"
)

// BenchmarkSearch1000x20 is the goal: one round of 1,000 branches
// with a horizon of 20 on the Branching Grid, every branch a recorded fork
// (goal: <= 10 s a round). MCTS spends the whole budget: its tree keeps
// growing where the scores are best, down to the horizon.
func BenchmarkSearch1000x20(b *testing.B) {
	for _, strategy := range []deliberation.Strategy{deliberation.MCTS, deliberation.Beam} {
		b.Run(string(strategy), func(b *testing.B) {
			f := setup(b)
			run := grid(b, f, 1, `{}`)
			var used, depth, steps int
			for b.Loop() {
				res, err := f.delib.Deliberate(f.ctx, deliberation.Options{RunID: run.ID, Strategy: strategy,
					Width: 24, Depth: 20, Budget: 1000})
				require.NoError(b, err)
				r := res.Rounds[0]
				used, depth, steps = r.Budget.Used, r.Budget.Depth, r.Budget.Steps
			}
			b.ReportMetric(float64(used), "branches")
			b.ReportMetric(float64(depth), "depth")
			b.ReportMetric(float64(steps), "steps")
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/round")
		})
	}
}
