package runtime

import (
	"cmp"
	"encoding/json"
	"slices"

	"ducklm/backend"
	"ducklm/backend/planner"
	"ducklm/backend/router"
)

// Step states as the run records them.
const (
	StepPending          = "pending"
	StepRunning          = "running"
	StepAwaitingApproval = "awaiting_approval"
	StepDone             = "done"
	StepFailed           = "failed"
	StepSkipped          = "skipped"
	StepInDoubt          = "in_doubt"
)

// StepRecord is what the run knows of one step.
type StepRecord struct {
	Node     backend.TaskNode `json:"node"`
	State    string           `json:"state"`
	Attempts int              `json:"attempts"`
	// Approval is the open request for this step, if any.
	Approval *approvalRequest `json:"approval,omitempty"`
	// Approved holds for the step's next start only: a retry or an in-doubt
	// step needs a fresh approval.
	Approved     bool            `json:"approved"`
	ApprovedArgs json.RawMessage `json:"approvedArgs,omitempty"`
	Network      bool            `json:"network"`
	// Hosts and PrivateHosts are what the step's last start was granted.
	Hosts        []string         `json:"hosts,omitempty"`
	PrivateHosts []string         `json:"privateHosts,omitempty"`
	Result       *stepFinished    `json:"result,omitempty"`
	Critique     *critiquePayload `json:"critique,omitempty"`
	Script       *coderScript     `json:"script,omitempty"` // a coder step's script, once written
	Error        string           `json:"error,omitempty"`
	Denied       bool             `json:"denied,omitempty"` // failed because the user said no
	// Untrusted names the outside content the run had read when this step
	// was planned (a review or revision after a web page): the router
	// rates such a step one risk level higher.
	Untrusted []string `json:"untrusted,omitempty"`
	// Resolved is the step's args with the earlier results they name
	// filled in (refs.go), once its dependencies are done. It is derived
	// from results that never change, so it is not stored.
	Resolved json.RawMessage `json:"-"`
}

// Args returns the arguments the step runs with: the user's edit if any,
// else its args with the earlier results they name filled in.
func (s *StepRecord) Args() json.RawMessage {
	if len(s.ApprovedArgs) > 0 {
		return s.ApprovedArgs
	}
	if len(s.Resolved) > 0 {
		return s.Resolved
	}
	return s.Node.Args
}

// RunState is the fold of a task run's events. It is also the content of the
// run's checkpoints.
type RunState struct {
	RunID        string            `json:"runId"`
	WorldID      string            `json:"worldId"`
	Request      TaskRequest       `json:"request"`
	Status       backend.RunStatus `json:"status"`
	StatusReason string            `json:"statusReason,omitempty"`
	// NeedsModel says the run is paused until a model can plan its task.
	NeedsModel   bool                   `json:"needsModel,omitempty"`
	Graph        *backend.TaskGraph     `json:"graph,omitempty"`
	Steps        map[string]*StepRecord `json:"steps"`
	PlanAttempts int                    `json:"planAttempts"`
	Replans      int                    `json:"replans"`
	InvalidPlan  string                 `json:"invalidPlan,omitempty"` // the last validation error, until a plan is accepted
	// RoundReplans is Replans when the current planning round began (the
	// first plan, or a revision): each round has its own replan bound.
	RoundReplans int               `json:"roundReplans,omitempty"`
	PlanSource   string            `json:"planSource,omitempty"` // who made the accepted plan (planner.Source*)
	Planning     []PlanningAttempt `json:"planning,omitempty"`   // every planning model answer, in order
	Revision     *Revision         `json:"revision,omitempty"`   // the open revision round, until a plan is accepted
	Revised      []Revision        `json:"revised,omitempty"`    // every revision round begun, in order
	Review       *ReviewRound      `json:"review,omitempty"`     // the open review round, until it answers or adds steps
	Reviews      []ReviewRound     `json:"reviews,omitempty"`    // every review round begun, in order
	Answer       *RunAnswer        `json:"answer,omitempty"`     // the run's answer to its task
	// Outside names the content from outside the run has read (web and
	// browser pages), in order: steps planned after it are untrusted.
	Outside []string `json:"outside,omitempty"`
	Ticks   int64    `json:"ticks"` // decisions applied: the run's world-local time
	// AllowedHosts are the hosts web steps reach without asking: the
	// request's, and those approvals allowed for the rest of the run.
	AllowedHosts []string `json:"allowedHosts,omitempty"`
	StepsRun     int      `json:"stepsRun"`
	Response     string   `json:"response,omitempty"`
	Error        string   `json:"error,omitempty"`
	Seq          int64    `json:"seq"` // the last event folded in
	// CancelRequested is the reason of a cancel request another process
	// recorded, until the run ends.
	CancelRequested string `json:"cancelRequested,omitempty"`

	// recovered says why Load did not start from the run's latest
	// checkpoint (it was damaged) and where it started instead; the
	// driver records it as a warning when it resumes the run. Not stored.
	recovered string
	// plans counts the plans accepted by this fold: each replaces Steps,
	// which the router's step index (route.go) holds by pointer. Not stored.
	plans int
}

