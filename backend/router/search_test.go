package router_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/router"
)

func TestASearchsChosenLineBecomesSteps(t *testing.T) {
	t.Parallel()
	line := []json.RawMessage{json.RawMessage(`"E"`), json.RawMessage(`"S"`), json.RawMessage(`{"go": "E"}`)}
	report := approved(shellStep("report", "cat result"))
	s := executing(report)
	s.Searches = []router.Search{{Step: "search", Run: "run_0123456789abcdef0123456789abcdef", Line: line}}

	// The line comes before any ready step: a step that waits for the
	// search must also wait for its line.
	d := router.Route(s, online)
	require.NoError(t, d.Validate())
	require.Equal(t, backend.DecisionPlan, d.Type)
	require.Contains(t, d.Reason, `Step "search"`)
	require.Contains(t, d.Reason, "3 moves")
	var p router.PlanPayload
	require.NoError(t, json.Unmarshal(d.Payload, &p))
	require.Equal(t, "search", p.Search)
	require.Len(t, p.Steps, 3)
	for i, n := range p.Steps {
		require.Equal(t, router.MoveStepID("search", i+1), n.ID)
		require.Equal(t, backend.KindToolStep, n.Kind)
		require.Equal(t, router.ToolWorldSim, n.Tool)
		want := `{"run": "run_0123456789abcdef0123456789abcdef", "action": ` + string(line[i]) + `, "steps": 1}`
		require.JSONEq(t, want, string(n.Args))
		prev := "search"
		if i > 0 {
			prev = p.Steps[i-1].ID
		}
		require.Equal(t, []string{prev}, n.DependsOn, "the moves are taken in order, after the search")
		require.NotEmpty(t, n.Title)
		// The risk rules are the same for a move as for any world_sim step.
		require.Equal(t, router.RuleSimulation, router.Risk(n.Tool, n.Args, true).Rule)
	}

	// Once taken (or with nothing to take), the router goes on as before.
	s.Searches[0].Taken = true
	d = router.Route(s, online)
	require.Equal(t, backend.DecisionTool, d.Type)
	s.Searches[0] = router.Search{Step: "search", Run: "run_0123456789abcdef0123456789abcdef"}
	require.Equal(t, backend.DecisionTool, router.Route(s, online).Type)

	// A move asks for approval where the mode says so, like any step.
	move := ready(p.Steps[0])
	ask := executing(move)
	ask.ApprovalMode = router.AskEvery
	require.Equal(t, backend.DecisionRequestPermission, router.Route(ask, online).Type)
	ask.ApprovalMode = router.AskRisky
	require.Equal(t, backend.DecisionTool, router.Route(ask, online).Type)

	// A cancelled run takes no line.
	s.Searches[0] = router.Search{Step: "search", Run: "run_0123456789abcdef0123456789abcdef", Line: line}
	s.Cancelled = true
	require.Equal(t, backend.DecisionFail, router.Route(s, online).Type)
}
