package mcp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/runtime"
)

// noApprovals is said wherever a run may wait for a person.
const noApprovals = "An MCP client can never approve, deny or edit a step: approvals stay with the person at ducklm's window or command line (ducklm approve)."

// SubmitInput is submit_task's arguments.
type SubmitInput struct {
	Task string `json:"task" jsonschema:"what to do, in words; a model plans it (or a one-line shell command starting with '$ ')"`
	Plan any    `json:"plan,omitempty" jsonschema:"an explicit plan (ducklm's plan JSON: {\"nodes\":[...]}) instead of the planner's"`
	// ApprovalMode may only be as strict as the person's setting or stricter.
	ApprovalMode   string `json:"approvalMode,omitempty" jsonschema:"ask_every, ask_risky or auto_sandboxed; never less strict than the person's setting, which is the default"`
	Workspace      string `json:"workspace,omitempty" jsonschema:"the folder the run's steps work in (a full path)"`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty" jsonschema:"each step's time limit in seconds (0: the default)"`
	Review         bool   `json:"review,omitempty" jsonschema:"have an explicit plan's results reviewed and the task answered"`
}

// Submitted is submit_task's answer.
type Submitted struct {
	RunID   string `json:"runId"`
	WorldID string `json:"worldId"`
	Status  string `json:"status"`
	// ApprovalMode is the mode the run asks approvals under.
	ApprovalMode string `json:"approvalMode"`
	Note         string `json:"note"`
}

// strictness orders approval modes from the most asking.
var strictness = map[runtime.ApprovalMode]int{runtime.AskEvery: 0, runtime.AskRisky: 1, runtime.AutoSandboxed: 2}

// approvalMode is the mode a client's run asks under: the person's setting,
// or a stricter mode the client asked for. A looser one is refused.
func (s *Server) approvalMode(asked string) (runtime.ApprovalMode, error) {
	view, err := s.api.GetSettings()
	if err != nil {
		return "", err
	}
	person := runtime.ApprovalMode(view.Settings.ApprovalMode)
	if _, ok := strictness[person]; !ok {
		person = runtime.AskRisky // what the runtime takes for an unset mode
	}
	if asked == "" {
		return person, nil
	}
	mode := runtime.ApprovalMode(asked)
	level, ok := strictness[mode]
	if !ok {
		return "", backend.Errorf(backend.EINVALID, "approvalMode is ask_every, ask_risky or auto_sandboxed, not %q", asked)
	}
	if level > strictness[person] {
		return "", backend.Errorf(backend.EINVALID, "approvalMode %s asks less than the person's setting (%s); an MCP client may only ask for the same or stricter", mode, person)
	}
	return mode, nil
}

func (s *Server) submitTask(_ context.Context, _ *sdk.CallToolRequest, in SubmitInput) (*sdk.CallToolResult, Submitted, error) {
	mode, err := s.approvalMode(in.ApprovalMode)
	if err != nil {
		return nil, Submitted{}, err
	}
	ti := api.TaskInput{Task: in.Task, ApprovalMode: string(mode), Workspace: in.Workspace, TimeoutSeconds: in.TimeoutSeconds, Review: in.Review}
	switch p := in.Plan.(type) {
	case nil:
	case string:
		ti.Plan = p
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, Submitted{}, backend.Errorf(backend.EINVALID, "the plan is not JSON")
		}
		ti.Plan = string(b)
	}
	run, err := s.api.SubmitTask(ti)
	if err != nil {
		return nil, Submitted{}, err
	}
	return nil, Submitted{RunID: run.ID, WorldID: run.WorldID, Status: string(run.Status), ApprovalMode: string(mode),
		Note: "The run goes on in ducklm after this call; follow it with run_status and run_answer. " + noApprovals}, nil
}

// RunInput names a run.
type RunInput struct {
	RunID string `json:"runId" jsonschema:"the run's id (run_…)"`
}

// Waiting is a step waiting for the person's approval.
type Waiting struct {
	RequestID string `json:"requestId"`
	Step      string `json:"step"`
	Tool      string `json:"tool"`
	Risk      string `json:"risk"`
	Why       string `json:"why"`
}

