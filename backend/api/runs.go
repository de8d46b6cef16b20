package api

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/router"
	"ducklm/backend/runtime"
	"ducklm/backend/settings"
	"ducklm/backend/taskgraph"
	"ducklm/backend/tool"
)

// TaskInput is the new-task form.
type TaskInput struct {
	Task         string            `json:"task"`
	Plan         string            `json:"plan"` // an explicit plan as JSON text; "" to let the planner plan
	ApprovalMode string            `json:"approvalMode"`
	Models       map[string]string `json:"models"`
	Workspace    string            `json:"workspace"`
	// CreateWorkspace creates a workspace folder that does not exist. The
	// window asks first: without it a missing folder is refused with "the
	// workspace folder DIR does not exist" (bridge/errors.ts knows it).
	CreateWorkspace bool `json:"createWorkspace,omitempty"`
	TimeoutSeconds  int  `json:"timeoutSeconds"`
	MaxSteps        int  `json:"maxSteps"`
	MaxPlanSteps    int  `json:"maxPlanSteps,omitempty"` // 0: taskgraph.MaxNodes
	// AllowedHosts are hosts this run's web steps reach without asking,
	// beside those allowed in Settings.
	AllowedHosts []string `json:"allowedHosts,omitempty"`
	// Review has an explicit plan's or a one-liner's results reviewed and
	// the task answered, as a model's plan always is.
	Review bool `json:"review,omitempty"`
}

// Runs lists task runs, those waiting for approval first.
func (a *API) Runs() ([]runtime.RunSummary, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	runs, err := a.svc.Runtime.Runs(a.ctx())
	if runs == nil {
		runs = []runtime.RunSummary{}
	}
	return runs, a.fail("runs", err)
}

// SubmitTask starts a task run.
func (a *API) SubmitTask(in TaskInput) (backend.WorldRun, error) {
	if err := a.ready(); err != nil {
		return backend.WorldRun{}, err
	}
	// The form's choices win; the settings fill what it leaves open.
	prefs, _ := settings.Load(a.svc.Dir)
	if in.ApprovalMode == "" {
		in.ApprovalMode = prefs.ApprovalMode
	}
	models := map[string]string{}
	for role, m := range prefs.Models {
		models[role] = m
	}
	for role, m := range in.Models {
		if m != "" {
			models[role] = m
		}
	}
	req := runtime.TaskRequest{Task: strings.TrimSpace(in.Task), ApprovalMode: runtime.ApprovalMode(in.ApprovalMode),
		Models: models, Workspace: in.Workspace, CreateWorkspace: in.CreateWorkspace, MaxSteps: in.MaxSteps, MaxPlanSteps: in.MaxPlanSteps,
		AllowedHosts: append(slices.Clone(prefs.AllowedHosts), in.AllowedHosts...), Review: in.Review,
		MaxReviews: prefs.MaxReviews, CriticThreshold: prefs.CriticThreshold}
	if in.TimeoutSeconds < 0 || in.TimeoutSeconds > int(runtime.MaxStepTimeout/time.Second) {
		return backend.WorldRun{}, a.fail("submit", backend.Errorf(backend.EINVALID, "the step timeout is a whole number of seconds from 1 to %d, not %d", int(runtime.MaxStepTimeout/time.Second), in.TimeoutSeconds))
	}
	req.Limits.Timeout = time.Duration(in.TimeoutSeconds) * time.Second
	if strings.TrimSpace(in.Plan) != "" {
		g, err := taskgraph.ParseMax([]byte(in.Plan), a.svc.Tools, in.MaxPlanSteps)
		if err != nil {
			return backend.WorldRun{}, a.fail("submit", err)
		}
		tg := g.TaskGraph()
		req.Plan = &tg
	}
	run, err := a.svc.Runtime.Submit(a.ctx(), req)
	return run, a.fail("submit", err)
}

// PlanCheck is the result of validating a plan as it is typed.
type PlanCheck struct {
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems"`
	Steps    int      `json:"steps"`
}

// ValidatePlan checks an explicit plan without running it.
func (a *API) ValidatePlan(plan string) (PlanCheck, error) {
	if err := a.ready(); err != nil {
		return PlanCheck{}, err
	}
	g, err := taskgraph.Parse([]byte(plan), a.svc.Tools)
	if err != nil {
		return PlanCheck{Problems: strings.Split(backend.ErrorMessage(err), "; ")}, nil
	}
	return PlanCheck{Valid: true, Problems: []string{}, Steps: g.Len()}, nil
}

// ToolCatalog describes the tools a plan may use.
func (a *API) ToolCatalog() ([]tool.CatalogEntry, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	return a.svc.Tools.Catalog(), nil
}

// RiskRules is the risk policy's rule table, for approval cards.
func (a *API) RiskRules() []router.Rule { return router.Rules() }

// RunDetail is everything the run view shows of one run.
type RunDetail struct {
	Run       backend.WorldRun   `json:"run"`
	State     *runtime.RunState  `json:"state"`
	Approvals []runtime.Approval `json:"approvals"`
	// DrivenElsewhere says, for a run another installation drives on the
	// team's database, who drives it and when it goes on ("" otherwise).
	DrivenElsewhere string `json:"drivenElsewhere,omitempty"`
}

// RunDetail returns a run's folded state and open approvals.
func (a *API) RunDetail(runID string) (RunDetail, error) {
	if err := a.ready(); err != nil {
		return RunDetail{}, err
	}
	ctx := a.ctx()
	st, run, err := a.svc.Runtime.Load(ctx, runID)
	if err != nil {
		return RunDetail{}, a.fail("run detail", err)
	}
	a.svc.Runtime.NoteConfinement(st)
	approvals, err := a.svc.Runtime.Approvals(ctx, runID)
	if approvals == nil {
		approvals = []runtime.Approval{}
	}
	out := RunDetail{Run: run, State: st, Approvals: approvals}
	if o := a.svc.Runtime.Elsewhere(st); o != nil && !st.Status.Terminal() {
		out.DrivenElsewhere = a.svc.Runtime.DriverNote(ctx, *o)
	}
	return out, a.fail("run detail", err)
}

