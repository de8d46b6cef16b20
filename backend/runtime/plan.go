package runtime

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"ducklm/backend"
	"ducklm/backend/planner"
	"ducklm/backend/router"
	"ducklm/backend/taskgraph"
)

// plan asks the planner (a model, or the offline planner when the router
// chose none) for a plan, validates it into a task graph and records the
// outcome. It reports whether the driver must stop (the run ended or paused).
func (c *Controller) plan(ctx context.Context, st *RunState, dec backend.Decision) (stop bool) {
	var p router.ReplanPayload
	_ = json.Unmarshal(dec.Payload, &p)
	feedback := p.Error
	if dec.Type == backend.DecisionReplan && len(p.Failed) > 0 {
		// A revision round begins: the planner hears of the failure from
		// the revision itself, not as a rejected answer.
		// A finished step the critic failed (RuleCriticLow) is revised, not kept.
		kept := slices.DeleteFunc(st.finished(), func(id string) bool { return slices.Contains(p.Failed, id) })
		if err := c.append(ctx, st, EvPlanRevising, Revision{Round: len(st.Revised) + 1, Failed: p.Failed,
			Kept: kept, Rule: p.Rule, Reason: dec.Reason}); err != nil {
			return true
		}
		if err := c.catchUp(ctx, st); err != nil {
			return true
		}
		feedback = ""
	}
	req := planner.Request{
		Task: st.Request.Task, Context: c.buildContext(ctx, st), Catalog: c.catalog(),
		Model: p.Model, Feedback: feedback, Attempt: st.Replans + 1, Explicit: st.Request.Plan,
		Revision: st.revisionRequest(), Review: c.reviewRequest(ctx, st),
		OnToken: func(tok string) { c.token(st.RunID, "", tok) },
	}
	// The user's plan is planned once. A review reads its results, and a
	// revision (of steps a review added: the user's own steps are never
	// rewritten, userPlan) is the model's to make.
	modelsTurn := req.Review != nil || req.Revision != nil
	if modelsTurn {
		req.Explicit = nil
	}
	if feedback != "" {
		req.Previous = st.lastAnswer()
	}
	var pl Planner = c.d.Offline
	if p.Model != "" && c.d.Planner != nil && (st.Request.Plan == nil || modelsTurn) {
		pl = c.d.Planner
	}
	if pl == nil {
		c.fail(ctx, st, "no planner is configured")
		return true
	}
	out, err := pl.Plan(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return true
		}
		if backend.ErrorCode(err) == backend.EUNAVAILABLE || backend.ErrorCode(err) == backend.ENOTFOUND {
			// The model is gone (Ollama stopped, model removed): pause with
			// the reason; the run resumes when the model is back.
			_ = c.setStatus(ctx, st, backend.RunPaused, backend.ErrorMessage(err))
			return true
		}
		c.fail(ctx, st, "the planner failed: "+backend.ErrorMessage(err))
		return true
	}
	if err := out.Validate(); err != nil {
		out = backend.NewDecision(backend.DecisionReplan, planner.ReplanPayload{Error: backend.ErrorMessage(err)}, 0, "the planner returned an invalid decision")
	}
	answered := []backend.Event{event(EvDecision, decisionRecord{Source: "planner", Decision: st.withoutRequestPlan(out)}, st.Ticks)}
	if call := planner.CallOf(out); call != nil {
		answered = append([]backend.Event{event(EvPlannerAnswered, PlanningAttempt{
			Attempt: call.Attempt, Revision: st.revisionRound(), Review: st.reviewRound(), Model: call.Model, Options: call.Options,
			Answer: call.Answer, Normalised: call.Normalised, Unstreamed: call.Unstreamed,
		}, st.Ticks)}, answered...)
	}
	if err := c.appendWith(ctx, st, nil, answered...); err != nil {
		return true
	}
	switch out.Type {
	case backend.DecisionPlan:
		var pp planner.PlanPayload
		if err := json.Unmarshal(out.Payload, &pp); err != nil {
			return c.invalidPlan(ctx, st, "the plan decision has no readable graph", p.Model)
		}
		if err := c.append(ctx, st, EvPlanProposed, st.planOnce(planPayload{Graph: pp.Graph, Model: pp.Model, Attempt: st.PlanAttempts + 1, Source: pp.Source})); err != nil {
			return true
		}
		graph, kept, err := st.revise(pp.Graph)
		if err != nil {
			return c.invalidPlan(ctx, st, backend.ErrorMessage(err), p.Model)
		}
		if st.Review != nil && len(graph.Nodes) == len(kept) {
			return c.invalidPlan(ctx, st, "the plan adds no new step: every step in it has already run. Answer with \"respond\" "+
				"from the results, citing the steps, or plan new steps with new ids", p.Model)
		}
		g, err := taskgraph.ValidateMax(graph, c.catalogForValidation(), st.Request.MaxPlanSteps)
		if err != nil {
			return c.invalidPlan(ctx, st, backend.ErrorMessage(err), p.Model)
		}
		if err := c.append(ctx, st, EvPlanAccepted, st.planOnce(planPayload{Graph: g.TaskGraph(), Model: pp.Model, Attempt: st.PlanAttempts,
			Source: pp.Source, Kept: kept, Revision: st.revisionRound(), Review: st.reviewRound()})); err != nil {
			return true
		}
		if err := c.catchUp(ctx, st); err != nil {
			return true
		}
		c.checkpoint(ctx, st)
		return false
	case backend.DecisionReplan:
		var rp planner.ReplanPayload
		_ = json.Unmarshal(out.Payload, &rp)
		return c.invalidPlan(ctx, st, rp.Error, p.Model)
	case backend.DecisionRespond:
		var rp planner.RespondPayload
		_ = json.Unmarshal(out.Payload, &rp)
		if why := st.checkAnswer(rp.Cites); why != "" {
			return c.invalidPlan(ctx, st, why, p.Model)
		}
		reason := cmp.Or(out.Reason, "The planner answered the task without a step.")
		if st.Review != nil {
			reason = fmt.Sprintf("%s answered the task from the results of %s (review %d).", cmp.Or(rp.Model, "The planner"),
				strings.Join(rp.Cites, ", "), st.Review.Round)
		}
		return c.answered(ctx, st, RunAnswer{Text: rp.Text, Cites: rp.Cites, Model: rp.Model, Review: st.reviewRound(), Reason: reason})
	case backend.DecisionFail:
		var fp planner.FailPayload
		_ = json.Unmarshal(out.Payload, &fp)
		reason := out.Reason
		if fp.Error != "" {
			reason = fp.Error
		}
		if fp.NeedsModel {
			// Nothing is wrong with the task: it waits for a model.
			_ = c.setStatusOf(ctx, st, statusPayload{Status: backend.RunPaused, Reason: reason, NeedsModel: true})
			return true
		}
		c.fail(ctx, st, reason)
		return true
	}
	c.fail(ctx, st, "the planner answered "+string(out.Type)+", which is not a plan")
	return true
}

