package runtime_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// TestARunRecordsTheGivenPlanOnce: a task that comes with its plan holds it
// in task.received only; the planner's decision, plan.proposed and
// plan.accepted name it ("graphFrom": "request") instead of copying it,
// and the run's fold has the whole plan.
func TestARunRecordsTheGivenPlanOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	g := plan(step("first-of-a-kind", "noop", `{}`), step("second-of-a-kind", "noop", `{}`, "first-of-a-kind"))
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "once", ApprovalMode: runtime.AutoSandboxed, Plan: g})
	require.NoError(t, err)
	f.approveAll(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.NotNil(t, st.Graph)
	require.Len(t, st.Graph.Nodes, 2)
	require.Equal(t, []string{"first-of-a-kind"}, st.Graph.Nodes[1].DependsOn)
	var holders []string
	for _, e := range f.events(t, run.ID) {
		if strings.Contains(string(e.Payload), `"nodes"`) {
			holders = append(holders, e.Type)
		}
		if e.Type == runtime.EvPlanAccepted || e.Type == runtime.EvPlanProposed {
			require.Contains(t, string(e.Payload), `"graphFrom":"request"`, e.Type)
		}
	}
	require.Equal(t, []string{runtime.EvTaskReceived}, holders, "the plan is recorded once")
}

// TestPlansRecordedWholeStillFold: runs recorded before a plan was recorded
// once carry the graph in plan.accepted; they fold as before, and a graph
// named by reference folds to the task's own plan.
func TestPlansRecordedWholeStillFold(t *testing.T) {
	t.Parallel()
	g := plan(step("a", "noop", `{}`), step("b", "noop", `{}`, "a"))
	req, err := json.Marshal(runtime.TaskRequest{Task: "old", Plan: g})
	require.NoError(t, err)
	whole, err := json.Marshal(map[string]any{"graph": g, "attempt": 1, "source": "explicit"})
	require.NoError(t, err)
	other := plan(step("c", "noop", `{}`))
	otherWhole, err := json.Marshal(map[string]any{"graph": other, "attempt": 2, "source": "model"})
	require.NoError(t, err)
	for _, c := range []struct {
		name     string
		accepted []byte
		want     []string
	}{
		{"whole", whole, []string{"a", "b"}},
		{"by reference", []byte(`{"graphFrom":"request","attempt":1,"source":"explicit"}`), []string{"a", "b"}},
		{"another plan", otherWhole, []string{"c"}},
	} {
		st := runtime.NewRunState("run_0123456789abcdef0123456789abcdef", "wld_0123456789abcdef0123456789abcdef")
		st.Apply(backend.Event{Seq: 1, Type: runtime.EvTaskReceived, Payload: req})
		st.Apply(backend.Event{Seq: 2, Type: runtime.EvPlanAccepted, Payload: c.accepted})
		require.NotNil(t, st.Graph, c.name)
		require.Equal(t, c.want, st.Order(), c.name)
		if c.name == "by reference" {
			st.Graph.Nodes[0].ID = "changed"
			require.Equal(t, "a", st.Request.Plan.Nodes[0].ID, "the run's graph is a copy of the request's")
		}
	}
}
