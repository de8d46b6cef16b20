package cli

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"ducklm/backend"
	"ducklm/backend/critic"
	"ducklm/backend/memory"
	"ducklm/backend/memorypolicy"
	"ducklm/backend/router"
	"ducklm/backend/runtime"
	"ducklm/backend/settings"
	"ducklm/backend/taskgraph"
)

// taskCommands are the top-level commands over task runs.
var taskCommands = []worldCommand{
	{name: "run", args: `"TASK" [--plan FILE [--label TEXT]] [--approve ask|risky|auto] [--model ROLE=NAME]... [--workspace DIR [--create-workspace]] [--timeout D] [--max-steps N] [--max-plan-steps N] [--review] [--max-reviews N] [--allow-host HOST]... [--detach] [--json]`,
		summary: "run a task: plan it, ask approvals at the prompt, stream its events", write: true, run: runTask, top: true},
	{name: "runs", args: "[--json]", summary: "list task runs, those waiting for approval first", run: runRuns, top: true},
	{name: "resume", args: "RUN [--detach]", summary: "drive a paused or interrupted run again", write: true, run: runResume, top: true},
	{name: "cancel", args: "RUN [--reason TEXT]", summary: "cancel a run and kill its running steps", write: true, run: runCancel, top: true},
	{name: "approve", args: "REQUEST [--args JSON] [--network] [--allow-host] [--detach]", summary: "approve one waiting step (optionally with edited arguments)", write: true, run: runApprove, top: true},
	{name: "deny", args: "REQUEST [--reason TEXT]", summary: "deny one waiting step", write: true, run: runDeny, top: true},
}

func init() {
	for _, c := range taskCommands {
		c := c
		register(c.name, c.summary, c.usage(), c.exec)
	}
}

