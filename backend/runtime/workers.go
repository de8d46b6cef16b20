package runtime

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/critic"
)

// workers runs a run's steps concurrently, bounded by the run's concurrency.
type workers struct {
	c     *Controller
	runID string

	mu      sync.Mutex
	active  map[string]bool
	wg      sync.WaitGroup
	changed chan struct{}
}

func newWorkers(c *Controller, runID string) *workers {
	return &workers{c: c, runID: runID, active: map[string]bool{}, changed: make(chan struct{}, 1)}
}

func (w *workers) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.active)
}

// start begins a step in the background, or reports false when the run is
// at its concurrency bound (the caller waits for a slot).
func (w *workers) start(ctx context.Context, st *RunState, stepID string) bool {
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

	snap := st.Clone()
	if rec.Node.Kind == backend.KindCoderStep && rec.Script == nil {
		w.run(stepID, func() { w.c.writeScript(ctx, snap, stepID) })
		return true
	}
	// The start is durable before anything runs: if ducklm dies from here
	// on, the step is in doubt on resume and is never silently run again.
	attempt := rec.Attempts + 1
	args := rec.Args()
	tool := rec.Node.Tool
	if rec.Script != nil {
		tool = "coder"
	}
	if err := w.c.append(ctx, snap, EvStepStarted, stepStarted{Step: stepID, Attempt: attempt, Tool: tool,
		Args: args, Sandboxed: w.c.d.Sandboxed(), Network: rec.Network}); err != nil {
		w.done(stepID)
		return true
	}
	// The driver must see the step as running before it asks the router again.
	_ = w.c.catchUp(ctx, st)
	w.run(stepID, func() { w.c.execute(ctx, snap, stepID, attempt) })
	return true
}

func (w *workers) run(stepID string, fn func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer w.done(stepID)
		fn()
	}()
}

func (w *workers) done(stepID string) {
	w.mu.Lock()
	delete(w.active, stepID)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// waitOne blocks until a step finishes, the run is woken, or ctx ends.
func (w *workers) waitOne(ctx context.Context, wake <-chan struct{}) {
	select {
	case <-w.changed:
	case <-wake:
	case <-ctx.Done():
	}
}

func (w *workers) wait() { w.wg.Wait() }

// execute runs one started step through its tool, stores its output, has
// the critic score it and checkpoints the run.
func (c *Controller) execute(ctx context.Context, st *RunState, stepID string, attempt int) {
	rec := st.Steps[stepID]
	call := backend.ToolCall{RunID: st.RunID, StepID: stepID, Tool: rec.Node.Tool, Args: rec.Args(),
		Workspace: st.Request.Workspace, Network: rec.Network, Limits: st.Request.Limits}
	var tool backend.Tool
	var err error
	if rec.Script != nil {
		tool, err = c.scriptTool(rec.Script)
	} else {
		tool, err = c.d.Tools.Get(rec.Node.Tool)
	}
	var res backend.ToolResult
	if err == nil {
		res, err = tool.Run(ctx, call)
	}
	fin := stepFinished{Step: stepID, Attempt: attempt, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		Truncated: res.Truncated, DurationMS: res.Duration.Milliseconds(), FilesChanged: res.FilesChanged,
		Output: res.Output, Sandboxed: res.Sandboxed}
	switch {
	case ctx.Err() != nil:
		fin.Error = "cancelled while running"
	case err != nil:
		fin.Error = backend.ErrorMessage(err)
		fin.Retryable = backend.ErrorCode(err) == backend.EUNAVAILABLE
	default:
		fin.OK = res.ExitCode == 0 && !res.TimedOut
		fin.Retryable = res.TimedOut
	}
	fin.Stdout, fin.StdoutTail = c.storeOutput(ctx, res.Stdout)
	fin.Stderr, fin.StderrTail = c.storeOutput(ctx, res.Stderr)
	if err := c.append(ctx, st, EvStepFinished, fin); err != nil {
		c.d.Log("record step", "run", st.RunID, "step", stepID, "err", err)
		return
	}
	if ctx.Err() != nil {
		return
	}
	if c.d.Critic != nil {
		crit := c.d.Critic.Evaluate(ctx, critic.Request{Task: st.Request.Task, Step: rec.Node, Result: res,
			Stdout: string(res.Stdout), Stderr: string(res.Stderr), Model: st.Request.Models["critic"]})
		_ = c.append(ctx, st, EvDecision, decisionRecord{Source: "critic", Decision: critic.Decision(crit)})
		_ = c.append(ctx, st, EvCritique, critiquePayload{Step: stepID, Score: crit.Score, Explanation: crit.Explanation,
			Source: crit.Source, Model: crit.Model})
	}
	if !fin.OK && fin.Retryable && attempt <= st.Request.MaxRetries {
		delay := time.Duration(attempt*attempt) * 500 * time.Millisecond
		_ = c.append(ctx, st, EvStepRetrying, stepNote{Step: stepID, Attempt: attempt, Reason: failureSentence(fin), DelayMS: delay.Milliseconds()})
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
	}
	fresh, _, err := c.Load(ctx, st.RunID)
	if err == nil {
		c.checkpoint(ctx, fresh)
	}
}

// outputTail is how much of stdout/stderr an event carries inline; the
// whole (capped) output is a blob.
const outputTail = 2048

func (c *Controller) storeOutput(ctx context.Context, data []byte) (*backend.BlobRef, string) {
	if len(data) == 0 {
		return nil, ""
	}
	tail := data
	if len(tail) > outputTail {
		tail = tail[len(tail)-outputTail:]
	}
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
		Model: st.Request.Models["coder"], OnToken: func(tok string) { c.token(st.RunID, stepID, tok) }})
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