// invalidPlan records why a plan was refused; the router bounds the replans.
func (c *Controller) invalidPlan(ctx context.Context, st *RunState, reason, model string) bool {
	if err := c.append(ctx, st, EvPlanInvalid, planInvalidPayload{Error: reason, Attempt: st.PlanAttempts}); err != nil {
		return true
	}
	return c.catchUp(ctx, st) != nil
}

// token forwards a streamed model token to whoever listens (the window).
func (c *Controller) token(runID, stepID, tok string) {
	if c.d.Tokens != nil {
		c.d.Tokens(runID, stepID, tok)
	}
}

// isRequestPlan reports whether g is the plan the task came with, as
// task.received recorded it.
func (s *RunState) isRequestPlan(g backend.TaskGraph) bool {
	if s.Request.Plan == nil {
		return false
	}
	a, err1 := json.Marshal(g)
	b, err2 := json.Marshal(*s.Request.Plan)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// planOnce returns p without its graph when the graph is the task's own
// plan: the run records a plan once (task.received), and later events
// name it (GraphFrom) instead of copying it.
func (s *RunState) planOnce(p planPayload) planPayload {
	if s.isRequestPlan(p.Graph) {
		p.Graph, p.GraphFrom = backend.TaskGraph{}, graphFromRequest
	}
	return p
}

// withoutRequestPlan returns the planner's decision as the run records it:
// a plan that is the task's own names it ("graphFrom": "request") instead
// of copying it.
func (s *RunState) withoutRequestPlan(d backend.Decision) backend.Decision {
	if d.Type != backend.DecisionPlan {
		return d
	}
	var pp planner.PlanPayload
	if json.Unmarshal(d.Payload, &pp) != nil || !s.isRequestPlan(pp.Graph) {
		return d
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(d.Payload, &fields) != nil {
		return d
	}
	delete(fields, "graph")
	fields["graphFrom"] = json.RawMessage(`"` + graphFromRequest + `"`)
	payload, err := json.Marshal(fields)
	if err != nil {
		return d
	}
	d.Payload = payload
	return d
}

// planGraph returns the plan a plan.accepted event records: its graph, or
// the task's own plan it names.
func (s *RunState) planGraph(p planPayload) backend.TaskGraph {
	if p.GraphFrom != graphFromRequest || s.Request.Plan == nil {
		return p.Graph
	}
	// A copy: the run's graph is its own, never the request's.
	var g backend.TaskGraph
	if data, err := json.Marshal(*s.Request.Plan); err == nil && json.Unmarshal(data, &g) == nil {
		return g
	}
	return p.Graph
}
