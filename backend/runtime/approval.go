package runtime

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"ducklm/backend"
	"ducklm/backend/router"
	"ducklm/backend/web"
)

// requestApproval parks one step behind an approval request: the request is
// an event, so it survives a restart, and only an answer to this request
// (by its id) releases the step.
func (c *Controller) requestApproval(ctx context.Context, st *RunState, dec backend.Decision) error {
	var p router.PermissionPayload
	if err := json.Unmarshal(dec.Payload, &p); err != nil {
		return backend.Errorf(backend.EINVALID, "the approval request is unreadable")
	}
	step := st.Steps[p.Step]
	if step == nil {
		return backend.Errorf(backend.EINVALID, "the router asked approval for an unknown step %q", p.Step)
	}
	req := approvalRequest{
		RequestID: backend.NewID(backend.KindApproval), Step: p.Step, Tool: p.Tool, Args: p.Args,
		Rule: p.Rule, Risk: p.Risk.String(), Why: p.Why, Network: p.Network,
		Sandboxed: c.d.Sandboxed(), Limits: st.Request.Limits, InDoubt: step.State == StepInDoubt, Untrusted: p.Untrusted,
	}
	if t, err := c.d.Tools.Get(p.Tool); err == nil && step.Script == nil {
		if m, ok := backend.MCPOf(t); ok {
			req.MCP = &m // the server's hint as it was when asked
		}
	}
	if step.Script != nil {
		// The user approves the script the coder wrote, not the goal.
		req.Args, _ = json.Marshal(map[string]string{"language": step.Script.Language, "script": step.Script.Source})
	}
	if err := c.append(ctx, st, EvApprovalRequested, req); err != nil {
		return err
	}
	return c.catchUp(ctx, st)
}

// Answer is a user's answer to one approval request.
type Answer struct {
	RequestID string
	Approve   bool
	// Args, when set, replaces the step's arguments (edit and approve).
	Args json.RawMessage
	// Network allows the step to reach the network.
	Network bool
	// AllowHost allows a web step's host for the rest of the run.
	AllowHost bool
	Reason    string
	// IdempotencyKey makes a retried answer a no-op; "" means one per request.
	IdempotencyKey string
	By             string
}

