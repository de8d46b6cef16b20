package runtime_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// Answers race the driver parking: several runs whose every step asks,
// answered the moment each request appears (from another goroutine, as the
// window answers), all end, and no driver ever stops with its run moving
// (the real-model suite once saw a run stand in "running" after an answer,
// with no driver left).
func TestAnswersRacingTheDriverNeverStrandARun(t *testing.T) {
	t.Parallel()
	var stalls atomic.Int32
	f := setup(t, countStalls(&stalls))

	const runs, steps = 4, 6
	var ids []string
	for r := 0; r < runs; r++ {
		var nodes []backend.TaskNode
		for i := 0; i < steps; i++ {
			var deps []string
			if i > 0 && r%2 == 0 { // half chained, half all ready at once
				deps = []string{fmt.Sprintf("s%d", i-1)}
			}
			nodes = append(nodes, step(fmt.Sprintf("s%d", i), "noop", `{}`, deps...))
		}
		run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: fmt.Sprintf("run %d", r), Plan: plan(nodes...),
			ApprovalMode: runtime.AskEvery, Concurrency: 1 + r%3, MaxSteps: steps})
		require.NoError(t, err)
		ids = append(ids, run.ID)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				as, err := f.rt.Approvals(f.ctx, id)
				if err == nil {
					for _, a := range as {
						_ = f.rt.Answer(f.ctx, id, runtime.Answer{RequestID: a.RequestID, Approve: true, By: "test"})
					}
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for _, id := range ids {
		st := f.waitStatus(t, id, backend.RunCompleted, backend.RunFailed)
		require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	}
	require.Zero(t, stalls.Load(), "no driver stopped with its run moving")
}