var approveModes = map[string]runtime.ApprovalMode{"ask": runtime.AskEvery, "risky": runtime.AskRisky, "auto": runtime.AutoSandboxed,
	string(runtime.AskEvery): runtime.AskEvery, string(runtime.AskRisky): runtime.AskRisky, string(runtime.AutoSandboxed): runtime.AutoSandboxed}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runTask(s *session, args []string) error {
	fs := s.flags()
	planFile := fs.String("plan", "", "")
	label := fs.String("label", "", "")
	approve := fs.String("approve", "risky", "")
	workspace := fs.String("workspace", "", "")
	createWorkspace := fs.Bool("create-workspace", false, "")
	timeout := fs.Duration("timeout", 0, "")
	maxSteps := fs.Int("max-steps", 0, "")
	maxPlanSteps := fs.Int("max-plan-steps", 0, "")
	review := fs.Bool("review", false, "")
	maxReviews := fs.Int("max-reviews", 0, "")
	detach := fs.Bool("detach", false, "")
	var models, hosts multiFlag
	fs.Var(&models, "model", "")
	fs.Var(&hosts, "allow-host", "")
	pos, err := s.parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if *maxPlanSteps < 0 {
		return s.cmd.bad("--max-plan-steps must be a positive number of steps, not %d", *maxPlanSteps)
	}
	if *maxReviews < 0 {
		return s.cmd.bad("--max-reviews must be a positive number of review rounds, not %d", *maxReviews)
	}
	req := runtime.TaskRequest{Workspace: *workspace, CreateWorkspace: *createWorkspace, MaxSteps: *maxSteps, MaxPlanSteps: *maxPlanSteps,
		Review: *review, MaxReviews: *maxReviews, Models: map[string]string{}}
	if len(pos) == 1 {
		req.Task = pos[0]
	}
	if *timeout < 0 {
		return s.cmd.bad("--timeout must be positive, not %s", *timeout)
	}
	if *maxSteps < 0 {
		return s.cmd.bad("--max-steps must be positive, not %d", *maxSteps)
	}
	if *createWorkspace && *workspace == "" {
		return s.cmd.bad("--create-workspace needs --workspace DIR")
	}
	mode, ok := approveModes[*approve]
	if !ok {
		return s.cmd.bad("--approve is ask, risky or auto, not %q", *approve)
	}
	req.ApprovalMode = mode
	req.Limits.Timeout = *timeout
	req.AllowedHosts = hosts
	for _, m := range models {
		role, name, ok := strings.Cut(m, "=")
		if !ok || name == "" {
			return s.cmd.bad("--model takes ROLE=NAME (planner, coder, critic), not %q", m)
		}
		req.Models[role] = name
	}
	var plan []byte
	if *planFile != "" {
		if strings.TrimSpace(req.Task) != "" {
			return s.cmd.bad("run takes a task or --plan, not both: an explicit plan runs as it is (--label names it)")
		}
		req.Task = *label
		if plan, err = readPlan(*planFile); err != nil {
			return err
		}
	}
	if req.Task == "" && plan == nil {
		return s.cmd.bad("run needs a task or --plan")
	}
	if *label != "" && plan == nil {
		return s.cmd.bad("--label names an explicit plan: it needs --plan FILE")
	}
	if err := s.open(); err != nil {
		return err
	}
	s.svc.ProbeSandboxSoon() // the run's first decision asks; meanwhile the task is recorded
	if prefs, err := settings.Load(s.svc.Dir); err == nil {
		// Settings fill what the flags leave open, as in the window.
		req.MaxReviews = cmp.Or(req.MaxReviews, prefs.MaxReviews)
		req.CriticThreshold = prefs.CriticThreshold
	}
	if plan != nil {
		// Validated against this installation's tools before the run
		// exists: an invalid plan is refused, never replanned.
		g, err := taskgraph.ParseMax(plan, s.svc.Tools, *maxPlanSteps)
		if err != nil {
			return backend.Wrap(err, backend.EINVALID, "%s is not a valid plan: %s", *planFile, backend.ErrorMessage(err))
		}
		tg := g.TaskGraph()
		req.Plan = &tg
	}
	run, err := s.svc.Runtime.Submit(s.ctx, req)
	if errors.Is(err, runtime.ErrWorkspaceMissing) {
		return backend.Wrap(err, backend.EINVALID, "%s; create it, or add --create-workspace", backend.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stderr, "run %s started\n", run.ID)
	if *detach {
		fmt.Fprintln(s.env.Stdout, run.ID)
		return s.svc.Runtime.Wait(s.ctx, run.ID)
	}
	return s.follow(run.ID, 1, true)
}

// readPlan reads a plan file, refusing one past the size a plan may have
// before reading it.
func readPlan(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "cannot read the plan file %s", path)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, taskgraph.MaxPlanBytes+1))
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "cannot read the plan file %s", path)
	}
	if len(data) > taskgraph.MaxPlanBytes {
		return nil, backend.Errorf(backend.EINVALID, "the plan file %s is larger than the %d bytes a plan may have", path, taskgraph.MaxPlanBytes)
	}
	return data, nil
}

