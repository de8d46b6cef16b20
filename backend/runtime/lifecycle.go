package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/planner"
	"ducklm/backend/taskgraph"
)

// Cancel stops a run: its running steps are killed (their whole process
// groups), and the run ends as terminated. The cancellation is recorded by
// the holder of the run's lock only, so never while a step of the run still
// runs: when another process drives the run, Cancel records a request, which
// that process acts on (Followed), and waits a little for the run to end.
func (c *Controller) Cancel(ctx context.Context, runID string, reason string) error {
	st, _, err := c.Load(ctx, runID)
	if err != nil {
		return err
	}
	if st.Status.Terminal() {
		return backend.Errorf(backend.EINVALID, "run %s is already %s", runID, st.Status.Words())
	}
	c.mu.Lock()
	d := c.drivers[runID]
	c.mu.Unlock()
	if d != nil {
		d.cancel()
		<-d.done
	}
	if reason == "" {
		reason = "Cancelled by the user."
	}
	requested := false
	deadline := time.Now().Add(cancelWait)
	for {
		done, err := c.cancelIfFree(ctx, runID, reason)
		if err != nil || done {
			return err
		}
		st, _, err := c.Load(ctx, runID)
		if err != nil {
			return err
		}
		if st.Status.Terminal() {
			return nil
		}
		if !requested && st.CancelRequested == "" {
			if err := c.append(ctx, st, EvCancelRequested, cancelRequest{Reason: reason}); err != nil {
				return err
			}
		}
		requested = true
		if time.Now().After(deadline) {
			return nil // recorded: the driving process cancels the run when it acts on it
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// cancelWait is how long Cancel waits for another process driving the run
// to act on its request before it returns.
const cancelWait = 10 * time.Second

// cancelIfFree records the run's cancellation when no process drives it
// (its lock is free); done says whether the run has ended.
func (c *Controller) cancelIfFree(ctx context.Context, runID, reason string) (done bool, err error) {
	release, ok, err := c.claim(ctx, runID, nil)
	if err != nil || !ok {
		return false, err
	}
	defer release()
	st, _, err := c.Load(ctx, runID)
	if err != nil {
		return false, err
	}
	if st.Status.Terminal() {
		return true, nil
	}
	return true, c.cancelHeld(ctx, st, reason)
}

// cancelHeld records the cancellation of a run whose lock this process
// holds and whose steps do not run.
func (c *Controller) cancelHeld(ctx context.Context, st *RunState, reason string) error {
	if err := c.append(ctx, st, EvCancelled, endPayload{Reason: reason}); err != nil {
		return err
	}
	_ = c.catchUp(ctx, st)
	c.checkpoint(ctx, st)
	return nil
}

// Resume drives a paused or interrupted run again (after Ollama came back,
// or after a restart).
func (c *Controller) Resume(ctx context.Context, runID string) error {
	st, _, err := c.Load(ctx, runID)
	if err != nil {
		return err
	}
	if st.Status.Terminal() {
		return backend.Errorf(backend.EINVALID, "run %s is %s; fork it from a checkpoint to go on", runID, st.Status)
	}
	if o := c.Elsewhere(st); o != nil {
		if on, err := c.onDatabase(ctx, o.ID); err == nil && !on {
			return backend.Errorf(backend.EINVALID, "run %s was imported from ducklm on %s, which is not on this database; fork it from a checkpoint to go on here", runID, o.Host)
		}
		return backend.Errorf(backend.EINVALID, "run %s is driven by ducklm on %s; resume it there", runID, o.Host)
	}
	c.adopt(st)
	c.Start(runID)
	return nil
}

// ResumeAll restarts every task run that was moving when ducklm stopped.
// Runs waiting for approval stay parked, but a step they were running is
// marked in doubt so the user is asked again. It returns the resumed runs.
func (c *Controller) ResumeAll(ctx context.Context) ([]string, error) {
	runs, err := c.taskRuns(ctx)
	if err != nil {
		return nil, err
	}
	var resumed []string
	for _, r := range runs {
		switch r.Status {
		case backend.RunRunning, backend.RunPending, backend.RunAwaitingApproval:
			if c.shared() && c.d.Installation.ID != "" {
				// Only this installation's runs: another's workspace is on
				// its machine, and a run without an owner waits for a
				// person to say where it goes on.
				st, _, err := c.Load(ctx, r.ID)
				if err != nil {
					c.d.Log("resume", "run", r.ID, "err", err)
					continue
				}
				if o := st.Request.Owner; o == nil || o.ID != c.d.Installation.ID {
					continue
				}
			}
			c.Start(r.ID)
			resumed = append(resumed, r.ID)
		}
	}
	return resumed, nil
}

// RunSummary is a task run as lists show it.
type RunSummary struct {
	Run  backend.WorldRun `json:"run"`
	Task string           `json:"task"`
	// Name is the name a fork was given ("… (edited plan)"), which the
	// run's view heads it with; "" for a run started from a task.
	Name      string `json:"name,omitempty"`
	Approvals int    `json:"approvals"`
	Steps     int    `json:"steps"`
	StepsDone int    `json:"stepsDone"`
	// DrivenBy is the host of the installation that drives the run when it
	// is another one on the team's database ("" when this one does).
	DrivenBy string `json:"drivenBy,omitempty"`
	// Answer is the first line of the run's answer, "" while it has none.
	Answer string `json:"answer,omitempty"`
}

// FirstLine is the first non-empty line of s.
func FirstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// cachedSummary is a run's summary as of the seq its state was folded to.
type cachedSummary struct {
	seq int64
	s   RunSummary
}

// Runs lists task runs, runs waiting for approval first, then newest first.
// A summary needs the run's state (task, steps, approvals); a run whose
// stream has not moved since it was last summarised is not loaded again,
// so a long history of finished runs costs a head lookup each.
func (c *Controller) Runs(ctx context.Context) ([]RunSummary, error) {
	runs, err := c.taskRuns(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]RunSummary, 0, len(runs))
	for _, r := range runs {
		s, err := c.summary(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	waiting := out[:0:0]
	rest := out[:0:0]
	for _, s := range out {
		if s.Approvals > 0 {
			waiting = append(waiting, s)
		} else {
			rest = append(rest, s)
		}
	}
	return append(waiting, rest...), nil
}

// summary returns run r's list summary, from the cache while its stream has
// not moved.
func (c *Controller) summary(ctx context.Context, r backend.WorldRun) (RunSummary, error) {
	head, err := c.d.Events.Head(ctx, r.ID)
	if err != nil {
		return RunSummary{}, err
	}
	c.summaryMu.Lock()
	cached, ok := c.summaries[r.ID]
	c.summaryMu.Unlock()
	if ok && cached.seq == head {
		s := cached.s
		s.Run = r // the row's status and times are read fresh
		return s, nil
	}
	st, _, err := c.Load(ctx, r.ID)
	if err != nil {
		return RunSummary{}, err
	}
	s := RunSummary{Run: r, Task: st.Request.Task, Approvals: len(st.PendingApprovals()), Steps: len(st.Steps), Answer: FirstLine(st.Response)}
	if s.Task == "" {
		s.Task = "explicit plan"
	}
	if r.BaseRunID != "" {
		spec, err := c.d.Store.GetSpec(ctx, r.WorldID)
		if err != nil {
			return RunSummary{}, err
		}
		s.Name = spec.Name
	}
	if o := c.Elsewhere(st); o != nil {
		s.DrivenBy = cmp.Or(o.Host, "another machine")
	}
	for _, rec := range st.Steps {
		if rec.State == StepDone {
			s.StepsDone++
		}
	}
	c.summaryMu.Lock()
	// Keyed by the seq the state was folded to, which is the head or later.
	c.summaries[r.ID] = cachedSummary{seq: st.Seq, s: s}
	c.summaryMu.Unlock()
	return s, nil
}

// taskRuns returns the runs of real-domain worlds, newest first.
func (c *Controller) taskRuns(ctx context.Context) ([]backend.WorldRun, error) {
	return c.d.Store.ListRunsOfBackend(ctx, BackendTask)
}

// catalog describes the tools to planners.
func (c *Controller) catalog() []planner.ToolInfo {
	return planner.CatalogOf(c.d.Tools.List()...)
}

// catalogForValidation is the registry as taskgraph validation needs it.
func (c *Controller) catalogForValidation() taskgraph.Catalog {
	m := taskgraph.MapCatalog{}
	for _, t := range c.d.Tools.List() {
		m[t.Name()] = t.ArgsSchema()
	}
	return m
}

// checkArgs validates a user's edited arguments for a step.
func (c *Controller) checkArgs(node backend.TaskNode, args json.RawMessage) error {
	node.Args = args
	_, err := taskgraph.Validate(backend.TaskGraph{Nodes: []backend.TaskNode{{ID: node.ID, Kind: node.Kind, Tool: node.Tool, Args: args}}},
		c.catalogForValidation())
	if err != nil {
		return backend.Errorf(backend.EINVALID, "the edited arguments are not valid: %s", backend.ErrorMessage(err))
	}
	return nil
}

// buildContext assembles what the planner is told besides the task: what
// this run has done so far. It reads only the run's own external-real
// record; simulated results reach it only as labelled hypotheses.
func (c *Controller) buildContext(ctx context.Context, st *RunState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workspace: %s\n", st.Request.Workspace)
	if c.d.Sandboxed() {
		b.WriteString("Shell steps run in a bubblewrap sandbox: read-only system, writable workspace, no network unless approved.\n")
	} else {
		b.WriteString("No sandbox is available here: every shell step needs the user's approval.\n")
	}
	for _, id := range st.Order() {
		rec := st.Steps[id]
		if rec.Result == nil {
			continue
		}
		fmt.Fprintf(&b, "Step %s (%s) %s", id, rec.Node.Tool, rec.State)
		if rec.Result.StdoutTail != "" {
			out := rec.Result.StdoutTail
			if len(out) > 400 {
				out = out[len(out)-400:]
			}
			fmt.Fprintf(&b, "; output ends: %q", out)
		}
		b.WriteString("\n")
	}
	if c.d.Memories != nil {
		if mems, err := c.d.Memories(ctx, st.Request.Task); err == nil {
			for _, m := range mems {
				b.WriteString("Memory: " + m + "\n")
			}
		}
	}
	return b.String()
}
