package runtime

import (
	"context"
	"encoding/json"
	"time"

	"ducklm/backend"
	"ducklm/backend/router"
	"ducklm/backend/taskgraph"
)

// Start drives a run in the background unless a driver already moves it;
// when one does, it wakes it (an approval arrived, a step finished).
func (c *Controller) Start(runID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if d, ok := c.drivers[runID]; ok {
		select {
		case d.wake <- struct{}{}:
		default:
		}
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &driver{cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.drivers[runID] = d
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(d.done)
		defer cancel()
		st := c.drive(ctx, runID, d)
		c.mu.Lock()
		delete(c.drivers, runID)
		c.mu.Unlock()
		if ctx.Err() != nil {
			return // cancelled or closing: whoever stopped it knows
		}
		// A wake after the driver's last read (an answer recorded just as
		// the run parked) found this driver stopping: drive again, or the
		// answer would wait for the next restart.
		select {
		case <-d.wake:
			c.Start(runID)
			return
		default:
		}
		c.afterDrive(ctx, runID, st)
	}()
}

// afterDrive looks at how a driver left its run. Ended, parked for an
// approval or paused for a model is a driver's normal way out. A run left
// pending or running stopped on an error (the database refused a write,
// the run could not be read): nothing else would move it before a restart,
// so it is driven again after a pause that doubles with each such stop.
func (c *Controller) afterDrive(ctx context.Context, runID string, st *RunState) {
	moving := false // a run that cannot be read was logged; a restart tries again
	if st != nil && c.catchUp(ctx, st) == nil {
		moving = st.Status == backend.RunRunning || st.Status == backend.RunPending
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !moving {
		delete(c.stalls, runID)
		return
	}
	if c.closed {
		return
	}
	n := c.stalls[runID]
	c.stalls[runID] = n + 1
	delay := stallPause << min(n, 6)
	c.d.Log("a driver stopped with its run still moving; driving it again", "run", runID, "stops", n+1, "after", delay)
	time.AfterFunc(delay, func() { c.Start(runID) })
}

// stallPause is the first pause before a stopped run is driven again
// (then 2×, 4×, … up to 64×).
var stallPause = time.Second

// Close stops every driver (running steps are cancelled and recorded) and
// the cancels other processes asked for, and waits for them.
func (c *Controller) Close() {
	c.mu.Lock()
	c.closed = true
	c.endLife()
	for _, d := range c.drivers {
		d.cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// Wait blocks until the run's driver stops (terminal, parked for approval,
// or paused) or ctx ends.
func (c *Controller) Wait(ctx context.Context, runID string) error {
	c.mu.Lock()
	d, ok := c.drivers[runID]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drive moves a run through the loop until it ends or parks: context →
// router → (planner | approval request | engine) → critic → checkpoint.
func (c *Controller) drive(ctx context.Context, runID string, d *driver) *RunState {
	st, _, err := c.Load(ctx, runID)
	if err != nil {
		c.d.Log("load run", "run", runID, "err", err)
		return nil
	}
	if st.Status.Terminal() {
		return st
	}
	if !c.mayDrive(st) {
		return nil // another installation drives it; this one follows
	}
	release, ok, err := c.claim(ctx, runID, d.cancel)
	if err != nil {
		c.d.Log("take the run's lock", "run", runID, "err", err)
		return nil
	}
	if !ok {
		return nil // another process drives it; this one follows
	}
	defer release() // after the steps' workers are done (deferred below)
	// What happened while this process did not hold the lock is read now.
	if err := c.catchUp(ctx, st); err != nil {
		c.d.Log("read run", "run", runID, "err", err)
		return st
	}
	if st.Status.Terminal() {
		return st
	}
	if st.CancelRequested != "" {
		if err := c.cancelHeld(ctx, st, st.CancelRequested); err != nil {
			c.d.Log("cancel on request", "run", runID, "err", err)
		}
		return st
	}
	c.recordRecovery(ctx, st)
	if st.Seq == 0 && st.Request.Task == "" && st.Request.Plan == nil {
		if err := c.recordTask(ctx, st); err != nil {
			c.d.Log("record task", "run", runID, "err", err)
			return st
		}
	}
	if err := c.markInDoubt(ctx, st); err != nil {
		c.d.Log("in-doubt check", "run", runID, "err", err)
		return st
	}
	if err := c.rememberMissed(ctx, st); err != nil {
		c.d.Log("memory catch-up", "run", runID, "err", err)
	}
	// A run taken up again says it is running only when it has something
	// to do: a run still waiting for an answer (after a restart, or an
	// answer to one of two requests) stays awaiting_approval instead of
	// flapping to running and back.
	moving := func() bool {
		if st.Status == backend.RunRunning {
			return true
		}
		return c.setStatus(ctx, st, backend.RunRunning, "") == nil
	}
	// Once the steps' workers are done, a result still waiting for a sync
	// gets one (deferred calls run in reverse order).
	defer c.flushNow(runID)
	steps := newWorkers(c, st.RunID)
	defer steps.wait()
	var graph *taskgraph.Graph // rebuilt only when the accepted plan changes
	var graphOf *backend.TaskGraph
	var index *stepIndex // the router's view of the plan's steps, rebuilt with it
	for {
		select {
		case <-d.wake: // the read below sees whatever the wake was about
		default:
		}
		// The steps whose start is not recorded yet, read before the fold
		// catches up: a step that left this list has its events on the
		// ledger by then, so the fold below shows it started.
		starting := steps.starting()
		if err := c.catchUp(ctx, st); err != nil {
			c.d.Log("read run", "run", runID, "err", err)
			return st
		}
		if ctx.Err() != nil || st.Status.Terminal() {
			return st
		}
		if st.CancelRequested != "" {
			// Another process asked for a cancel (in case Followed has not
			// acted on it yet): requestedCancel stops this driver, its steps
			// killed and recorded, then records the cancellation.
			c.requestedCancel(st.RunID, st.CancelRequested)
			return st
		}
		if st.Graph != graphOf {
			graphOf, graph = st.Graph, nil
			if st.Graph != nil {
				g, err := taskgraph.ValidateMax(*st.Graph, c.catalogForValidation(), st.Request.MaxPlanSteps)
				if err != nil {
					c.fail(ctx, st, "the accepted plan no longer validates: "+backend.ErrorMessage(err))
					return st
				}
				graph = g
			}
		}
		if st.Graph != nil {
			// Steps' checkpoints name the run's base: write one when there
			// is none or the events since it outweigh it.
			if _, err := c.ensureBase(ctx, st); err != nil {
				c.d.Log("checkpoint base", "run", runID, "err", err)
			}
		}
		index = indexSteps(st, graph, index)
		rs := routerState(st, index, steps.running(), c.d.Sandboxed(), starting)
		if changed, err := c.resolveReady(ctx, st, rs.Ready); err != nil {
			c.d.Log("resolve step args", "run", runID, "err", err)
			return st
		} else if changed {
			index = indexSteps(st, graph, index)
			rs = routerState(st, index, steps.running(), c.d.Sandboxed(), starting)
		}
		rs.MCP = c.mcpOfReady(rs.Ready)
		rc := c.routerContext(ctx, st)
		dec := router.Route(rs, rc)
		if err := dec.Validate(); err != nil {
			c.fail(ctx, st, "the router returned an invalid decision: "+backend.ErrorMessage(err))
			return st
		}
		applied := event(EvDecision, decisionRecord{Source: "router", Decision: dec}, st.Ticks)
		// A decision that starts or retries a step is recorded in that
		// step's event (one commit a step fewer, the same facts).
		startsStep := dec.Type == backend.DecisionTool || dec.Type == backend.DecisionCoder || dec.Type == backend.DecisionRetry
		// A run that waits for a planning model (to revise its plan or
		// review its results) pauses; taken up again with none there yet,
		// it stays as it is, recording nothing.
		waitsForModel := dec.Type == backend.DecisionFail && needsModel(dec)
		if waitsForModel && st.Status == backend.RunPaused && st.NeedsModel {
			return st
		}
		if (dec.Type != backend.DecisionNoop || steps.running() > 0 || rs.Running > 0) && !moving() {
			return st
		}
		if dec.Type != backend.DecisionNoop && !startsStep {
			if err := c.appendWith(ctx, st, nil, applied); err != nil {
				return st
			}
		}
		switch dec.Type {
		case backend.DecisionPlan, backend.DecisionReplan:
			if dec.Type == backend.DecisionPlan && payloadString(dec.Payload, "search") != "" {
				if stop := c.takeLine(ctx, st, dec); stop {
					return st
				}
				continue
			}
			if stop := c.plan(ctx, st, dec); stop {
				return st
			}
		case backend.DecisionReview:
			if stop := c.review(ctx, st, dec); stop {
				return st
			}
		case backend.DecisionRetry:
			if err := c.retry(ctx, st, dec, steps); err != nil {
				return st
			}
		case backend.DecisionRequestPermission:
			if err := c.requestApproval(ctx, st, dec); err != nil {
				c.d.Log("approval request", "run", runID, "err", err)
				return st
			}
		case backend.DecisionTool, backend.DecisionCoder:
			stepID := payloadString(dec.Payload, "step")
			if !steps.start(ctx, st, stepID, dec) { // records the decision in the step's start
				steps.waitOne(ctx, d.wake)
			}
		case backend.DecisionComplete:
			// A completed run has offered every result to memory.
			steps.afterMemories()
			c.complete(ctx, st, dec.Reason)
			return st
		case backend.DecisionFail:
			if waitsForModel {
				// Nothing is wrong with the run: it waits for a model, and
				// the service resumes it once one answers.
				_ = c.setStatusOf(ctx, st, statusPayload{Status: backend.RunPaused, Reason: dec.Reason, NeedsModel: true})
				return st
			}
			c.fail(ctx, st, dec.Reason)
			return st
		case backend.DecisionRespond:
			c.completeWith(ctx, st, dec.Reason, payloadString(dec.Payload, "text"))
			return st
		case backend.DecisionNoop:
			if steps.running() > 0 {
				steps.waitOne(ctx, d.wake)
				continue
			}
			if rs.Running > 0 {
				// The steps the router waited for ended after it looked:
				// read their results. A step still running in the fold
				// with no worker left could not record its result: it is
				// in doubt, never silently taken as done.
				if c.catchUp(ctx, st) != nil || c.markInDoubt(ctx, st) != nil {
					return st
				}
				continue
			}
			if len(st.PendingApprovals()) > 0 {
				// Park durably: an approval (an event) wakes the run, even
				// after a restart.
				_ = c.setStatus(ctx, st, backend.RunAwaitingApproval, dec.Reason)
				return st
			}
			c.fail(ctx, st, "the run cannot make progress: "+dec.Reason)
			return st
		default:
			c.fail(ctx, st, "the router asked for "+string(dec.Type)+", which a task run cannot apply")
			return st
		}
	}
}

// needsModel reports whether a fail decision of the router's is a wait
// for a planning model (router.FailPayload.NeedsModel).
func needsModel(dec backend.Decision) bool {
	var p router.FailPayload
	return json.Unmarshal(dec.Payload, &p) == nil && p.NeedsModel
}

// decisionRecord is the payload of decision.applied.
type decisionRecord struct {
	Source   string           `json:"source"`
	Decision backend.Decision `json:"decision"`
}

func (c *Controller) setStatus(ctx context.Context, st *RunState, status backend.RunStatus, reason string) error {
	return c.setStatusOf(ctx, st, statusPayload{Status: status, Reason: reason})
}

// setStatusOf records a status change with its flags (NeedsModel), unless
// the run already has it.
func (c *Controller) setStatusOf(ctx context.Context, st *RunState, p statusPayload) error {
	if st.Status == p.Status && st.StatusReason == p.Reason && st.NeedsModel == p.NeedsModel {
		return nil
	}
	if err := c.append(ctx, st, EvStatus, p); err != nil {
		c.d.Log("status", "run", st.RunID, "err", err)
		return err
	}
	return c.catchUp(ctx, st)
}

func (c *Controller) complete(ctx context.Context, st *RunState, reason string) {
	c.completeWith(ctx, st, reason, "")
}

func (c *Controller) completeWith(ctx context.Context, st *RunState, reason, response string) {
	if err := c.append(ctx, st, EvCompleted, endPayload{Reason: reason, Response: response}); err != nil {
		c.d.Log("complete", "run", st.RunID, "err", err)
		return
	}
	_ = c.catchUp(ctx, st)
	c.checkpoint(ctx, st)
}

func (c *Controller) fail(ctx context.Context, st *RunState, reason string) {
	if err := c.append(ctx, st, EvFailed, endPayload{Reason: reason}); err != nil {
		c.d.Log("fail", "run", st.RunID, "err", err)
		return
	}
	_ = c.catchUp(ctx, st)
	c.checkpoint(ctx, st)
}

// markInDoubt turns every step that started but never finished (the app
// died between the two) into an in-doubt step: it is shown for re-approval,
// never silently re-run. A step safe to repeat (its tool only reads:
// backend.Repeatable) runs again instead: its start was not even synced.
func (c *Controller) markInDoubt(ctx context.Context, st *RunState) error {
	for _, id := range st.Order() {
		if s := st.Steps[id]; s.State == StepRunning {
			typ, reason := EvStepInDoubt, "ducklm stopped while this step was running; it may or may not have taken effect"
			if c.repeatable(s) {
				typ, reason = EvStepRetrying, rerunReason
			}
			if err := c.append(ctx, st, typ, stepNote{Step: id, Attempt: s.Attempts, Reason: reason}); err != nil {
				return err
			}
		}
	}
	return c.catchUp(ctx, st)
}

// rerunReason is why a repeatable step left running by a stopped ducklm
// runs again.
const rerunReason = "ducklm stopped while this step was running; it only reads, so it runs again"

// repeatable reports whether a step's calls are safe to repeat: a tool
// step whose tool says so (a coder script never is).
func (c *Controller) repeatable(s *StepRecord) bool {
	if s.Script != nil || s.Node.Kind != backend.KindToolStep || c.d.Tools == nil {
		return false
	}
	t, err := c.d.Tools.Get(s.Node.Tool)
	return err == nil && backend.IsRepeatable(t, s.Args())
}