// Answer is a run's answer to its task.
type Answer struct {
	Text  string   `json:"text"`
	Cites []string `json:"cites,omitempty"`
	Model string   `json:"model,omitempty"`
}

// RunStatus is run_status's answer.
type RunStatus struct {
	RunID        string `json:"runId"`
	WorldID      string `json:"worldId"`
	Task         string `json:"task"`
	Status       string `json:"status"`
	StatusReason string `json:"statusReason,omitempty"`
	// Done is true once the run ended (completed, failed or terminated).
	Done       bool    `json:"done"`
	NeedsModel bool    `json:"needsModel,omitempty"`
	Steps      int     `json:"steps"`
	StepsDone  int     `json:"stepsDone"`
	Events     int64   `json:"events"`
	Answer     *Answer `json:"answer,omitempty"`
	// Response is the run's last words when it has no answer (a one-line
	// command's output, or why it stopped).
	Response string `json:"response,omitempty"`
	Error    string `json:"error,omitempty"`
	// Waiting are the steps waiting for the person's approval.
	Waiting []Waiting `json:"waiting"`
	Note    string    `json:"note,omitempty"`
}

func (s *Server) runStatus(_ context.Context, _ *sdk.CallToolRequest, in RunInput) (*sdk.CallToolResult, RunStatus, error) {
	st, err := s.status(in.RunID)
	return nil, st, err
}

func (s *Server) status(runID string) (RunStatus, error) {
	if err := backend.CheckID(runID, backend.KindRun); err != nil {
		return RunStatus{}, err
	}
	d, err := s.api.RunDetail(runID)
	if err != nil {
		return RunStatus{}, err
	}
	out := RunStatus{RunID: d.Run.ID, WorldID: d.Run.WorldID, Status: string(d.Run.Status), Done: d.Run.Status.Terminal(), Waiting: []Waiting{}}
	if st := d.State; st != nil {
		out.Task, out.StatusReason, out.NeedsModel = st.Request.Task, st.StatusReason, st.NeedsModel
		out.Response, out.Error, out.Events = st.Response, st.Error, st.Seq
		out.Steps = len(st.Steps)
		for _, rec := range st.Steps {
			if rec.Result != nil {
				out.StepsDone++
			}
		}
		if a := st.Answer; a != nil {
			out.Answer = &Answer{Text: a.Text, Cites: a.Cites, Model: a.Model}
		}
	}
	for _, a := range d.Approvals {
		out.Waiting = append(out.Waiting, Waiting{RequestID: a.RequestID, Step: a.Step, Tool: a.Tool, Risk: a.Risk, Why: a.Why})
	}
	if len(out.Waiting) > 0 {
		out.Note = "The run waits for the person to answer its approvals. " + noApprovals
	}
	return out, nil
}

// RunAnswer is run_answer's answer.
type RunAnswer struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
	Done   bool   `json:"done"`
	// Answer is nil until the run answered its task.
	Answer   *Answer `json:"answer,omitempty"`
	Response string  `json:"response,omitempty"`
	Error    string  `json:"error,omitempty"`
	Note     string  `json:"note,omitempty"`
}

func (s *Server) runAnswer(_ context.Context, _ *sdk.CallToolRequest, in RunInput) (*sdk.CallToolResult, RunAnswer, error) {
	st, err := s.status(in.RunID)
	if err != nil {
		return nil, RunAnswer{}, err
	}
	out := RunAnswer{RunID: st.RunID, Status: st.Status, Done: st.Done, Answer: st.Answer, Response: st.Response, Error: st.Error, Note: st.Note}
	res := &sdk.CallToolResult{}
	switch {
	case st.Answer != nil:
		res.Content = []sdk.Content{&sdk.TextContent{Text: st.Answer.Text}}
	case st.Done:
		res.Content = []sdk.Content{&sdk.TextContent{Text: "The run ended (" + st.Status + ") without an answer. " + firstOf(st.Error, st.Response, st.StatusReason)}}
	default:
		res.Content = []sdk.Content{&sdk.TextContent{Text: "The run has not answered yet (" + st.Status + "). " + st.Note}}
	}
	return res, out, nil
}

