package runtime

import (
	"context"
	"encoding/json"
	"slices"

	"ducklm/backend"
	"ducklm/backend/router"
	"ducklm/backend/taskgraph"
)

// stepIndex holds a run's step records by plan position for the router's
// view, built once per accepted plan: each decision then reads the records
// through pointers (the fold edits them in place) and the graph's ready
// steps through arrays, instead of building a map of every step's state and
// looking every step up by id (about 10 ms a decision at 10,000 steps).
type stepIndex struct {
	st       *RunState
	plans    int // st.plans when built: a newer plan replaced every record
	g        *taskgraph.Graph
	recs     []*StepRecord         // by plan position
	states   []taskgraph.StepState // by plan position, refilled at each decision
	searches []backend.TaskNode    // the plan's world_search steps
	done     []router.DoneStep     // the router's list of finished steps, refilled at each decision
}

// indexSteps returns the step index of st's accepted plan g: idx when it
// still is, else a new one (nil without a plan).
func indexSteps(st *RunState, g *taskgraph.Graph, idx *stepIndex) *stepIndex {
	if g == nil || st.Graph == nil {
		return nil
	}
	if idx != nil && idx.st == st && idx.plans == st.plans && idx.g == g {
		return idx
	}
	idx = &stepIndex{st: st, plans: st.plans, g: g, recs: make([]*StepRecord, g.Len()), states: make([]taskgraph.StepState, g.Len())}
	for i := range idx.recs {
		idx.recs[i] = st.Steps[g.IDAt(i)]
	}
	for _, n := range st.Graph.Nodes {
		if n.Tool == router.ToolWorldSearch {
			idx.searches = append(idx.searches, n)
		}
	}
	return idx
}

// routerState is what the router sees of a run: built from the fold, never
// shared with it (the router cannot change the run). idx is the index of
// the run's accepted plan (nil: none).
func routerState(st *RunState, idx *stepIndex, running int, sandboxed bool, starting []string) router.State {
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
		UserPlan:    st.userPlan(),
		StepReplans: len(st.Revised), MaxStepReplans: max(st.Request.MaxStepReplans, 0), Revising: st.Revision != nil,
		AllowedHosts: st.AllowedHosts,
		MaxReviews:   max(st.Request.MaxReviews, 0), Reviews: len(st.Reviews), Reviewing: st.Review != nil,
		MaxRetries: st.Request.MaxRetries, CriticThreshold: max(st.Request.CriticThreshold, 0),
	}
	rs.Review = !rs.UserPlan || st.Request.Review
	if st.Answer != nil {
		rs.Answered, rs.AnswerReason = true, st.Answer.Reason
	}
	folded, asking := 0, false
	if idx != nil {
		for _, n := range idx.searches {
			if s, ok := st.searchOf(n); ok {
				rs.Searches = append(rs.Searches, s)
			}
		}
		for i, s := range idx.recs {
			if s == nil {
				idx.states[i] = taskgraph.Pending
				continue
			}
			asking = asking || s.Approval != nil
			switch s.State {
			case StepRunning:
				folded++
			case StepFailed:
				id := idx.g.IDAt(i)
				rs.Failed = append(rs.Failed, id)
				if rs.Errors == nil {
					rs.Errors = map[string]string{}
				}
				rs.Errors[id] = s.Error
				if s.Denied {
					rs.Denied = append(rs.Denied, id)
				}
				if r := s.Result; r != nil && r.Retryable && !s.Denied {
					if rs.Retryable == nil {
						rs.Retryable = map[string]int{}
					}
					rs.Retryable[id] = s.Attempts
				}
			}
			if s.State == StepPending && len(starting) > 0 && slices.Contains(starting, idx.g.IDAt(i)) {
				// Started, its start not recorded yet (it rides on the
				// step's result): running, and counted as a step run.
				folded++
				rs.StepsRun++
				idx.states[i] = taskgraph.StepState(StepRunning)
				continue
			}
			if s.State == StepInDoubt {
				// In the graph's maths an in-doubt step may run again (once approved).
				idx.states[i] = taskgraph.Pending
			} else {
				idx.states[i] = taskgraph.StepState(s.State)
			}
		}
	}
	switch {
	case st.Status.Terminal():
		rs.Phase = router.PhaseFinished
	case asking:
		rs.Phase = router.PhaseAwaitingApproval
	case st.Graph == nil:
		rs.Phase = router.PhaseNew
	default:
		rs.Phase = router.PhaseExecuting
	}
	if idx == nil {
		return rs
	}
	// A step the fold shows running counts even when its worker has just
	// ended: its result is on the ledger but not folded yet, and the router
	// must wait for it rather than complete the run without it.
	rs.Running = max(rs.Running, folded)
	for _, i := range idx.g.ReadyIn(idx.states) {
		s := idx.recs[i]
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
		idx.done = idx.done[:0] // a buffer the index keeps: the router only reads it
		for i, s := range idx.recs {
			if s != nil && s.State == StepDone {
				d := router.DoneStep{ID: idx.g.IDAt(i), Title: s.Node.Title}
				if s.Critique != nil {
					d.Score, d.HasScore = s.Critique.Score, true
				}
				idx.done = append(idx.done, d)
			}
		}
		if len(idx.done) > 0 {
			rs.Done = idx.done
		}
	}
	return rs
}

// needsDone says whether the router can use the finished steps: to judge
// them by their critic scores (a model's plan with a threshold), or, once
// nothing runs, waits or is ready, to end the run with their names. In a
// long user's plan the list is not built at every decision.
func needsDone(rs router.State) bool {
	return (!rs.UserPlan && rs.CriticThreshold > 0) ||
		(len(rs.Ready) == 0 && rs.Running == 0 && rs.Phase != router.PhaseAwaitingApproval)
}

// routerContext is what the router chooses models with.
func (c *Controller) routerContext(ctx context.Context, st *RunState) router.Context {
	rc := router.Context{Settings: router.Settings{Models: map[router.Role]string{}}}
	for role, model := range st.Request.Models {
		rc.Settings.Models[router.Role(role)] = model
	}
	if c.d.Models != nil {
		if names, err := c.d.Models.ModelNames(ctx); err == nil {
			rc.AvailableModels = names
		}
	}
	return rc
}

// modelFor is the model the router picks for role: the user's choice when
// Ollama lists it, else the router's preference among what it lists; "" when
// there is none.
func (c *Controller) modelFor(ctx context.Context, st *RunState, role router.Role) string {
	rc := c.routerContext(ctx, st)
	m, _ := router.PickModel(role, rc.AvailableModels, rc.Settings)
	return m
}

func payloadString(p json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(m[key], &s)
	return s
}