// follow streams a run's events from seq `from` until it ends or parks,
// asking its approvals at the prompt when interactive.
func (s *session) follow(runID string, from int64, interactive bool) error {
	sub := s.svc.Bus.Subscribe(s.ctx, runID, from)
	defer sub.Close()
	in := bufio.NewReader(s.stdin())
	asked := map[string]bool{}
	last := from - 1 // the seq of the last event printed
	for {
		select {
		case e, ok := <-sub.C():
			if !ok {
				return s.ctx.Err()
			}
			s.print(e)
			last = e.Seq
			if !endsOrParks(e.Type) {
				continue
			}
			// The run may have ended or be waiting for a person: look now,
			// not after a quiet spell.
		case <-time.After(150 * time.Millisecond):
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
		st, _, err := s.svc.Runtime.Load(s.ctx, runID)
		if err != nil {
			return err
		}
		if st.Status.Terminal() {
			// The driver writes the run's last checkpoint after its end:
			// the stream ends with it.
			if err := s.svc.Runtime.Wait(s.ctx, runID); err != nil {
				return err
			}
			if st, _, err = s.svc.Runtime.Load(s.ctx, runID); err != nil {
				return err
			}
			return s.drain(sub, st, last)
		}
		if st.Status == backend.RunPaused {
			fmt.Fprintf(s.env.Stderr, "run %s is paused: %s\nresume it with: ducklm resume %s\n", runID, st.StatusReason, runID)
			return nil
		}
		for _, p := range st.PendingApprovals() {
			a := p.Approval
			if asked[a.RequestID] {
				continue
			}
			asked[a.RequestID] = true
			if !interactive {
				continue
			}
			if !s.ask(in, runID, p) && !s.stdinClosed {
				delete(asked, a.RequestID) // the answer was refused (say, bad edited args): ask again
			}
		}
		if st.Status == backend.RunAwaitingApproval && (!interactive || allAsked(st, asked)) && len(st.PendingApprovals()) > 0 {
			if !interactive || s.stdinClosed {
				for _, p := range st.PendingApprovals() {
					fmt.Fprintf(s.env.Stderr, "waiting for approval of step %s: ducklm approve %s (or deny)\n", p.Node.ID, p.Approval.RequestID)
				}
				return nil
			}
		}
	}
}

// endsOrParks reports whether an event of type typ may end a run or leave
// it waiting (for an approval, or paused): the follower looks at the run
// when one arrives. Other changes it sees after a quiet spell.
func endsOrParks(typ string) bool {
	switch typ {
	case runtime.EvCompleted, runtime.EvFailed, runtime.EvCancelled, runtime.EvApprovalRequested, runtime.EvStatus:
		return true
	}
	return false
}

func allAsked(st *runtime.RunState, asked map[string]bool) bool {
	for _, p := range st.PendingApprovals() {
		if !asked[p.Approval.RequestID] {
			return false
		}
	}
	return true
}

// drainWait bounds the wait for one committed event of an ended run on its
// way through the bus (it never takes long; a stuck stream must not hang
// the command).
const drainWait = 10 * time.Second

// print writes one event of a followed run, as a line or as JSON.
func (s *session) print(e backend.Event) {
	if s.json {
		_ = json.NewEncoder(s.env.Stdout).Encode(e)
		return
	}
	if s.printer == nil {
		s.printer = &printer{}
	}
	s.printer.print(s.env.Stdout, e)
}

// drain prints what is left of the stream after seq last, up to the ended
// run's last event, and the run's outcome.
func (s *session) drain(sub interface{ C() <-chan backend.Event }, st *runtime.RunState, last int64) error {
	for last < st.Seq {
		select {
		case e, ok := <-sub.C():
			if !ok {
				return nil
			}
			s.print(e)
			last = e.Seq
			continue
		case <-time.After(drainWait):
		}
		break
	}
	fmt.Fprintf(s.env.Stderr, "run %s %s", st.RunID, st.Status.Words())
	if st.StatusReason != "" {
		fmt.Fprintf(s.env.Stderr, ": %s", st.StatusReason)
	}
	fmt.Fprintln(s.env.Stderr)
	if st.Response != "" && !s.json {
		// The answer comes last, where a reader looks for it; --json has
		// it as the run.answered event.
		fmt.Fprintf(s.env.Stdout, "answer: %s\n", st.Response)
		if a := st.Answer; a != nil && len(a.Cites) > 0 {
			fmt.Fprintf(s.env.Stdout, "  rests on %s\n", strings.Join(a.Cites, ", "))
		}
	}
	if st.Status != backend.RunCompleted {
		return errExit{ExitFail}
	}
	return nil
}

// ask shows one approval request, reads the answer and reports whether the
// runtime took it.
func (s *session) ask(in *bufio.Reader, runID string, p *runtime.StepRecord) bool {
	a := p.Approval
	w := s.env.Stderr
	fmt.Fprintf(w, "\nstep %s wants to run %s", a.Step, a.Tool)
	if a.InDoubt {
		fmt.Fprint(w, " AGAIN: it was running when ducklm stopped and may already have had its effect")
	}
	fmt.Fprintf(w, "\n  %s\n  risk %s (rule %s): %s\n", compact(a.Args), a.Risk, a.Rule, a.Why)
	if a.Tool == router.ToolWebFetch || a.Tool == router.ToolBrowser {
		if host := router.WebHost(a.Args); host != "" {
			fmt.Fprintf(w, "  reaches %s only (ducklm approve --allow-host allows it for the rest of the run)\n", host)
		}
	}
	switch {
	case a.MCP != nil:
		says := "the server says nothing of what it changes"
		if a.MCP.ReadOnlyHint {
			says = "the server says it only reads (shown, never trusted on its own)"
		}
		fmt.Fprintf(w, "  MCP server %s, tool %s: %s\n", a.MCP.Server, a.MCP.Tool, says)
	case a.Tool == router.ToolWebFetch && a.Sandboxed:
		fmt.Fprintf(w, "  read in a web worker process under bubblewrap: no workspace, no data directory, the web only through ducklm's host checks\n")
	case a.Tool == router.ToolWebFetch:
		fmt.Fprintf(w, "  read in a web worker process NOT sandboxed (bubblewrap is unavailable): it runs with your permissions\n")
	case a.Sandboxed:
		fmt.Fprintf(w, "  sandboxed: workspace only, network %v\n", a.Network)
	default:
		fmt.Fprintf(w, "  NOT sandboxed (bubblewrap is unavailable): it runs with your permissions\n")
	}
	fmt.Fprintf(w, "  time limit %s: %s\n", a.Limits.Timeout, timeoutNote(p.Node.RetryOnTimeout))
	fmt.Fprint(w, "approve? [y]es, [n]o, [e]dit arguments: ")
	line, err := in.ReadString('\n')
	if err != nil {
		s.stdinClosed = true
		fmt.Fprintln(w)
		return false
	}
	ans := runtime.Answer{RequestID: a.RequestID, By: "cli", Network: a.Network}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		ans.Approve = true
	case "e", "edit":
		fmt.Fprint(w, "new arguments as JSON: ")
		args, err := in.ReadString('\n')
		if err != nil {
			s.stdinClosed = true
			return false
		}
		ans.Approve, ans.Args = true, json.RawMessage(strings.TrimSpace(args))
	default:
		ans.Reason = "denied at the prompt"
	}
	if err := s.svc.Runtime.Answer(s.ctx, runID, ans); err != nil {
		fmt.Fprintf(w, "%s\n", backend.ErrorMessage(err))
		return false
	}
	return true
}

