package runtime_test

import (
	"encoding/json"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// A cancel another process requested, being acted on when ducklm closes,
// ends before Close returns: nothing of the controller goes on writing to
// (or logging about) a database its service is about to close.
//
// Not parallel: the goroutines are looked at while no other test's
// controller (the owner tests cancel on request too) runs.
func TestCloseWaitsForARequestedCancel(t *testing.T) {
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "long", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(shell("sleep", "sleep 300"))})
	require.NoError(t, err)
	f.waitStep(t, run.ID, "sleep", runtime.StepRunning)

	payload, _ := json.Marshal(map[string]string{"reason": "Cancelled elsewhere."})
	f.rt.Followed([]backend.Event{{Stream: run.ID, Type: runtime.EvCancelRequested, Payload: payload}})
	f.rt.Close()

	var dump strings.Builder
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&dump, 2))
	for _, g := range strings.Split(dump.String(), "\n\n") {
		if strings.Contains(g, "runtime.(*Controller).requestedCancel") {
			t.Fatalf("a requested cancel still runs after Close:\n%s", g)
		}
	}
}