// RunAtCheckpoint returns a task run's folded state at one of its
// checkpoints: what a fork from it starts from (the plan it had then, its
// steps as they were).
func (a *API) RunAtCheckpoint(checkpointID string) (*runtime.RunState, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	if err := backend.CheckID(checkpointID, backend.KindCheckpoint); err != nil {
		return nil, a.fail("run at checkpoint", err)
	}
	st, err := a.svc.Runtime.StateAt(a.ctx(), checkpointID)
	if err != nil {
		return nil, a.fail("run at checkpoint", err)
	}
	a.svc.Runtime.NoteConfinement(st)
	return st, nil
}

// Approvals lists every open approval request.
func (a *API) Approvals() ([]runtime.Approval, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	out, err := a.svc.Runtime.Approvals(a.ctx(), "")
	if out == nil {
		out = []runtime.Approval{}
	}
	return out, a.fail("approvals", err)
}

// AnswerInput is a user's answer on an approval card.
type AnswerInput struct {
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	Approve   bool   `json:"approve"`
	Args      string `json:"args"` // edited arguments as JSON text; "" keeps them
	Network   bool   `json:"network"`
	// AllowHost allows a web step's host for the rest of the run.
	AllowHost      bool   `json:"allowHost,omitempty"`
	Reason         string `json:"reason"`
	IdempotencyKey string `json:"idempotencyKey"`
}

// Answer approves, denies or edits-and-approves one request.
func (a *API) Answer(in AnswerInput) error {
	if err := a.ready(); err != nil {
		return err
	}
	ans := runtime.Answer{RequestID: in.RequestID, Approve: in.Approve, Network: in.Network, Reason: in.Reason,
		AllowHost: in.AllowHost, IdempotencyKey: in.IdempotencyKey, By: "ui"}
	if strings.TrimSpace(in.Args) != "" {
		if !json.Valid([]byte(in.Args)) {
			return a.fail("answer", backend.Errorf(backend.EINVALID, "the edited arguments are not valid JSON"))
		}
		ans.Args = json.RawMessage(in.Args)
	}
	return a.fail("answer", a.svc.Runtime.Answer(a.ctx(), in.RunID, ans))
}

// CancelRun cancels a run and kills its running steps.
func (a *API) CancelRun(runID string) error {
	if err := a.ready(); err != nil {
		return err
	}
	return a.fail("cancel", a.svc.Runtime.Cancel(a.ctx(), runID, "Cancelled from the window."))
}

// ResumeRun drives a paused run again.
func (a *API) ResumeRun(runID string) error {
	if err := a.ready(); err != nil {
		return err
	}
	return a.fail("resume", a.svc.Runtime.Resume(a.ctx(), runID))
}

// ChooseFolder opens the native folder dialog (desktop window only).
func (a *API) ChooseFolder(title string) (string, error) {
	if a.dialogs == nil {
		return "", a.fail("choose folder", backend.Errorf(backend.EUNAVAILABLE, "folder dialogs exist only in the desktop window; type the path instead"))
	}
	return a.dialogs.ChooseFolder(title)
}

// ModelInfo is what the UI shows about Ollama.
type ModelInfo struct {
	Host      string   `json:"host"`
	Reachable bool     `json:"reachable"`
	Error     string   `json:"error,omitempty"`
	Models    []string `json:"models"`
	Sandboxed bool     `json:"sandboxed"`
}

// Models reports Ollama's host, whether it answers and its models.
func (a *API) Models() (ModelInfo, error) {
	if err := a.ready(); err != nil {
		return ModelInfo{}, err
	}
	ctx, cancel := context.WithTimeout(a.ctx(), 3*time.Second)
	defer cancel()
	return modelInfo(ctx, a.svc.Ollama, a.svc.Sandboxed()), nil
}

// Screenshot is a picture a step took (a browser step's page).
type Screenshot struct {
	MediaType string `json:"mediaType"`
	Data      []byte `json:"data"` // base64 in JSON
}

// StepScreenshot returns the screenshot a browser step took of its page.
func (a *API) StepScreenshot(runID, stepID string) (Screenshot, error) {
	if err := a.ready(); err != nil {
		return Screenshot{}, err
	}
	ctx := a.ctx()
	st, _, err := a.svc.Runtime.Load(ctx, runID)
	if err != nil {
		return Screenshot{}, a.fail("screenshot", err)
	}
	rec := st.Steps[stepID]
	if rec == nil || rec.Result == nil || rec.Node.Tool != router.ToolBrowser {
		return Screenshot{}, a.fail("screenshot", backend.Errorf(backend.ENOTFOUND, "step %q of run %s took no screenshot", stepID, runID))
	}
	var out struct {
		Screenshot *backend.BlobRef `json:"screenshot"`
	}
	if json.Unmarshal(rec.Result.Output, &out) != nil || out.Screenshot == nil {
		return Screenshot{}, a.fail("screenshot", backend.Errorf(backend.ENOTFOUND, "step %q of run %s took no screenshot", stepID, runID))
	}
	data, err := a.svc.Blobs.Get(ctx, *out.Screenshot)
	if err != nil {
		return Screenshot{}, a.fail("screenshot", err)
	}
	return Screenshot{MediaType: out.Screenshot.MediaType, Data: data}, nil
}