// timeoutNote says what happens to a step that reaches its time limit.
func timeoutNote(retry bool) string {
	if retry {
		return "stopped, then run once more (its plan says a retry is safe)"
	}
	return "stopped and failed, not retried"
}

func (s *session) stdin() io.Reader {
	if s.env.Stdin == nil {
		return strings.NewReader("")
	}
	return s.env.Stdin
}

// printer prints a followed run's events as terminal lines. It keeps what
// a later line refers to: the step of each result printed, and the run's
// memory policy tables, so that a memory decision made after its result's
// line says whose result it was and what became of it.
type printer struct {
	steps    map[string]string // a step.finished event's id → its step
	policies []backend.Event   // the run's memory.policy events
}

// print prints one event as a terminal line.
func (pr *printer) print(w io.Writer, e backend.Event) {
	switch e.Type {
	case memory.EvPolicy:
		pr.policies = append(pr.policies, e) // a few a run: read when a decision comes
		return
	case runtime.EvDecision, runtime.EvCheckpoint:
		return // bookkeeping: in the ledger, not on the terminal (and never decoded)
	}
	// The payload is decoded once, and only for an event whose line shows
	// some of it: the command prints every event of a run, and most of its
	// cost per step was decoding payloads it then did not show.
	var p map[string]json.RawMessage
	field := func(k string) json.RawMessage {
		if p == nil {
			p = map[string]json.RawMessage{}
			_ = json.Unmarshal(e.Payload, &p)
		}
		return p[k]
	}
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(field(k), &v)
		return v
	}
	detail := ""
	switch e.Type {
	case runtime.EvTaskReceived:
		detail = str("task")
	case runtime.EvPlanProposed:
		var pl struct {
			Graph     backend.TaskGraph `json:"graph"`
			GraphFrom string            `json:"graphFrom"`
			Model     string            `json:"model"`
		}
		_ = json.Unmarshal(e.Payload, &pl)
		switch {
		case pl.GraphFrom == "request":
			detail = "the plan given with the task"
		case pl.Model != "":
			detail = steps(len(pl.Graph.Nodes)) + " by " + pl.Model
		default:
			detail = steps(len(pl.Graph.Nodes))
		}
	case runtime.EvPlanAccepted:
		var pl struct {
			Graph     backend.TaskGraph `json:"graph"`
			GraphFrom string            `json:"graphFrom"`
		}
		_ = json.Unmarshal(e.Payload, &pl)
		detail = steps(len(pl.Graph.Nodes))
		if pl.GraphFrom == "request" {
			// The run records the plan it was given once, in task.received.
			detail = "the plan given with the task"
		}
	case runtime.EvPlanInvalid:
		detail = str("error")
	case runtime.EvPlannerAnswered:
		var a runtime.PlanningAttempt
		_ = json.Unmarshal(e.Payload, &a)
		detail = fmt.Sprintf("attempt %d by %s", a.Attempt, a.Model)
		if len(a.Options) > 0 {
			detail += " " + compact(mustJSON(a.Options))
		}
		detail += ": " + oneLine(a.Answer, 300)
		for _, n := range a.Normalised {
			detail += "\n      mended: " + n
		}
	case runtime.EvPlanRevising, runtime.EvReviewing:
		detail = str("reason")
	case runtime.EvAnswered:
		var a runtime.RunAnswer
		_ = json.Unmarshal(e.Payload, &a)
		detail = oneLine(a.Text, 200)
		if len(a.Cites) > 0 {
			detail += " (rests on " + strings.Join(a.Cites, ", ") + ")"
		}
	case runtime.EvStepRetrying:
		var n struct {
			Decision *backend.Decision `json:"decision"`
		}
		detail = str("step") + ": " + str("reason")
		if json.Unmarshal(e.Payload, &n) == nil && n.Decision != nil {
			detail = n.Decision.Reason
		}
	case runtime.EvStepStarted:
		detail = str("step") + " " + str("tool") + " " + compact(field("args"))
	case memory.EvDecided:
		detail = pr.stepOf(e) + pr.memoryLine(e)
	case memory.EvSkipped:
		detail = pr.stepOf(e) + "not kept: " + str("reason")
	case runtime.EvStepFinished:
		if step := str("step"); step != "" && e.ID != "" {
			if pr.steps == nil {
				pr.steps = map[string]string{}
			}
			pr.steps[e.ID] = step
		}
		// As the window's step panel says it: a step whose tool could not
		// run at all has no exit to show, and a step stopped at its time
		// limit says so.
		switch {
		case str("error") != "":
			detail = str("step") + " did not run"
		case string(field("timedOut")) == "true":
			detail = str("step") + " timed out"
		default:
			detail = str("step") + " exit " + cmp.Or(string(field("exitCode")), "0")
		}
		var crit struct {
			Score       json.Number `json:"score"`
			Explanation string      `json:"explanation"`
			Source      string      `json:"source"`
		}
		if raw := field("critique"); raw != nil && json.Unmarshal(raw, &crit) == nil {
			// The critique is recorded with its result; a rule of thumb's
			// explanation leaves out the note that it is one (critic.Note).
			detail += " · score " + crit.Score.String()
			if crit.Source == critic.SourceHeuristic {
				detail += " (rule of thumb)"
			}
			detail += ": " + crit.Explanation
		}
		// The output as printed: its first line keeps its indentation (a
		// column of numbers stays aligned), blank lines before it and
		// white space after it go.
		out := strings.TrimRight(str("stdoutTail"), " \t\r\n")
		if i := strings.LastIndexByte(out[:len(out)-len(strings.TrimLeft(out, " \t\r\n"))], '\n'); i >= 0 {
			out = out[i+1:]
		}
		if out == "" {
			out = memory.ReturnedText(field("output")) // a file read's content, a tool's text
		}
		if out != "" {
			detail += "\n      " + strings.ReplaceAll(clip(out, 600), "\n", "\n      ")
		}
		if e := str("error"); e != "" {
			detail += ": " + e
		}
		var where *backend.Placement
		if pl := field("placement"); pl != nil && json.Unmarshal(pl, &where) == nil && where != nil {
			detail += "\n      ran " + where.String()
		}
		if field(memory.FieldCarried) != nil { // the memory decision made with the result
			detail += "\n      memory: " + pr.memoryLine(e)
		}
	case runtime.EvCritique:
		detail = str("step") + " score " + string(field("score")) + ": " + str("explanation")
	case runtime.EvApprovalRequested:
		detail = str("step") + " " + str("requestId") + " (rule " + str("rule") + ")"
	case runtime.EvApproved, runtime.EvDenied:
		detail = str("step")
	case runtime.EvStatus:
		detail = str("status") + " " + str("reason")
	case runtime.EvCompleted, runtime.EvFailed, runtime.EvCancelled:
		detail = str("reason")
	case runtime.EvWarning:
		detail = str("message")
	}
	fmt.Fprintf(w, "%4d  %-24s %s\n", e.Seq, e.Type, detail)
}

