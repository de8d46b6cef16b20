package router

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"ducklm/backend"
)

// ruleConfidence is the confidence of a decision a rule made: certain.
const ruleConfidence = 1

// PlanPayload is the payload of a plan decision.
type PlanPayload struct {
	// Model is the planner model, "" for the offline planner.
	Model string `json:"model"`
	// Search, when set, makes this the router's own plan: Steps take the
	// chosen line of that world_search step, and the runtime adds them to
	// the accepted plan instead of asking the planner.
	Search string             `json:"search,omitempty"`
	Steps  []backend.TaskNode `json:"steps,omitempty"`
}

// ReplanPayload is the payload of a replan decision.
type ReplanPayload struct {
	// Error is the validation message the planner must fix, or for a
	// revision why the steps failed.
	Error string `json:"error"`
	// Model is the planner model, "" for the offline planner.
	Model string `json:"model"`
	// Failed, when set, makes this a revision: these steps failed after
	// their retries, and the planner revises the plan around them, keeping
	// the finished steps.
	Failed []string `json:"failed,omitempty"`
	// Rule is the failure rule that chose to revise (RuleRevise).
	Rule string `json:"rule,omitempty"`
}

// StepPayload is the payload of a tool or coder decision.
type StepPayload struct {
	Step string `json:"step"`
	Tool string `json:"tool,omitempty"`
	// Network is true when the step was approved with network access.
	Network bool `json:"network"`
	// Model is a coder step's model; "" when no model is available.
	Model string `json:"model,omitempty"`
}

// Why a run failed, as FailPayload.Cause.
const (
	CauseCancelled   = "cancelled"
	CauseInvalidPlan = "invalid_plan"
	CauseNoPlan      = "no_plan"
	CauseStepLimit   = "step_limit"
	CauseStepsFailed = "steps_failed"
	CauseBadStep     = "bad_step"
	CauseReviewBound = "review_bound"
	// CauseNoModel: the run needs a planning model (to revise its plan or
	// review its results) and none is available. It does not end the run:
	// the run waits for one (FailPayload.NeedsModel).
	CauseNoModel = "no_model"
)

// FailPayload is the payload of a fail decision.
type FailPayload struct {
	// Cause is one of the Cause constants.
	Cause string `json:"cause"`
	// Error is the last validation message, for CauseInvalidPlan.
	Error string `json:"error,omitempty"`
	// Steps are the steps concerned: the failed ones for CauseStepsFailed.
	Steps []string `json:"steps,omitempty"`
	// Rule is the failure rule that decided, for CauseStepsFailed (it
	// ended the run, unless NeedsModel).
	Rule string `json:"rule,omitempty"`
	// NeedsModel: nothing is wrong with the run, it cannot go on without a
	// planning model. The runtime pauses it, flagged as waiting for a
	// model, as it does a task that has none to plan it; resumed once one
	// is there, the router decides again.
	NeedsModel bool `json:"needsModel,omitempty"`
}

