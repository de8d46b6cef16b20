package runtime_test

import (
	"testing"
)

// BenchmarkRunsList measures the Runs screen's list over many finished task
// runs: each summary needs the run's state (task, steps, approvals).
//
//	go test ./backend/runtime -run '^$' -bench RunsList -benchtime 20x
func BenchmarkRunsList(b *testing.B) {
	lb := newLoopBench(b)
	const runs = 200
	for i := 0; i < runs; i++ {
		lb.run(b, trivialPlan(5, true), 1)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		list, err := lb.rt.Runs(lb.ctx)
		if err != nil || len(list) != runs {
			b.Fatalf("%d runs, %v", len(list), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/runs, "µs/run")
}
