package router

import (
	"fmt"
	"slices"
	"strings"

	"ducklm/backend"
)

// The failure rules: what happens when steps have failed after their
// retries and nothing else can run. They are tried in this order; the first
// that applies decides, and its id goes in the decision's payload.
const (
	// RuleDenied: the user denied a step; ducklm does not plan around a no.
	RuleDenied = "denied"
	// RuleUserPlan: the plan is the user's; ducklm does not rewrite it.
	RuleUserPlan = "user_plan"
	// RuleRevisionsUsed: the run has had its revised plans.
	RuleRevisionsUsed = "revisions_used"
	// RuleNoPlanner: no planning model is available to revise the plan.
	RuleNoPlanner = "no_planner"
	// RuleRevise: the planner revises the plan, keeping the finished steps.
	RuleRevise = "revise"
)

// FailureRule is one row of the failure rule table, for display.
type FailureRule struct {
	ID       string `json:"id"`
	When     string `json:"when"`
	Decision string `json:"decision"`
}

// FailureRules is the failure rule table in the order Route applies it.
var FailureRules = []FailureRule{
	{RuleDenied, "the user denied a failed step", "fail"},
	{RuleUserPlan, "the plan came from the user (an explicit plan or a shell one-liner)", "fail"},
	{RuleRevisionsUsed, "the run already had its revised plans (max_step_replans, 1 by default)", "fail"},
	{RuleNoPlanner, "no planning model is available", "wait: the run pauses until one is, and resumed revises the plan"},
	{RuleRevise, "otherwise", "replan: the planner gets the failure and the finished steps and revises the plan"},
}

// afterFailure applies the failure rules.
func afterFailure(s State, c Context) backend.Decision {
	// Sorted, so a caller that gathers failures from a map still gets one
	// decision.
	failed := slices.Sorted(slices.Values(s.Failed))
	var denied, why []string
	for _, id := range failed {
		if slices.Contains(s.Denied, id) {
			denied = append(denied, id)
		}
		if e := s.Errors[id]; e != "" {
			why = append(why, fmt.Sprintf("%q failed (%s)", id, e))
		} else {
			why = append(why, fmt.Sprintf("%q failed", id))
		}
	}
	// what says which steps failed and how: step "b" failed (exited with code 127).
	what := plural(len(failed), "step") + " " + strings.Join(why, ", ")
	stop := func(rule, sentences string) backend.Decision {
		return fail(FailPayload{Cause: CauseStepsFailed, Steps: failed, Rule: rule}, "The run cannot go on: "+what+"; "+sentences)
	}
	const fork = "Fork the run before the step with an edited plan to try another way."
	model, haveModel := PickModel(RolePlanner, c.AvailableModels, c.Settings)
	switch {
	case len(denied) > 0:
		return fail(FailPayload{Cause: CauseStepsFailed, Steps: failed, Rule: RuleDenied},
			fmt.Sprintf("The run cannot go on: you denied %s, and ducklm does not plan around a no. %s", quoteList(denied), fork))
	case s.UserPlan:
		return stop(RuleUserPlan, "the plan is yours, so ducklm does not rewrite it. "+fork)
	case s.StepReplans >= s.MaxStepReplans:
		if s.StepReplans == 0 {
			return stop(RuleRevisionsUsed, "the run allows no revised plans. "+fork)
		}
		return stop(RuleRevisionsUsed, fmt.Sprintf("that was after %d revised %s, the run's limit. %s",
			s.StepReplans, plural(s.StepReplans, "plan"), fork))
	case !haveModel:
		// Nothing is wrong with the run: it waits for a model, as a task
		// with none to plan it does (DESIGN: Ollama unreachable → pause).
		return fail(FailPayload{Cause: CauseStepsFailed, Steps: failed, Rule: RuleNoPlanner, NeedsModel: true},
			capital(what)+", and no planning model is available to revise the plan. "+
				"Start Ollama with a model and resume the run, or fork it before the step with an edited plan.")
	}
	var errs []string
	for _, id := range failed {
		if e := s.Errors[id]; e != "" {
			errs = append(errs, fmt.Sprintf("step %q failed: %s", id, e))
		} else {
			errs = append(errs, fmt.Sprintf("step %q failed", id))
		}
	}
	return decide(backend.DecisionReplan, ReplanPayload{Error: strings.Join(errs, "; "), Model: model, Failed: failed, Rule: RuleRevise},
		fmt.Sprintf("%s, so %s revises the plan around %s, keeping the finished steps (revision %d of %d).",
			capital(what), model, pronoun(len(failed)), s.StepReplans+1, s.MaxStepReplans))
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