// NewRunState returns the state of a run before its first event.
func NewRunState(runID, worldID string) *RunState {
	return &RunState{RunID: runID, WorldID: worldID, Status: backend.RunPending, Steps: map[string]*StepRecord{}}
}

// userPlan reports whether the run's plan is the user's (an explicit plan
// or a shell one-liner), which ducklm runs as it is and never rewrites.
// Steps a review added are the model's: once their plan is accepted, the
// plan is not the user's, and a failed one of them is revised like any
// model's step (the user's steps, all finished by then, are kept). Before
// the first plan is accepted, a plan given with the task (or a task that
// is one: a JSON plan, a shell one-liner) is the user's.
func (s *RunState) userPlan() bool {
	switch s.PlanSource {
	case planner.SourceExplicit, planner.SourceOneLiner:
		return true
	case "":
		// Not planned yet: the task's own plan, or one the planner makes.
		_, direct := planner.Direct(planner.Request{Task: s.Request.Task, Explicit: s.Request.Plan})
		return direct
	}
	return false
}

// Clone returns a deep copy. It copies the run-level fields, the lists the
// fold appends to or edits (Planning, Revised) and every step record, but
// not what the records point to: Apply never changes a value it has stored
// (a request, a graph, a node, a result, a critique, a script, an approval,
// a revision); it replaces it. A new field that Apply changes in place must
// be copied here (TestCloneIsDeep checks the fold against its clone).
func (s *RunState) Clone() *RunState {
	out := *s
	out.Planning = slices.Clone(s.Planning)
	out.Revised = slices.Clone(s.Revised)
	out.Reviews = slices.Clone(s.Reviews)
	out.Outside = slices.Clone(s.Outside)
	out.Steps = make(map[string]*StepRecord, len(s.Steps))
	for id, rec := range s.Steps {
		r := *rec
		out.Steps[id] = &r
	}
	return &out
}

// light returns a copy of the run-level fields only (no request, graph or
// steps): enough to fold the status, error and clock of later events.
func (s *RunState) light() *RunState {
	return &RunState{RunID: s.RunID, WorldID: s.WorldID, Status: s.Status, StatusReason: s.StatusReason, NeedsModel: s.NeedsModel,
		Ticks: s.Ticks, Error: s.Error, Seq: s.Seq, Steps: map[string]*StepRecord{}, AllowedHosts: s.AllowedHosts}
}

// view returns what a step worker reads of the run: the run-level fields,
// the request and a copy of one step's record. It costs the same however
// many steps the plan has.
func (s *RunState) view(stepID string) *RunState {
	v := s.light()
	v.Request = s.Request
	if rec := s.Steps[stepID]; rec != nil {
		r := *rec
		v.Steps[stepID] = &r
	}
	return v
}