// Approval is an open request, as the UI and CLI show it.
type Approval struct {
	RunID     string          `json:"runId"`
	RequestID string          `json:"requestId"`
	Step      string          `json:"step"`
	Title     string          `json:"title,omitempty"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Rule      string          `json:"rule"`
	Risk      string          `json:"risk"`
	Why       string          `json:"why"`
	Network   bool            `json:"network"`
	Sandboxed bool            `json:"sandboxed"`
	// Confinement is where the step runs, and so which limits hold it.
	Confinement backend.Confinement `json:"confinement"`
	InDoubt     bool                `json:"inDoubt"`
	Limits      backend.Limits      `json:"limits"`
	// RetryOnTimeout: the step runs once more if it times out (its plan
	// says that is safe); otherwise a timeout fails it.
	RetryOnTimeout bool `json:"retryOnTimeout"`
	// Current is what the file a file_write step names holds now (nil for
	// other tools), so the card shows the change, not only the new text.
	Current *CurrentFile `json:"current,omitempty"`
	// Web is what a web step will request and under which limits (nil for
	// other tools), so the card shows the URL, host, method and limits.
	Web *web.Plan `json:"web,omitempty"`
	// Untrusted names the outside content (a web page) the run had read
	// when this step was planned: the page may have asked for it.
	Untrusted []string `json:"untrusted,omitempty"`
	// MCP is the MCP server and tool the step calls, with the server's
	// readOnlyHint (nil for ducklm's own tools).
	MCP *backend.MCPTool `json:"mcp,omitempty"`
}

// Approvals lists the open requests of one run, or of every run ("").
func (c *Controller) Approvals(ctx context.Context, runID string) ([]Approval, error) {
	runs := []string{runID}
	if runID == "" {
		all, err := c.taskRuns(ctx)
		if err != nil {
			return nil, err
		}
		runs = runs[:0]
		for _, r := range all {
			if r.Status == backend.RunAwaitingApproval || r.Status == backend.RunRunning {
				runs = append(runs, r.ID)
			}
		}
	}
	var out []Approval
	for _, id := range runs {
		st, _, err := c.Load(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, s := range st.PendingApprovals() {
			a := s.Approval
			out = append(out, Approval{RunID: id, RequestID: a.RequestID, Step: a.Step, Title: s.Node.Title, Tool: a.Tool,
				Args: a.Args, Rule: a.Rule, Risk: a.Risk, Why: a.Why, Network: a.Network, Sandboxed: a.Sandboxed,
				Confinement: c.confinement(s), InDoubt: a.InDoubt, Limits: a.Limits, RetryOnTimeout: s.Node.RetryOnTimeout,
				Current: c.currentFile(ctx, st, a.Tool, a.Args), Web: webPlan(a.Tool, a.Args, a.Limits), Untrusted: a.Untrusted, MCP: a.MCP})
		}
	}
	return out, nil
}

// mcpOfReady describes the ready steps' tools that MCP servers serve, for
// the router: what the user said of each.
func (c *Controller) mcpOfReady(ready []router.ReadyStep) map[string]backend.MCPTool {
	var out map[string]backend.MCPTool
	for _, r := range ready {
		if r.Node.Kind != backend.KindToolStep {
			continue
		}
		t, err := c.d.Tools.Get(r.Node.Tool)
		if err != nil {
			continue
		}
		if m, ok := backend.MCPOf(t); ok {
			if out == nil {
				out = map[string]backend.MCPTool{}
			}
			out[r.Node.Tool] = m
		}
	}
	return out
}

// NoteConfinement fills in where each finished step of st ran when its
// result does not say (results recorded before they did), from the catalog,
// as the step's approval card did. It changes only the caller's copy.
func (c *Controller) NoteConfinement(st *RunState) {
	for _, s := range st.Steps {
		if s.Result != nil && s.Result.Confinement == "" {
			s.Result.Confinement = c.confinement(s)
			if s.Result.Confinement == backend.ConfinedWebWorker {
				// Results began to say where before web_fetch moved to
				// its worker: one that does not say ran in ducklm.
				s.Result.Confinement = backend.ConfinedHosts
			}
		}
	}
}

// confinement is where a step runs: a coder's script in the sandbox, a
// tool where the catalog says.
func (c *Controller) confinement(s *StepRecord) backend.Confinement {
	if s.Script != nil || s.Node.Kind == backend.KindCoderStep {
		return backend.ConfinedSandbox
	}
	t, err := c.d.Tools.Get(s.Node.Tool)
	if err != nil {
		return backend.ConfinedSandbox
	}
	return backend.ConfinementOf(t)
}

// Answer approves or denies one request. The answer is an event whose id is
// derived from the request and the idempotency key, so a retried answer is a
// no-op and never approves anything else.
func (c *Controller) Answer(ctx context.Context, runID string, a Answer) error {
	if err := backend.CheckID(a.RequestID, backend.KindApproval); err != nil {
		return err
	}
	st, _, err := c.Load(ctx, runID)
	if err != nil {
		return err
	}
	key := a.IdempotencyKey
	if key == "" {
		key = "once"
	}
	id := answerEventID(a.RequestID, key)
	var step *StepRecord
	for _, s := range st.PendingApprovals() {
		if s.Approval.RequestID == a.RequestID {
			step = s
		}
	}
	if step == nil {
		// Already answered with this key: the retry is a no-op.
		events, err := c.d.Events.Query(ctx, backend.EventQuery{Stream: runID, Types: []string{EvApproved, EvDenied}})
		if err != nil {
			return err
		}
		for _, e := range events {
			if e.ID == id {
				return nil
			}
		}
		return backend.Errorf(backend.ENOTFOUND, "run %s has no open approval request %s (it was answered or the run moved on)", runID, a.RequestID)
	}
	if st.Status.Terminal() {
		return backend.Errorf(backend.EINVALID, "run %s is %s; its requests can no longer be answered", runID, st.Status)
	}
	ans := approvalAnswer{RequestID: a.RequestID, Step: step.Node.ID, IdempotencyKey: key, Network: a.Network, Reason: a.Reason, By: a.By}
	if a.AllowHost {
		if a.Approve && router.WebHost(step.Args()) == "" {
			return backend.Errorf(backend.EINVALID, "step %q names no web host to allow for the run", step.Node.ID)
		}
		ans.AllowHost = a.Approve
	}
	typ := EvDenied
	if a.Approve {
		typ = EvApproved
		if len(a.Args) > 0 && step.Script == nil {
			if err := c.checkArgs(step.Node, a.Args); err != nil {
				return err
			}
			ans.Args = compact(a.Args)
		}
	}
	e := event(typ, ans, st.Ticks)
	e.ID = id
	if err := c.appendWith(ctx, st, nil, e); err != nil {
		return err
	}
	c.adopt(st)
	c.Start(runID) // drives the run when this installation does (mayDrive)
	return nil
}

// webPlan is what a web step's card shows; nil for other tools or args
// that cannot be read (the card shows them raw).
func webPlan(tool string, args json.RawMessage, lim backend.Limits) *web.Plan {
	if tool != router.ToolWebFetch && tool != router.ToolBrowser {
		return nil
	}
	if tool == router.ToolBrowser {
		return web.BrowserPlan(args, lim.Timeout)
	}
	a, err := web.ParseArgs(args)
	if err != nil {
		return nil
	}
	if d := backend.DefaultLimits(); lim.Timeout <= 0 || lim.FileBytes <= 0 {
		lim.Timeout, lim.FileBytes = cmp.Or(max(lim.Timeout, 0), d.Timeout), cmp.Or(max(lim.FileBytes, 0), d.FileBytes)
	}
	p := a.Request(lim.Timeout, lim.FileBytes).Describe()
	return &p
}

func answerEventID(requestID, key string) string {
	sum := sha256.Sum256([]byte(requestID + "\x00" + key))
	return string(backend.KindEvent) + "_" + hex.EncodeToString(sum[:16])
}

// compact returns raw without insignificant white space.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
