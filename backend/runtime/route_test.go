package runtime

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/router"
	"ducklm/backend/taskgraph"
)

// The router's view built through the step index is the view the map of
// every step's state gave, at every event of a run that goes through every
// step state, approvals, a denial, a search and a second plan; the index
// follows the fold in place and is rebuilt when a plan replaces the steps.
func TestRouterStateThroughTheStepIndexIsTheMapsView(t *testing.T) {
	t.Parallel()
	ev := func(typ, payload string) backend.Event {
		return backend.Event{Type: typ, Payload: json.RawMessage(payload)}
	}
	node := func(id, tool string, deps ...string) map[string]any {
		n := map[string]any{"id": id, "kind": "tool", "tool": tool, "args": map[string]any{}, "depends_on": deps}
		if tool == "coder" {
			n = map[string]any{"id": id, "kind": "coder", "args": map[string]any{"goal": "g"}, "depends_on": deps}
		}
		return n
	}
	plan := func(nodes ...map[string]any) string {
		b, err := json.Marshal(map[string]any{"graph": map[string]any{"nodes": nodes}})
		require.NoError(t, err)
		return string(b)
	}
	first := plan(node("a", "noop"), node("b", "noop", "a"), node("c", "noop", "a"), node("d", "noop", "b", "c"),
		node("e", "noop"), node("f", "noop"), node("s", router.ToolWorldSearch), node("k", "coder"), node("g", "noop", "f"))
	second := plan(node("a", "noop"), node("x", "noop", "a"), node("y", "noop", "x"))
	search := `{"step":"s","attempt":1,"ok":true,"output":{"run":"run_sim","line":["N","E"],"act":true}}`
	events := []backend.Event{
		ev(EvTaskReceived, `{"task":"t","maxSteps":50,"maxReplans":2}`),
		ev(EvPlanAccepted, first),
		ev(EvStepStarted, `{"step":"a","attempt":1}`),
		ev(EvStepStarted, `{"step":"e","attempt":1}`),
		ev(EvStepFinished, `{"step":"a","attempt":1,"ok":true}`),
		ev(EvApprovalRequested, `{"requestId":"r1","step":"b","tool":"noop","args":{}}`),
		ev(EvApprovalRequested, `{"requestId":"r2","step":"c","tool":"noop","args":{}}`),
		ev(EvApproved, `{"requestId":"r1","step":"b"}`),
		ev(EvDenied, `{"requestId":"r2","step":"c","reason":"no"}`),
		ev(EvStepInDoubt, `{"step":"e","attempt":1}`),
		ev(EvStepStarted, `{"step":"f","attempt":1}`),
		ev(EvStepFinished, `{"step":"f","attempt":1,"ok":false,"exitCode":2}`),
		ev(EvStepSkipped, `{"step":"g","reason":"f failed"}`),
		ev(EvStepStarted, `{"step":"s","attempt":1}`),
		ev(EvStepFinished, search),
		ev(EvStepStarted, `{"step":"b","attempt":1}`),
		ev(EvStepFinished, `{"step":"b","attempt":1,"ok":true}`),
		ev(EvPlanAccepted, `{"kept":["a"],`+second[1:]),
		ev(EvStepStarted, `{"step":"x","attempt":1}`),
		ev(EvStepFinished, `{"step":"x","attempt":1,"ok":true}`),
		ev(EvCompleted, `{"reason":"done"}`),
	}
	catalog := taskgraph.MapCatalog{"noop": json.RawMessage(`{"type":"object"}`), router.ToolWorldSearch: json.RawMessage(`{"type":"object"}`)}
	st := NewRunState("run_x", "wld_x")
	var g *taskgraph.Graph
	var graphOf *backend.TaskGraph
	var idx *stepIndex
	builds := 0
	seen := map[string]bool{}
	for i, e := range events {
		e.Seq = int64(i + 1)
		st.Apply(e)
		if st.Graph != graphOf {
			graphOf = st.Graph
			var err error
			g, err = taskgraph.Validate(*st.Graph, catalog)
			require.NoError(t, err, "event %d", i+1)
		}
		before := idx
		idx = indexSteps(st, g, idx)
		if idx != before {
			builds++
		}
		for _, running := range []int{0, 1} {
			want := routerStateByMap(st, g, running, true)
			got := routerState(st, idx, running, true, nil)
			// The map's order of failed and denied steps was its iteration's.
			slices.Sort(want.Failed)
			slices.Sort(want.Denied)
			slices.Sort(got.Failed)
			slices.Sort(got.Denied)
			require.Equal(t, want, got, "after event %d (%s)", i+1, e.Type)
			seen["ready"] = seen["ready"] || len(got.Ready) > 0
			seen["failed"] = seen["failed"] || len(got.Failed) > 1
			seen["denied"] = seen["denied"] || len(got.Denied) > 0
			seen["search"] = seen["search"] || len(got.Searches) > 0
			seen["asking"] = seen["asking"] || got.Phase == router.PhaseAwaitingApproval
			seen["in doubt"] = seen["in doubt"] || slices.ContainsFunc(got.Ready, func(r router.ReadyStep) bool { return r.InDoubt })
			seen["running"] = seen["running"] || got.Running > running
		}
	}
	require.Equal(t, 2, builds, "one index a plan")
	for _, what := range []string{"ready", "failed", "denied", "search", "asking", "in doubt", "running"} {
		require.True(t, seen[what], "the run never showed the router %s steps", what)
	}
}