// steps is "1 step" or "N steps".
func steps(n int) string {
	if n == 1 {
		return "1 step"
	}
	return strconv.Itoa(n) + " steps"
}

// stepOf names the step whose result e is about ("count: "), when its
// result was printed before it.
func (pr *printer) stepOf(e backend.Event) string {
	if step := pr.steps[e.CausationID]; step != "" {
		return step + ": "
	}
	return ""
}

// memoryLine says what the memory write policy decided for a result
// (memory.decided after the result's own line, or the decision the result
// carries): kept, merged or not kept. A decision names its policy table by
// digest; the run's memory.policy event holds it.
func (pr *printer) memoryLine(e backend.Event) string {
	decided, err := memory.ReadDecided(append(slices.Clip(pr.policies), e))
	if err != nil || len(decided) != 1 {
		return "decided (ducklm memory ls shows what is kept)"
	}
	d := decided[0].Decision
	switch {
	case d.Action == memorypolicy.Store:
		return fmt.Sprintf("kept as %s %s", d.StoreAs, decided[0].MemoryID)
	case d.Action == memorypolicy.Merge && d.Rule == memorypolicy.RuleExact:
		return "merged into " + d.MergeInto + ", which holds the same text"
	case d.Action == memorypolicy.Merge:
		return fmt.Sprintf("merged into %s, %.3f similar", d.MergeInto, decided[0].Input.Dedup.NearestSimilarity)
	}
	return "not kept: " + d.Reason
}