// Order returns the step ids in plan order.
func (s *RunState) Order() []string {
	if s.Graph == nil {
		return nil
	}
	ids := make([]string, len(s.Graph.Nodes))
	for i, n := range s.Graph.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// PendingApprovals returns the open approval requests in plan order: none
// once the run has ended (a request the end left open is closed).
func (s *RunState) PendingApprovals() []*StepRecord {
	if s.Status.Terminal() {
		return nil
	}
	var out []*StepRecord
	for _, id := range s.Order() {
		if st := s.Steps[id]; st != nil && st.Approval != nil {
			out = append(out, st)
		}
	}
	return out
}

// Apply folds one event into the state. It is pure: it reads only the event
// and the state, so folding the same events always gives the same state.
func (s *RunState) Apply(e backend.Event) {
	s.Seq = e.Seq
	step := func(id string) *StepRecord {
		if st, ok := s.Steps[id]; ok {
			return st
		}
		return &StepRecord{} // an event about an unknown step changes nothing that is kept
	}
	switch e.Type {
	case EvTaskReceived:
		var r TaskRequest
		if json.Unmarshal(e.Payload, &r) == nil {
			s.Request = r
			s.AllowedHosts = slices.Clone(r.AllowedHosts)
		}
		s.Status = backend.RunRunning
	case EvDecision:
		s.Ticks++
	case EvPlanProposed:
		s.PlanAttempts++
	case EvPlanInvalid:
		var p planInvalidPayload
		_ = json.Unmarshal(e.Payload, &p)
		s.Replans++
		s.InvalidPlan = p.Error
		if n := len(s.Planning); n > 0 && s.Planning[n-1].Error == "" && !s.Planning[n-1].Accepted {
			s.Planning[n-1].Error = p.Error
		}
	case EvPlannerAnswered:
		var p PlanningAttempt
		if json.Unmarshal(e.Payload, &p) == nil {
			s.Planning = append(s.Planning, p)
		}
	case EvPlanRevising:
		var p Revision
		if json.Unmarshal(e.Payload, &p) == nil {
			s.Revision = &p
			s.Revised = append(s.Revised, p)
			s.RoundReplans = s.Replans
			s.InvalidPlan = ""
		}
	case EvReviewing:
		var p ReviewRound
		if json.Unmarshal(e.Payload, &p) == nil {
			s.Review = &p
			s.Reviews = append(slices.Clip(s.Reviews), p)
			s.RoundReplans = s.Replans
			s.InvalidPlan = ""
		}
	case EvAnswered:
		var p RunAnswer
		if json.Unmarshal(e.Payload, &p) == nil {
			s.Answer = &p
			s.Response = p.Text
			s.Review = nil
			if n := len(s.Planning); n > 0 && s.Planning[n-1].Error == "" {
				s.Planning[n-1].Accepted = true
			}
		}
	case EvPlanAccepted:
		var p planPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			g := s.planGraph(p)
			s.Graph = &g
			s.InvalidPlan = ""
			s.PlanSource = p.Source
			s.Revision = nil
			s.Review = nil
			old := s.Steps
			s.plans++
			s.Steps = make(map[string]*StepRecord, len(g.Nodes))
			// A step a model planned after outside content was read is
			// untrusted; the user's steps and the router's (a search's
			// line) are not.
			var untrusted []string
			if p.Source == planner.SourceModel && p.Search == "" {
				untrusted = s.Outside
			}
			for _, n := range g.Nodes {
				s.Steps[n.ID] = &StepRecord{Node: n, State: StepPending, Untrusted: untrusted}
			}
			// A revised plan keeps its finished steps as they ran.
			for _, id := range p.Kept {
				if rec, ok := old[id]; ok && s.Steps[id] != nil {
					s.Steps[id] = rec
				}
			}
			if n := len(s.Planning); n > 0 && s.Planning[n-1].Error == "" {
				s.Planning[n-1].Accepted = true
			}
		}
	case EvApprovalRequested:
		var p approvalRequest
		if json.Unmarshal(e.Payload, &p) == nil {
			st := step(p.Step)
			st.State = StepAwaitingApproval
			st.Approval = &p
		}
	case EvApproved:
		var p approvalAnswer
		if json.Unmarshal(e.Payload, &p) == nil {
			st := step(p.Step)
			if st.Approval != nil && st.Approval.RequestID == p.RequestID {
				st.Approval = nil
				st.Approved = true
				st.Network = p.Network
				if len(p.Args) > 0 {
					st.ApprovedArgs = p.Args
				}
				if host := router.WebHost(st.Args()); p.AllowHost && host != "" && !slices.Contains(s.AllowedHosts, host) {
					s.AllowedHosts = append(slices.Clip(s.AllowedHosts), host)
				}
				st.State = StepPending
			}
		}
	case EvDenied:
		var p approvalAnswer
		if json.Unmarshal(e.Payload, &p) == nil {
			st := step(p.Step)
			if st.Approval != nil && st.Approval.RequestID == p.RequestID {
				st.Approval = nil
				st.State = StepFailed
				st.Denied = true
				st.Error = "denied by the user"
				if p.Reason != "" {
					st.Error += ": " + p.Reason
				}
			}
		}
	case EvStepStarted:
		var p stepStarted
		if json.Unmarshal(e.Payload, &p) == nil {
			st := step(p.Step)
			st.State = StepRunning
			st.Attempts = p.Attempt
			st.Approved = false // an approval covers one start
			st.Hosts, st.PrivateHosts = p.Hosts, p.PrivateHosts
			s.StepsRun++
			if p.Decision != nil {
				s.Ticks++ // the router's decision it carries
			}
		}
	case EvStepFinished:
		var p stepFinished
		if json.Unmarshal(e.Payload, &p) == nil {
			st := step(p.Step)
			if p.Critique != nil {
				st.Critique = p.Critique.recorded(p.Step)
				if p.Critique.Decision != "" {
					s.Ticks++ // the critic's decision it carries
				}
			}
			// The record keeps the result; its critique and checkpoint
			// have their own places, its memory decision the memory's.
			p.Critique, p.CheckpointID, p.Memory = nil, "", nil
			st.Result = &p
			if p.OK {
				st.State = StepDone
				st.Error = ""
				if what, ok := router.OutsideContent(st.Node.Tool, st.Args()); ok && !slices.Contains(s.Outside, what) && len(s.Outside) < maxOutside {
					s.Outside = append(slices.Clip(s.Outside), what)
				}
			} else {
				st.State = StepFailed
				st.Error = failureSentence(p)
			}
		}
	case EvStepRetrying:
		var p stepNote
		if json.Unmarshal(e.Payload, &p) == nil {
			step(p.Step).State = StepPending
			if p.Decision != nil {
				s.Ticks++ // the router's decision it carries
			}
		}
	case EvStepInDoubt:
		var p stepNote
		if json.Unmarshal(e.Payload, &p) == nil {
			st := step(p.Step)
			st.State = StepInDoubt
			st.Approved = false
		}
	case EvStepSkipped:
		var p stepNote
		if json.Unmarshal(e.Payload, &p) == nil {
			st := step(p.Step)
			st.State = StepSkipped
			st.Error = p.Reason
		}
	case EvCoderScript:
		var p coderScript
		if json.Unmarshal(e.Payload, &p) == nil {
			st := step(p.Step)
			st.Script = &p
			st.Approved = false // the script, not the goal, is what the user approves
		}
	case EvCritique:
		var p critiquePayload
		if json.Unmarshal(e.Payload, &p) == nil {
			step(p.Step).Critique = &p
			if p.Decision != "" {
				s.Ticks++ // the critic's decision it carries
			}
		}
	case EvStatus:
		var p statusPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			s.Status, s.StatusReason, s.NeedsModel = p.Status, p.Reason, p.NeedsModel
		}
	case EvCompleted:
		var p endPayload
		_ = json.Unmarshal(e.Payload, &p)
		s.Status, s.StatusReason, s.NeedsModel = backend.RunCompleted, p.Reason, false
		if p.Response != "" { // runs recorded before run.answered
			s.Response = p.Response
		}
		s.closeApprovals()
	case EvFailed:
		var p endPayload
		_ = json.Unmarshal(e.Payload, &p)
		s.Status, s.StatusReason, s.Error, s.NeedsModel = backend.RunFailed, p.Reason, p.Reason, false
		s.closeApprovals()
	case EvCancelRequested:
		var p cancelRequest
		_ = json.Unmarshal(e.Payload, &p)
		s.CancelRequested = cmp.Or(p.Reason, "Cancelled.")
	case EvCancelled:
		var p endPayload
		_ = json.Unmarshal(e.Payload, &p)
		s.Status, s.StatusReason, s.NeedsModel = backend.RunTerminated, p.Reason, false
		s.closeApprovals()
	}
}

// closeApprovals closes the approval requests a run's end left open: the
// step never ran, and is shown as it was before it asked (pending, or in
// doubt for a request about a step in doubt). The request and its missing
// answer stay in the ledger.
func (s *RunState) closeApprovals() {
	for _, st := range s.Steps {
		if st.Approval == nil {
			continue
		}
		st.State = StepPending
		if st.Approval.InDoubt {
			st.State = StepInDoubt
		}
		st.Approval = nil
	}
}

// maxOutside bounds the outside content a run names.
const maxOutside = 20

func failureSentence(p stepFinished) string {
	switch {
	case p.Error != "":
		return p.Error
	case p.TimedOut:
		return "timed out"
	default:
		return "exited with code " + itoa(p.ExitCode)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
