package runtime

import (
	"context"
	"encoding/json"
	"slices"

	"ducklm/backend"
	"ducklm/backend/router"
	"ducklm/backend/taskgraph"
)

// searchOutput is what the runtime reads of a world_search step's output:
// the run it searched, the chosen line and whether the task takes it.
type searchOutput struct {
	Run  string            `json:"run"`
	Line []json.RawMessage `json:"line"`
	Act  bool              `json:"act"`
}

// searches are the finished world_search steps whose line the task takes,
// in plan order, as the router sees them.
func (s *RunState) searches() []router.Search {
	if s.Graph == nil {
		return nil
	}
	var out []router.Search
	for _, n := range s.Graph.Nodes {
		if r, ok := s.searchOf(n); ok {
			out = append(out, r)
		}
	}
	return out
}

// searchOf is what the router sees of the plan's step n when it is a
// finished world_search whose chosen line the task takes.
func (s *RunState) searchOf(n backend.TaskNode) (router.Search, bool) {
	rec := s.Steps[n.ID]
	if n.Tool != router.ToolWorldSearch || rec == nil || rec.State != StepDone || rec.Result == nil {
		return router.Search{}, false
	}
	var o searchOutput
	if json.Unmarshal(rec.Result.Output, &o) != nil || !o.Act || o.Run == "" {
		return router.Search{}, false
	}
	return router.Search{Step: n.ID, Run: o.Run, Line: o.Line, Taken: s.Steps[router.MoveStepID(n.ID, 1)] != nil}, true
}

// takeLine applies the router's plan that takes a search's chosen line: its
// steps join the accepted plan after the search, and steps that waited for
// the search now wait for the last of them. The plan is validated like any
// other; one that no longer validates ends the run with the reason.
func (c *Controller) takeLine(ctx context.Context, st *RunState, dec backend.Decision) (stop bool) {
	var p router.PlanPayload
	if err := json.Unmarshal(dec.Payload, &p); err != nil || st.Graph == nil || len(p.Steps) == 0 {
		c.fail(ctx, st, "the router's plan for a search's chosen line is unreadable")
		return true
	}
	last := p.Steps[len(p.Steps)-1].ID
	graph := backend.TaskGraph{Nodes: make([]backend.TaskNode, 0, len(st.Graph.Nodes)+len(p.Steps))}
	var kept []string
	for _, n := range st.Graph.Nodes {
		if slices.Contains(n.DependsOn, p.Search) && st.Steps[n.ID] != nil && st.Steps[n.ID].State == StepPending {
			n.DependsOn = append(slices.Clone(n.DependsOn), last)
		} else {
			kept = append(kept, n.ID)
		}
		graph.Nodes = append(graph.Nodes, n)
		if n.ID == p.Search {
			graph.Nodes = append(graph.Nodes, p.Steps...)
		}
	}
	g, err := taskgraph.ValidateMax(graph, c.catalogForValidation(), st.Request.MaxPlanSteps)
	if err != nil {
		c.fail(ctx, st, "the chosen line of step "+p.Search+" cannot join the plan: "+backend.ErrorMessage(err))
		return true
	}
	if err := c.append(ctx, st, EvPlanAccepted, planPayload{Graph: g.TaskGraph(), Attempt: st.PlanAttempts,
		Source: st.PlanSource, Kept: kept, Search: p.Search}); err != nil {
		return true
	}
	if err := c.catchUp(ctx, st); err != nil {
		return true
	}
	c.checkpoint(ctx, st)
	return false
}