func mustJSON(v any) json.RawMessage {
	data, _ := json.Marshal(v)
	return data
}

func runRuns(s *session, args []string) error {
	fs := s.flags()
	if _, err := s.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	runs, err := s.svc.Runtime.Runs(s.ctx)
	if err != nil {
		return err
	}
	return s.out(runs, func(w io.Writer) {
		if len(runs) == 0 {
			fmt.Fprintln(w, `no task runs yet: ducklm run "TASK"`)
			return
		}
		tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tSTATUS\tAPPROVALS\tSTEPS\tSTARTED\tTASK\tANSWER")
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%s\t%s\t%s\n", r.Run.ID, r.Run.Status.Words(), r.Approvals, r.StepsDone, r.Steps,
				r.Run.CreatedAt.Local().Format("2006-01-02 15:04"), oneLine(r.Task, 60), oneLine(r.Answer, 60))
		}
		tw.Flush()
	})
}

func runResume(s *session, args []string) error {
	fs := s.flags()
	detach := fs.Bool("detach", false, "")
	id, err := s.parseID(fs, args, backend.KindRun)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	s.svc.ProbeSandboxSoon()
	st, _, err := s.svc.Runtime.Load(s.ctx, id)
	if err != nil {
		return err
	}
	if err := s.svc.Runtime.Resume(s.ctx, id); err != nil {
		return err
	}
	if *detach {
		return s.svc.Runtime.Wait(s.ctx, id)
	}
	return s.follow(id, st.Seq+1, true)
}

