package runtime

import (
	"ducklm/backend"
	"ducklm/backend/planner"
	"ducklm/backend/router"
	"ducklm/backend/taskgraph"
)

// routerStateByMap is routerState as it was before the step index: a map of
// every step's state and a lookup by id per step at each decision. It is the
// oracle routerState must agree with.
func routerStateByMap(st *RunState, g *taskgraph.Graph, running int, sandboxed bool) router.State {
	// The fold counts invalid plans; the router counts the replans made in
	// this planning round, and the last invalid plan has not been
	// replanned yet.
	replans := st.Replans - st.RoundReplans
	if st.InvalidPlan != "" && replans > 0 {
		replans--
	}
	rs := router.State{
		RunID: st.RunID, Task: st.Request.Task, HasGraph: st.Graph != nil,
		Running: running, Replans: replans, MaxReplans: st.Request.MaxReplans,
		ValidationError: st.InvalidPlan, ApprovalMode: router.ApprovalMode(st.Request.ApprovalMode),
		Sandboxed: sandboxed, StepsRun: st.StepsRun, MaxSteps: st.Request.MaxSteps,
		Cancelled:   st.Status == backend.RunTerminated,
		UserPlan:    st.PlanSource == planner.SourceExplicit || st.PlanSource == planner.SourceOneLiner || st.Request.Plan != nil,
		StepReplans: len(st.Revised), MaxStepReplans: max(st.Request.MaxStepReplans, 0), Revising: st.Revision != nil,
		Searches:     st.searches(),
		AllowedHosts: st.AllowedHosts,
		MaxReviews:   max(st.Request.MaxReviews, 0), Reviews: len(st.Reviews), Reviewing: st.Review != nil,
		MaxRetries: st.Request.MaxRetries, CriticThreshold: max(st.Request.CriticThreshold, 0),
	}
	rs.Review = !rs.UserPlan || st.Request.Review
	if st.Answer != nil {
		rs.Answered, rs.AnswerReason = true, st.Answer.Reason
	}
	switch {
	case st.Status.Terminal():
		rs.Phase = router.PhaseFinished
	case len(st.PendingApprovals()) > 0:
		rs.Phase = router.PhaseAwaitingApproval
	case st.Graph == nil:
		rs.Phase = router.PhaseNew
	default:
		rs.Phase = router.PhaseExecuting
	}
	if g == nil {
		return rs
	}
	states := make(map[string]taskgraph.StepState, len(st.Steps))
	folded := 0
	for id, s := range st.Steps {
		if s.State == StepRunning {
			folded++
		}
		switch s.State {
		case StepInDoubt:
			// In the graph's maths an in-doubt step may run again (once approved).
			states[id] = taskgraph.Pending
		default:
			states[id] = taskgraph.StepState(s.State)
		}
		if s.State == StepFailed {
			rs.Failed = append(rs.Failed, id)
			if rs.Errors == nil {
				rs.Errors = map[string]string{}
			}
			rs.Errors[id] = s.Error
			if s.Denied {
				rs.Denied = append(rs.Denied, id)
			}
			if s.Result != nil && s.Result.Retryable && !s.Denied {
				if rs.Retryable == nil {
					rs.Retryable = map[string]int{}
				}
				rs.Retryable[id] = s.Attempts
			}
		}
	}

	// A step the fold shows running counts even when its worker has just
	// ended: its result is on the ledger but not folded yet, and the router
	// must wait for it rather than complete the run without it.
	rs.Running = max(rs.Running, folded)
	for _, id := range g.Ready(states) {
		s := st.Steps[id]
		if s.State == StepRunning || s.State == StepAwaitingApproval {
			continue
		}
		node := s.Node
		node.Args = s.Args()
		approved := s.Approved
		if node.Kind == backend.KindCoderStep && s.Script == nil {
			// Writing the script is a model call with no effect on the
			// machine; the script is what needs approval, once written.
			approved = true
		}
		rs.Ready = append(rs.Ready, router.ReadyStep{Node: node, Approved: approved, InDoubt: s.State == StepInDoubt, Untrusted: s.Untrusted})
	}
	if needsDone(rs) {
		for _, id := range st.Order() {
			if s := st.Steps[id]; s.State == StepDone {
				d := router.DoneStep{ID: id, Title: s.Node.Title}
				if s.Critique != nil {
					d.Score, d.HasScore = s.Critique.Score, true
				}
				rs.Done = append(rs.Done, d)
			}
		}
	}
	return rs
}