// PermissionPayload is the payload of a request_permission decision: what
// the UI shows the user, and the rule that asked.
type PermissionPayload struct {
	Step    string          `json:"step"`
	Kind    string          `json:"kind"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Rule    string          `json:"rule"`
	Risk    Level           `json:"risk"`
	Why     string          `json:"why"`
	Network bool            `json:"network"`
	// Untrusted names the outside content the step was planned after.
	Untrusted []string `json:"untrusted,omitempty"`
}

// Route returns the next decision for a run. It is a pure function of its
// input; every decision it makes follows a rule, so its confidence is 1.
//
// In order: a cancelled run fails; a finished one is a noop; a plan that
// failed validation is replanned while replans remain, else the run fails;
// a run without a graph is planned; past MaxSteps the run fails; a search's
// chosen line not yet in the plan is added to it; the first ready step runs, or its approval is asked for; while steps run or an
// approval is awaited, noop; then the run fails if any step failed and
// completes otherwise.
func Route(s State, c Context) backend.Decision {
	maxReplans := max(s.MaxReplans, 0)
	switch {
	case s.Cancelled:
		return fail(FailPayload{Cause: CauseCancelled}, "The run was cancelled.")
	case s.Phase == PhaseFinished:
		return decide(backend.DecisionNoop, struct{}{}, "The run has finished; there is nothing left to do.")
	case s.Answered:
		// The answer is recorded: the run ends with it, whatever else was
		// under way (a restart between the two finds it here).
		return decide(backend.DecisionComplete, struct{}{}, cmp.Or(s.AnswerReason, "The task is answered."))
	case s.ValidationError != "":
		// What the planner was asked for: the first plan, a revision after
		// failed steps, or a review's answer (a plan of more steps, or the
		// answer itself).
		what := "The plan"
		switch {
		case s.Reviewing:
			what = "The review's answer"
		case s.Revising:
			what = "The revised plan"
		}
		if s.Replans < maxReplans {
			model, _ := PickModel(RolePlanner, c.AvailableModels, c.Settings)
			return decide(backend.DecisionReplan, ReplanPayload{Error: s.ValidationError, Model: model},
				fmt.Sprintf("%s is invalid, so the planner tries again (replan %d of %d).", what, s.Replans+1, maxReplans))
		}
		by := ""
		if model, ok := PickModel(RolePlanner, c.AvailableModels, c.Settings); ok {
			by = " by " + model
		}
		kept := ""
		if s.Reviewing && len(s.Done) > 0 {
			// Only the answer is missing: the work is done and kept.
			kept = " The steps' results are kept in the run."
		}
		return fail(FailPayload{Cause: CauseInvalidPlan, Error: s.ValidationError},
			sentence(fmt.Sprintf("%s is still invalid after %d %s%s: %s", what, s.Replans, plural(s.Replans, "replan"), by, s.ValidationError))+
				kept+nextStep(c))
	case s.Revising:
		// A revision round that ducklm stopped in goes on; it was counted
		// when it began.
		model, ok := PickModel(RolePlanner, c.AvailableModels, c.Settings)
		if !ok {
			return fail(FailPayload{Cause: CauseStepsFailed, Steps: slices.Sorted(slices.Values(s.Failed)), Rule: RuleNoPlanner, NeedsModel: true},
				"The plan was being revised after failed steps, and no planning model is available to finish it. "+
					"Start Ollama with a model and resume the run, or fork it before the step with an edited plan.")
		}
		return decide(backend.DecisionReplan, ReplanPayload{Model: model},
			fmt.Sprintf("The plan was being revised after failed steps, so %s is asked for the revised plan again.", model))
	case s.Reviewing:
		// A review round that ducklm stopped in goes on; it was counted
		// when it began.
		return review(s, c, true)
	case !s.HasGraph:
		if s.Replans > maxReplans {
			return fail(FailPayload{Cause: CauseNoPlan}, fmt.Sprintf("There is no valid plan after %d %s.", s.Replans, plural(s.Replans, "replan"))+
				nextStep(c))
		}
		model, ok := PickModel(RolePlanner, c.AvailableModels, c.Settings)
		reason := fmt.Sprintf("The task has no plan yet, so %s plans it.", model)
		if want := c.Settings.Models[RolePlanner]; ok && want != "" && !sameModel(want, model) {
			reason = fmt.Sprintf("The task has no plan yet; the chosen planner %s is not installed in Ollama (ollama pull %s), so %s plans it.",
				want, want, model)
		}
		if !ok {
			reason = "The task has no plan yet and no planner model is available, so the offline planner plans it."
		}
		if s.UserPlan {
			reason = "The task comes with its own plan (an explicit plan or a shell one-liner), so the planner checks it and takes it as it is: no model plans it."
		}
		return decide(backend.DecisionPlan, PlanPayload{Model: model}, reason)
	case s.MaxSteps > 0 && s.StepsRun > s.MaxSteps:
		return fail(FailPayload{Cause: CauseStepLimit}, fmt.Sprintf("The run has started %d steps, more than its limit of %d.", s.StepsRun, s.MaxSteps))
	}

	for _, sr := range s.Searches {
		if !sr.Taken && len(sr.Line) > 0 {
			return takeLine(sr)
		}
	}
	if d, ok := retry(s); ok {
		return d
	}
	s = withLowScores(s)
	if len(s.Ready) > 0 {
		if s.MaxSteps > 0 && s.StepsRun >= s.MaxSteps {
			return fail(FailPayload{Cause: CauseStepLimit},
				fmt.Sprintf("The run reached its limit of %d %s with steps still to run.", s.MaxSteps, plural(s.MaxSteps, "step")))
		}
		return next(s, c, s.Ready[0])
	}
	switch {
	case s.Running > 0:
		return decide(backend.DecisionNoop, struct{}{}, fmt.Sprintf("Waiting for %d running %s.", s.Running, plural(s.Running, "step")))
	case s.Phase == PhaseAwaitingApproval:
		return decide(backend.DecisionNoop, struct{}{}, "Waiting for the user's approval.")
	case len(s.Failed) > 0:
		return afterFailure(s, c)
	case s.Review && s.MaxReviews > 0:
		return review(s, c, false)
	}
	return decide(backend.DecisionComplete, struct{}{}, "Every step of the plan is done.")
}

// nextStep is what a user can do when the planning model could not plan.
func nextStep(c Context) string {
	model, ok := PickModel(RolePlanner, c.AvailableModels, c.Settings)
	if !ok {
		return ""
	}
	return " " + backend.PlannerNextStep(model)
}

// next decides about the first ready step: ask, or run it.
func next(s State, c Context, r ReadyStep) backend.Decision {
	n := r.Node
	tool := n.Tool
	if n.Kind == backend.KindCoderStep {
		tool = ToolCoder
	}
	a := RiskAllowing(tool, n.Args, s.Sandboxed, s.AllowedHosts)
	if m, ok := s.MCP[tool]; ok && n.Kind == backend.KindToolStep {
		a = MCPRisk(m)
	}
	if len(r.Untrusted) > 0 {
		a = afterUntrusted(a, r.Untrusted)
	}
	if r.InDoubt && !r.Approved {
		a.Level, a.Rule = High, RuleInDoubt
		a.Why = "it was running when ducklm stopped and may already have had its effect"
		return ask(n, tool, a, r.Untrusted, fmt.Sprintf("Step %q needs a new approval because %s.", n.ID, a.Why))
	}
	if !r.Approved && NeedsPermission(s.ApprovalMode, a, s.Sandboxed) {
		return ask(n, tool, a, r.Untrusted, fmt.Sprintf("Step %q needs approval in mode %s: %s, which rule %s rates %s risk.",
			n.ID, modeName(s.ApprovalMode), a.Why, a.Rule, a.Level.normal()))
	}
	switch n.Kind {
	case backend.KindToolStep:
		return decide(backend.DecisionTool, StepPayload{Step: n.ID, Tool: tool, Network: a.Network},
			fmt.Sprintf("Step %q is ready, so %s runs it.", n.ID, tool))
	case backend.KindCoderStep:
		model, ok := PickModel(RoleCoder, c.AvailableModels, c.Settings)
		reason := fmt.Sprintf("Step %q is ready, so the coder writes its script with %s.", n.ID, model)
		if !ok {
			reason = fmt.Sprintf("Step %q is ready, but no coder model is available.", n.ID)
		}
		return decide(backend.DecisionCoder, StepPayload{Step: n.ID, Tool: ToolCoder, Model: model}, reason)
	}
	return fail(FailPayload{Cause: CauseBadStep, Steps: []string{n.ID}}, fmt.Sprintf("Step %q has kind %q, which cannot run.", n.ID, n.Kind))
}

// ask builds a request_permission decision.
func ask(n backend.TaskNode, tool string, a Assessment, untrusted []string, reason string) backend.Decision {
	args := json.RawMessage(bytes.TrimSpace(n.Args))
	if len(args) == 0 || !json.Valid(args) {
		args = json.RawMessage("{}")
	}
	d := decide(backend.DecisionRequestPermission, PermissionPayload{
		Step: n.ID, Kind: n.Kind, Tool: tool, Args: args,
		Rule: a.Rule, Risk: a.Level.normal(), Why: a.Why, Network: a.Network, Untrusted: untrusted,
	}, reason)
	d.RequiresPermission = true
	return d
}

func decide(t backend.DecisionType, payload any, reason string) backend.Decision {
	return backend.NewDecision(t, payload, ruleConfidence, reason)
}

func fail(p FailPayload, reason string) backend.Decision {
	return decide(backend.DecisionFail, p, reason)
}

// sentence ends s with a full stop unless it already ends a sentence.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

func modeName(m ApprovalMode) string {
	if m == "" {
		return "unset"
	}
	return string(m)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}