func runCancel(s *session, args []string) error {
	fs := s.flags()
	reason := fs.String("reason", "", "")
	id, err := s.parseID(fs, args, backend.KindRun)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	if err := s.svc.Runtime.Cancel(s.ctx, id, *reason); err != nil {
		return err
	}
	// On a team's database another process may drive the run: Cancel then
	// records a request and waits a little for that process to act on it.
	st, _, err := s.svc.Runtime.Load(s.ctx, id)
	if err != nil {
		return err
	}
	if !st.Status.Terminal() {
		by := "the ducklm process that drives it"
		if o := s.svc.Runtime.Elsewhere(st); o != nil {
			by = "ducklm on " + cmp.Or(o.Host, "another machine") + ", which drives it,"
		}
		fmt.Fprintf(s.env.Stdout, "run %s: cancel requested; %s cancels it when it acts on the request\n", id, by)
		return nil
	}
	fmt.Fprintf(s.env.Stdout, "run %s cancelled\n", id)
	return nil
}

func runApprove(s *session, args []string) error { return answer(s, args, true) }
func runDeny(s *session, args []string) error    { return answer(s, args, false) }

func answer(s *session, args []string, approve bool) error {
	fs := s.flags()
	editArgs := fs.String("args", "", "")
	network := fs.Bool("network", false, "")
	allowHost := fs.Bool("allow-host", false, "")
	reason := fs.String("reason", "", "")
	detach := fs.Bool("detach", false, "")
	id, err := s.parseID(fs, args, backend.KindApproval)
	if err != nil {
		return err
	}
	edited, err := jsonFlag("args", *editArgs)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	open, err := s.svc.Runtime.Approvals(s.ctx, "")
	if err != nil {
		return err
	}
	var found *runtime.Approval
	for i := range open {
		if open[i].RequestID == id {
			found = &open[i]
		}
	}
	if found == nil {
		return backend.Errorf(backend.ENOTFOUND, "no run is waiting on approval request %s (ducklm runs lists the waiting ones)", id)
	}
	st, _, err := s.svc.Runtime.Load(s.ctx, found.RunID)
	if err != nil {
		return err
	}
	if err := s.svc.Runtime.Answer(s.ctx, found.RunID, runtime.Answer{RequestID: id, Approve: approve, Args: edited,
		Network: *network || found.Network, AllowHost: approve && *allowHost, Reason: *reason, By: "cli"}); err != nil {
		return err
	}
	verb := "denied"
	if approve {
		verb = "approved"
	}
	if o := s.svc.Runtime.Elsewhere(st); o != nil {
		// Another installation drives the run: the answer waits for it,
		// and nothing here would move the run to follow.
		fmt.Fprintf(s.env.Stderr, "step %s of run %s %s. %s\n", found.Step, found.RunID, verb, runtime.DrivenBy(*o))
		return nil
	}
	fmt.Fprintf(s.env.Stderr, "step %s of run %s %s\n", found.Step, found.RunID, verb)
	if *detach {
		return s.svc.Runtime.Wait(s.ctx, found.RunID)
	}
	return s.follow(found.RunID, st.Seq+1, true)
}
