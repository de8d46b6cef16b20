package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/critic"
	"ducklm/backend/memory"
	"ducklm/backend/router"
)

// workers runs a run's steps concurrently, bounded by the run's concurrency.
type workers struct {
	c     *Controller
	runID string

	mu     sync.Mutex
	active map[string]bool
	// unrecorded are the active steps whose start is not on the ledger yet
	// (a step safe to repeat: its start rides on its result's commit); the
	// router counts them as running.
	unrecorded map[string]bool
	wg         sync.WaitGroup
	changed    chan struct{}
	// memories are the memory writes of finished steps still under way:
	// off a step's path (the next step starts meanwhile), but the run ends
	// only after them (afterSteps).
	memories sync.WaitGroup
	// jobs hands a step to a goroutine that ran one before and waits for
	// another: its stack has grown to what a step needs (a commit runs
	// deep), where a new goroutine's would grow again by copying, a few
	// times a step. ended lets the waiting ones go when the driver stops.
	jobs  chan func()
	ended chan struct{}
}

func newWorkers(c *Controller, runID string) *workers {
	return &workers{c: c, runID: runID, active: map[string]bool{}, unrecorded: map[string]bool{}, changed: make(chan struct{}, 1),
		jobs: make(chan func()), ended: make(chan struct{})}
}

// starting lists the steps started whose start is not recorded yet.
func (w *workers) starting() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.unrecorded) == 0 {
		return nil
	}
	out := make([]string, 0, len(w.unrecorded))
	for id := range w.unrecorded {
		out = append(out, id)
	}
	return out
}

func (w *workers) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.active)
}

// start applies dec, the router's decision to run a step: it begins the
// step in the background, or reports false when the run is at its
// concurrency bound (the caller waits for a slot) and dec is not applied.
func (w *workers) start(ctx context.Context, st *RunState, stepID string, dec backend.Decision) bool {
	rec := st.Steps[stepID]
	if rec == nil {
		return true // nothing to start; the next fold will tell the router
	}
	w.mu.Lock()
	if w.active[stepID] {
		w.mu.Unlock()
		return false
	}
	if len(w.active) >= max(st.Request.Concurrency, 1) {
		w.mu.Unlock()
		return false
	}
	w.active[stepID] = true
	w.mu.Unlock()

	snap := st.view(stepID)
	if rec.Node.Kind == backend.KindCoderStep && rec.Script == nil {
		applied := event(EvDecision, decisionRecord{Source: "router", Decision: dec}, snap.Ticks)
		if err := w.c.appendWith(ctx, snap, nil, applied); err != nil {
			w.done(stepID)
			return true
		}
		w.run(stepID, func() { w.c.writeScript(ctx, snap, stepID) })
		return true
	}
	// The start is durable before anything runs: if ducklm dies from here
	// on, the step is in doubt on resume and is never silently run again
	// (unless it is safe to repeat: below). The decision that started it
	// is recorded in it.
	attempt := rec.Attempts + 1
	args := rec.Args()
	tool := rec.Node.Tool
	if rec.Script != nil {
		tool = "coder"
	}
	grant := router.WebGrant(tool, args, rec.Approved, st.AllowedHosts)
	started := event(EvStepStarted, stepStarted{Step: stepID, Attempt: attempt, Tool: tool,
		Args: args, Sandboxed: w.c.d.Sandboxed(), Network: rec.Network || len(grant.Hosts) > 0,
		Hosts: grant.Hosts, PrivateHosts: grant.Private, Decision: &dec}, snap.Ticks)
	if r := snap.Steps[stepID]; r != nil {
		// The worker's copy runs with what the start records.
		r.Hosts, r.PrivateHosts = grant.Hosts, grant.Private
	}
	// A step safe to repeat does not record its start before it runs: the
	// start rides on its result's commit, which makes both durable (one
	// commit a step), or, when the step runs longer than its grace
	// (Deps.StartGrace), it is recorded alone without a sync of its own,
	// so the step shows running. A crash before the result's commit runs
	// the step again.
	var lead *leadStart
	grace := cmp.Or(w.c.d.StartGrace, defaultStartGrace)
	if grace > 0 && w.c.repeatable(rec) {
		lead = &leadStart{ev: &started}
		w.mu.Lock()
		w.unrecorded[stepID] = true // the router counts it as running
		w.mu.Unlock()
	} else {
		sctx := ctx
		if w.c.repeatable(rec) {
			sctx = backend.DeferSync(ctx) // its result's commit syncs it
		}
		if err := w.c.appendWith(sctx, snap, nil, started); err != nil {
			w.done(stepID)
			return true
		}
		// The driver must see the step as running before it asks the router again.
		_ = w.c.catchUp(ctx, st)
	}
	w.run(stepID, func() {
		if lead != nil {
			early := time.AfterFunc(grace, func() { _ = w.c.appendLed(backend.DeferSync(ctx), snap, lead) })
			defer early.Stop()
		}
		if remember := w.c.execute(ctx, snap, stepID, attempt, lead); remember != nil {
			w.memories.Add(1)
			go func() {
				defer w.memories.Done()
				remember()
			}()
		}
	})
	return true
}