// EventsInput pages a run's events.
type EventsInput struct {
	RunID  string `json:"runId" jsonschema:"the run's id (run_…)"`
	Offset int64  `json:"offset,omitempty" jsonschema:"the position of the first event (0: the oldest); pass the answer's next to go on"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most events to return (1–200, default 50)"`
}

// Event is one event of a run's history.
type Event struct {
	Seq        int64  `json:"seq"`
	Stream     string `json:"stream"`
	Type       string `json:"type"`
	RecordedAt string `json:"recordedAt"`
	Payload    any    `json:"payload" jsonschema:"the event's content, by its type"`
}

// EventsPage is run_events' answer.
type EventsPage struct {
	RunID  string  `json:"runId"`
	Total  int64   `json:"total"`
	Offset int64   `json:"offset"`
	Events []Event `json:"events"`
	// Next is the offset of the following page; 0 when this is the last.
	Next int64 `json:"next"`
}

const (
	defaultEventPage = 50
	maxEventPage     = 200
)

func (s *Server) runEvents(_ context.Context, _ *sdk.CallToolRequest, in EventsInput) (*sdk.CallToolResult, EventsPage, error) {
	if err := backend.CheckID(in.RunID, backend.KindRun); err != nil {
		return nil, EventsPage{}, err
	}
	if in.Limit <= 0 {
		in.Limit = defaultEventPage
	}
	if in.Offset < 0 {
		return nil, EventsPage{}, backend.Errorf(backend.EINVALID, "offset is a position from 0, not %d", in.Offset)
	}
	in.Limit = min(in.Limit, maxEventPage)
	p, err := s.api.History(in.RunID, in.Offset, in.Limit)
	if err != nil {
		return nil, EventsPage{}, err
	}
	out := EventsPage{RunID: in.RunID, Total: p.Total, Offset: p.Offset, Events: make([]Event, 0, len(p.Events))}
	for _, e := range p.Events {
		out.Events = append(out.Events, Event{Seq: e.Seq, Stream: e.Stream, Type: e.Type, RecordedAt: e.RecordedAt.UTC().Format("2006-01-02T15:04:05.000Z"), Payload: jsonValue(e.Payload)})
	}
	if end := p.Offset + int64(len(p.Events)); end < p.Total {
		out.Next = end
	}
	return nil, out, nil
}

// ListRunsInput bounds list_runs.
type ListRunsInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"the most runs to return (default 50)"`
}

// RunLine is a run as list_runs shows it.
type RunLine struct {
	RunID     string `json:"runId"`
	Task      string `json:"task"`
	Status    string `json:"status"`
	Waiting   int    `json:"waiting"`
	Steps     int    `json:"steps"`
	StepsDone int    `json:"stepsDone"`
	Answer    string `json:"answer,omitempty"`
	CreatedAt string `json:"createdAt"`
}

// RunList is list_runs' answer.
type RunList struct {
	Runs  []RunLine `json:"runs"`
	Total int       `json:"total"`
}

func (s *Server) listRuns(_ context.Context, _ *sdk.CallToolRequest, in ListRunsInput) (*sdk.CallToolResult, RunList, error) {
	runs, err := s.api.Runs()
	if err != nil {
		return nil, RunList{}, err
	}
	if in.Limit <= 0 {
		in.Limit = 50
	}
	out := RunList{Runs: []RunLine{}, Total: len(runs)}
	for _, r := range runs[:min(len(runs), in.Limit)] {
		out.Runs = append(out.Runs, RunLine{RunID: r.Run.ID, Task: r.Task, Status: string(r.Run.Status), Waiting: r.Approvals,
			Steps: r.Steps, StepsDone: r.StepsDone, Answer: r.Answer, CreatedAt: r.Run.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")})
	}
	return nil, out, nil
}

// jsonValue decodes JSON for an answer's schema-free field (nil when empty).
func jsonValue(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return v
}

// asValue turns a domain value into plain JSON values, so an answer's
// schema-free field holds exactly what the window's bindings send.
func asValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return jsonValue(b)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