func (w *workers) run(stepID string, fn func()) {
	w.wg.Add(1)
	job := func() {
		defer w.wg.Done()
		defer w.done(stepID)
		fn()
	}
	select {
	case w.jobs <- job: // a goroutine that waits takes it
	default:
		go w.serve(job)
	}
}

// serve runs job, then the jobs handed to it, until the driver stops.
func (w *workers) serve(job func()) {
	for {
		job()
		select {
		case job = <-w.jobs:
		case <-w.ended:
			return
		}
	}
}

func (w *workers) done(stepID string) {
	w.mu.Lock()
	delete(w.active, stepID)
	delete(w.unrecorded, stepID)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// hold keeps stepID out of the run's free slots for delay (a retry's
// backoff): the router may choose it again meanwhile, and its start waits.
func (w *workers) hold(ctx context.Context, stepID string, delay time.Duration) {
	w.mu.Lock()
	w.active[stepID] = true
	w.mu.Unlock()
	w.run(stepID, func() {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	})
}

// waitOne blocks until a step finishes, the run is woken, or ctx ends.
func (w *workers) waitOne(ctx context.Context, wake <-chan struct{}) {
	select {
	case <-w.changed:
	case <-wake:
	case <-ctx.Done():
	}
}

func (w *workers) wait() {
	w.wg.Wait()
	w.memories.Wait()
	close(w.ended)
}

// afterMemories waits for the memory writes of the steps that finished.
func (w *workers) afterMemories() { w.memories.Wait() }

// defaultStartGrace is how long a step safe to repeat runs before its
// start is recorded alone (Deps.StartGrace); a quicker one records it in
// its result's commit.
const defaultStartGrace = 20 * time.Millisecond

// leadStart is a step's start not recorded yet: the step's first append
// carries it before its own events, or its grace ends and records it alone.
type leadStart struct {
	mu sync.Mutex
	ev *backend.Event // nil once recorded
}

// append runs fn with the events to record before fn's own (the start, if
// it is not recorded yet), one caller at a time, so the start is recorded
// once and before anything of its step. A nil leadStart has none.
func (l *leadStart) append(fn func(first []backend.Event) error) error {
	if l == nil {
		return fn(nil)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var first []backend.Event
	if l.ev != nil {
		first = []backend.Event{*l.ev}
	}
	err := fn(first)
	if err == nil {
		l.ev = nil
	}
	return err
}

// appendLed appends events after the step's start when lead holds it
// unrecorded; with neither, it writes nothing.
func (c *Controller) appendLed(ctx context.Context, st *RunState, lead *leadStart, events ...backend.Event) error {
	return lead.append(func(first []backend.Event) error {
		if len(first)+len(events) == 0 {
			return nil
		}
		return c.appendWith(ctx, st, nil, append(first, events...)...)
	})
}

// execute runs one started step through its tool, stores its output, has
// the critic score it and checkpoints the run. It returns the step's memory
// write, for the caller to run after (nil: none). lead, when set, is
// its start, not recorded yet.
func (c *Controller) execute(ctx context.Context, st *RunState, stepID string, attempt int, lead *leadStart) (remember func()) {
	rec := st.Steps[stepID]
	ws, wsID, err := c.stepWorkspace(st)
	call := backend.ToolCall{RunID: st.RunID, StepID: stepID, Tool: rec.Node.Tool, Args: rec.Args(),
		Workspace: ws, WorkspaceID: wsID, Network: rec.Network, Limits: st.Request.Limits,
		Hosts: rec.Hosts, PrivateHosts: rec.PrivateHosts}
	var tool backend.Tool
	switch {
	case err != nil:
	case rec.Script != nil:
		tool, err = c.scriptTool(rec.Script)
	default:
		tool, err = c.d.Tools.Get(rec.Node.Tool)
	}
	var res backend.ToolResult
	if err == nil {
		res, err = tool.Run(ctx, call)
	}
	fin := stepFinished{Step: stepID, Attempt: attempt, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		Truncated: res.Truncated, DurationMS: res.Duration.Milliseconds(), FilesChanged: res.FilesChanged,
		Output: res.Output, Sandboxed: res.Sandboxed, Confinement: c.confinement(rec), Placement: res.Placement}
	switch {
	case ctx.Err() != nil:
		fin.Error = "cancelled while running"
	case err != nil:
		fin.Error = backend.ErrorMessage(err)
		fin.Retryable = backend.ErrorCode(err) == backend.EUNAVAILABLE
	default:
		fin.OK = res.ExitCode == 0 && !res.TimedOut
		// A step that timed out may have done part of its work: it runs
		// again only when its plan says that is safe.
		fin.Retryable = res.TimedOut && rec.Node.RetryOnTimeout
	}
	// Whether it does run again is the router's decision (RuleRetry).
	fin.Stdout, fin.StdoutTail = c.storeOutput(ctx, res.Stdout)
	fin.Stderr, fin.StderrTail = c.storeOutput(ctx, res.Stderr)
	finishedID := backend.NewID(backend.KindEvent) // a memory's provenance points here
	if ctx.Err() != nil {
		if err := c.appendLed(ctx, st, lead, stepEvent(fin, finishedID, st.Ticks)); err != nil {
			c.d.Log("record step", "run", st.RunID, "step", stepID, "err", err)
		}
		return
	}
	// The result, its critique and a checkpoint are one event in one commit.
	var crit critic.Critique
	late := false
	if c.d.Critic != nil {
		req := critic.Request{Task: st.Request.Task, Step: rec.Node, Result: res, Stdout: string(res.Stdout),
			Stderr: string(res.Stderr), Model: c.modelFor(ctx, st, router.RoleCritic)}
		scored := make(chan critic.Critique, 1)
		go func() { scored <- c.d.Critic.Evaluate(ctx, req) }()
		grace := time.NewTimer(criticGrace)
		select {
		case crit = <-scored:
			grace.Stop()
			fin.Critique = critiqueOf(stepID, crit).withResult() // with the critic's decision
		case <-grace.C:
			// A slow critic (a model) must not keep the result from being
			// durable: a crash meanwhile would leave a finished step in doubt.
			if err := c.appendLed(ctx, st, lead, stepEvent(fin, finishedID, st.Ticks)); err != nil {
				c.d.Log("record step", "run", st.RunID, "step", stepID, "err", err)
				return
			}
			crit, late = <-scored, true
		}
	}
	if late {
		if err := c.appendCheckpointed(ctx, st, critiqued(stepID, crit, st.Ticks)); err != nil { // with the critic's decision
			c.d.Log("record step", "run", st.RunID, "step", stepID, "err", err)
			return
		}
		return func() { c.remember(ctx, st, rec, finishedID, fin, crit.Score, crit.Source) }
	}
	// The memory decision joins them when its verdict is ready in time.
	carried, later := c.decideMemory(ctx, st, rec, finishedID, fin, crit)
	// A step that changes something synced its start; its result waits
	// for the run's next synced commit (flush.go). A read's result is its
	// one commit, and syncs.
	rctx, deferred := ctx, c.flusher() != nil && !c.repeatable(rec)
	if deferred {
		rctx = backend.DeferSync(ctx)
	}
	recorded := lead.append(func(first []backend.Event) error {
		return c.appendResult(rctx, st, first, fin, finishedID, carried)
	})
	if recorded == nil && deferred {
		c.syncSoon(st.RunID)
	}
	if recorded != nil {
		c.d.Log("record step", "run", st.RunID, "step", stepID, "err", recorded)
	}
	switch {
	case carried != nil:
		// The memory index takes in what the result's commit stored or
		// merged off the step's path: the next step starts meanwhile, and
		// the store's next decision waits for it.
		return func() { carried.Finish(ctx, recorded == nil) }
	case later != nil:
		return func() { later(recorded == nil) }
	}
	return nil
}

// memoryGrace is how long a step's result waits for the memory write
// policy's verdict to share its event and commit; the default embedder and
// the dedup lookup take well under a millisecond, a model's embedding may
// not.
const memoryGrace = 50 * time.Millisecond

// decideMemory offers a scored result to the memory write policy, which
// alone decides to store, merge or skip. A verdict ready within memoryGrace
// is carried by the result (its decision in the result's event, its rows
// in the result's commit); else later applies it once the result is
// recorded (true), as a memory.decided event, or drops it (false). Both
// are nil when nothing is offered.
func (c *Controller) decideMemory(ctx context.Context, st *RunState, rec *StepRecord, eventID string, fin stepFinished, crit critic.Critique) (*memory.Carried, func(recorded bool)) {
	cand, ok := c.memoryCandidate(st, rec, eventID, fin, crit.Score, crit.Source)
	if !ok {
		return nil, nil
	}
	type answer struct {
		v   MemoryVerdict
		err error
	}
	got := make(chan answer, 1)
	go func() {
		v, err := c.d.Memory.Decide(ctx, cand)
		got <- answer{v, err}
	}()
	settle := func(a answer, recorded bool) {
		switch {
		case a.err != nil:
			c.d.Log("memory write skipped", "run", st.RunID, "step", rec.Node.ID, "err", backend.ErrorMessage(a.err))
		case !recorded:
			a.v.Drop()
		default:
			// The policy decided (store_memory, or a skip); the loop
			// applies it. Its commit does not sync: the run's next synced
			// commit makes it durable (rememberMissed makes a lost one again).
			if _, err := a.v.Apply(backend.DeferSync(ctx), a.v.Decision()); err != nil {
				c.d.Log("memory write skipped", "run", st.RunID, "step", rec.Node.ID, "err", backend.ErrorMessage(err))
			}
		}
	}
	grace := time.NewTimer(memoryGrace)
	select {
	case a := <-got:
		grace.Stop()
		if carrier, ok := a.v.(MemoryCarrier); ok && a.err == nil {
			carried, err := carrier.Carry(ctx, a.v.Decision())
			if err != nil {
				c.d.Log("memory write skipped", "run", st.RunID, "step", rec.Node.ID, "err", backend.ErrorMessage(err))
				return nil, nil
			}
			if carried != nil {
				return carried, nil
			}
		}
		return nil, func(recorded bool) { settle(a, recorded) }
	case <-grace.C:
		return nil, func(recorded bool) { settle(<-got, recorded) }
	}
}

// stepEvent is the step.finished event of fin, with id.
func stepEvent(fin stepFinished, id string, tick int64) backend.Event {
	e := event(EvStepFinished, fin, tick)
	e.ID = id
	return e
}

// criticGrace is how long a step's result waits for its critique to share
// its commit; the heuristic critic takes microseconds.
const criticGrace = 50 * time.Millisecond

// outputTail is how much of stdout/stderr an event carries inline; a
// longer (capped) output is also stored whole as a blob.
const outputTail = 2048

func (c *Controller) storeOutput(ctx context.Context, data []byte) (*backend.BlobRef, string) {
	if len(data) == 0 {
		return nil, ""
	}
	if len(data) <= outputTail {
		// The event holds the whole output: a blob would only add a file
		// and two fsyncs to the step.
		return nil, string(data)
	}
	tail := data[len(data)-outputTail:]
	ref, err := c.d.Blobs.Put(context.WithoutCancel(ctx), data, "text/plain; charset=utf-8")
	if err != nil {
		c.d.Log("store output", "err", err)
		return nil, string(tail)
	}
	return &ref, string(tail)
}

// writeScript has the coder write a coder step's script and records it; the
// script then waits for approval like any risky step.
func (c *Controller) writeScript(ctx context.Context, st *RunState, stepID string) {
	rec := st.Steps[stepID]
	var args struct {
		Goal     string `json:"goal"`
		Language string `json:"language"`
	}
	_ = json.Unmarshal(rec.Node.Args, &args)
	if args.Language == "" {
		args.Language = "sh"
	}
	if c.d.Coder == nil {
		_ = c.append(ctx, st, EvStepFinished, stepFinished{Step: stepID, Error: "no coder model is available to write this step's script"})
		return
	}
	script, err := c.d.Coder.Write(ctx, CoderRequest{Task: st.Request.Task, Goal: args.Goal, Language: args.Language,
		Model: c.modelFor(ctx, st, router.RoleCoder), OnToken: func(tok string) { c.token(st.RunID, stepID, tok) }})
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		if backend.ErrorCode(err) == backend.EUNAVAILABLE {
			_ = c.append(ctx, st, EvStatus, statusPayload{Status: backend.RunPaused, Reason: backend.ErrorMessage(err)})
			return
		}
		_ = c.append(ctx, st, EvStepFinished, stepFinished{Step: stepID, Error: "the coder failed: " + backend.ErrorMessage(err)})
		return
	}
	ref, err := c.d.Blobs.Put(ctx, []byte(script.Source), "text/plain; charset=utf-8")
	if err != nil {
		_ = c.append(ctx, st, EvStepFinished, stepFinished{Step: stepID, Error: backend.ErrorMessage(err)})
		return
	}
	_ = c.append(ctx, st, EvCoderScript, coderScript{Step: stepID, Language: script.Language, Blob: ref, Source: script.Source, Model: script.Model})
}

// scriptTool returns the tool that runs a coder step's approved script.
func (c *Controller) scriptTool(s *coderScript) (backend.Tool, error) {
	if c.d.ScriptTool == nil {
		return nil, backend.Errorf(backend.EUNAVAILABLE, "this ducklm cannot run coder scripts")
	}
	return c.d.ScriptTool(s.Language, s.Source), nil
}

// remember offers a scored result to the memory write policy after the
// result's commit (a critique that came late, a result taken up again) and
// applies its decision, which records why. A memory failure skips the
// write and the run goes on. Its commit does not sync: the run's next
// synced commit makes it durable, and a decision a crash lost is made
// again when the run is taken up (rememberMissed): the memory store is
// derived from the ledger's results.
func (c *Controller) remember(ctx context.Context, st *RunState, rec *StepRecord, eventID string, fin stepFinished, score float64, source string) {
	cand, ok := c.memoryCandidate(st, rec, eventID, fin, score, source)
	if !ok {
		return
	}
	verdict, err := c.d.Memory.Decide(ctx, cand)
	if err != nil {
		c.d.Log("memory write skipped", "run", st.RunID, "step", rec.Node.ID, "err", backend.ErrorMessage(err))
		return
	}
	// The policy decided (store_memory, or a skip); the loop applies it.
	if _, err := verdict.Apply(backend.DeferSync(ctx), verdict.Decision()); err != nil {
		c.d.Log("memory write skipped", "run", st.RunID, "step", rec.Node.ID, "err", backend.ErrorMessage(err))
	}
}

// memoryCandidate is what a scored result offers the memory write policy;
// false when nothing is offered (no memory store, no critique, a step that
// could not run).
func (c *Controller) memoryCandidate(st *RunState, rec *StepRecord, eventID string, fin stepFinished, score float64, source string) (memory.Candidate, bool) {
	if c.d.Memory == nil || source == "" || fin.Error != "" {
		return memory.Candidate{}, false
	}
	tool := rec.Node.Tool
	if rec.Script != nil {
		tool = "coder"
	}
	return memory.FromStep(memory.Step{RunID: st.RunID, EventID: eventID, Task: st.Request.Task, Tool: tool,
		Args: rec.Args(), Stdout: fin.StdoutTail, Output: fin.Output, CriticScore: score, Tick: st.Ticks}), true
}

// rememberMissed offers again the scored results of a run taken up whose
// memory decision is not in the ledger (a crash lost its unsynced commit):
// each finished step's latest result that carries no memory decision and
// that no memory.decided or memory.skipped event names as its cause.
func (c *Controller) rememberMissed(ctx context.Context, st *RunState) error {
	if c.d.Memory == nil || st.StepsRun == 0 {
		return nil
	}
	events, err := c.d.Events.Query(ctx, backend.EventQuery{Stream: st.RunID,
		Types: []string{EvStepFinished, memory.EvDecided, memory.EvSkipped}})
	if err != nil {
		return err
	}
	decided := map[string]bool{}
	latest := map[string]string{} // step → its latest step.finished event
	for _, e := range events {
		if e.Type != EvStepFinished {
			decided[e.CausationID] = true
			continue
		}
		if memory.Records(e) {
			decided[e.ID] = true // the result carries its decision
		}
		var p struct {
			Step string `json:"step"`
		}
		if json.Unmarshal(e.Payload, &p) == nil {
			latest[p.Step] = e.ID
		}
	}
	for _, id := range st.Order() {
		rec := st.Steps[id]
		eventID, ok := latest[id]
		if !ok || decided[eventID] || rec.Result == nil || rec.Critique == nil {
			continue
		}
		c.remember(ctx, st, rec, eventID, *rec.Result, rec.Critique.Score, rec.Critique.Source)
	}
	return nil
}
