package world

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"ducklm/backend"
	"ducklm/backend/starlark"
)

// StepOutcome is what one step did.
type StepOutcome struct {
	Run     backend.WorldRun  `json:"run"`
	State   json.RawMessage   `json:"state"`
	Emitted []json.RawMessage `json:"emitted,omitempty"`
	Done    bool              `json:"done"`
}

// Step applies one action (any JSON; null lets the program choose) to a run.
// A program error fails the run with the error's sentence and records it;
// everything recorded before stays.
func (s *Service) Step(ctx context.Context, runID string, action json.RawMessage) (StepOutcome, error) {
	defer s.lockRun(runID)()
	inst, err := s.open(ctx, runID)
	if err != nil {
		return StepOutcome{}, err
	}
	return s.step(ctx, inst, action)
}

// StepBecause is Step whose step event points back (as its causation) to
// the event that decided it: a deliberation's round applies its choice so.
func (s *Service) StepBecause(ctx context.Context, runID string, action json.RawMessage, causationID string) (StepOutcome, error) {
	if causationID != "" {
		if err := backend.CheckID(causationID, backend.KindEvent); err != nil {
			return StepOutcome{}, err
		}
	}
	defer s.lockRun(runID)()
	inst, err := s.open(ctx, runID)
	if err != nil {
		return StepOutcome{}, err
	}
	return s.step(ctx, inst, action, causationID)
}

func (s *Service) step(ctx context.Context, inst *instance, action json.RawMessage, causationID ...string) (StepOutcome, error) {
	out, events, err := s.advance(ctx, inst, action)
	if err != nil {
		return StepOutcome{}, err
	}
	if len(causationID) > 0 {
		events[0].CausationID = causationID[0] // events[0] is the step itself
	}
	if err := s.save(ctx, inst, events, nil); err != nil {
		return StepOutcome{}, err
	}
	out.Run = inst.run
	return out, nil
}

// advance applies one action to the world in memory and returns the events
// that record it, unsaved: the caller saves them, alone or with the next
// steps' (a batch is still one exact record of every step). A program
// error fails the run, recording the failure after the events the caller
// has not saved yet (pending), which are saved first.
func (s *Service) advance(ctx context.Context, inst *instance, action json.RawMessage, pending ...backend.Event) (StepOutcome, []backend.Event, error) {
	return s.advanceAfter(ctx, inst, action, nil, pending...)
}

// advanceAfter is advance for a caller with a save in flight: before it
// records a failure, it calls before (which waits for that save).
func (s *Service) advanceAfter(ctx context.Context, inst *instance, action json.RawMessage, before func() error, pending ...backend.Event) (StepOutcome, []backend.Event, error) {
	if inst.run.Status.Terminal() {
		return StepOutcome{}, nil, backend.Errorf(backend.EINVALID, "run %s is %s; fork it to continue from one of its checkpoints", inst.run.ID, inst.run.Status)
	}
	action, err := s.checkAction(action)
	if err != nil {
		return StepOutcome{}, nil, err
	}
	res, err := inst.world.Step(ctx, action)
	if err != nil {
		if ctx.Err() != nil {
			return StepOutcome{}, nil, err // cancelled by the caller: the run stays open
		}
		if before != nil {
			if berr := before(); berr != nil {
				return StepOutcome{}, nil, berr
			}
		}
		if len(pending) > 0 {
			if serr := s.save(context.WithoutCancel(ctx), inst, pending, nil); serr != nil {
				return StepOutcome{}, nil, serr
			}
		}
		if refused := s.refusal(ctx, inst, action, err); refused != nil {
			return StepOutcome{}, nil, refused // bad input: the run stays as it was
		}
		s.fail(ctx, inst, err)
		return StepOutcome{}, nil, err
	}
	events := s.stepEvents(inst, action, res)
	return StepOutcome{Run: inst.run, State: res.State, Emitted: res.Emitted, Done: res.Done}, events, nil
}

// advanceMany is advanceAfter for up to n steps of one action, taken in one
// exchange with the program's worker: it returns the outcome of the last
// step taken, the events of every one and how many were taken. On an error the steps before the
// failing one are kept: their events are returned with a cancel (the
// caller saves them), and saved before the failure is recorded otherwise.
func (s *Service) advanceMany(ctx context.Context, inst *instance, action json.RawMessage, n int, before func() error, pending ...backend.Event) (StepOutcome, []backend.Event, int, error) {
	if n <= 1 {
		out, events, err := s.advanceAfter(ctx, inst, action, before, pending...)
		if err != nil {
			return out, nil, 0, err
		}
		return out, events, 1, nil
	}
	if inst.run.Status.Terminal() {
		return StepOutcome{}, nil, 0, backend.Errorf(backend.EINVALID, "run %s is %s; fork it to continue from one of its checkpoints", inst.run.ID, inst.run.Status)
	}
	action, err := s.checkAction(action)
	if err != nil {
		return StepOutcome{}, nil, 0, err
	}
	results, err := inst.world.StepMany(ctx, action, n)
	var out StepOutcome
	var events []backend.Event
	for _, res := range results {
		events = append(events, s.stepEvents(inst, action, res)...)
		out = StepOutcome{Run: inst.run, State: res.State, Emitted: res.Emitted, Done: res.Done}
	}
	if err != nil {
		if ctx.Err() != nil {
			return out, events, len(results), err // cancelled by the caller: the run stays open
		}
		if before != nil {
			if berr := before(); berr != nil {
				return StepOutcome{}, nil, 0, berr
			}
		}
		if all := append(pending[:len(pending):len(pending)], events...); len(all) > 0 {
			if serr := s.save(context.WithoutCancel(ctx), inst, all, nil); serr != nil {
				return StepOutcome{}, nil, 0, serr
			}
		}
		if refused := s.refusal(ctx, inst, action, err); refused != nil {
			// The steps before the refused one are kept (saved above);
			// the refused one is the caller's error, not the run's.
			return StepOutcome{}, nil, 0, refused
		}
		s.fail(ctx, inst, err)
		return StepOutcome{}, nil, 0, err
	}
	return out, events, len(results), nil
}

// checkAction is the action a caller chose, as the program will get it, or
// the caller's error for one no program could take (not JSON, or larger
// than a state may be): nothing is stepped or recorded then.
func (s *Service) checkAction(action json.RawMessage) (json.RawMessage, error) {
	action = actionOrNull(action)
	if !json.Valid(action) {
		return nil, backend.Errorf(backend.EINVALID, "the action is not valid JSON")
	}
	if max := s.Limits().MaxStateBytes; len(action) > max {
		return nil, backend.Errorf(backend.EINVALID, "the action is %d bytes, more than the %d a world program takes; nothing was recorded", len(action), max)
	}
	return action, nil
}

// refusal tells a bad action from a failing program, after step raised
// cause on action. An action the caller chose (not null) that the program
// raised on is the caller's error when the program says it is not one it
// takes: actions(state) does not list it, or, for a program without
// actions(state), step called fail() on it (a deliberate refusal, not a
// type error or a division by zero). That error is returned (EINVALID,
// nothing recorded, the run as it was: a failed step leaves the world in
// memory unchanged). It is nil when the run should fail: a null action
// (the program chose), a limit or a crash, or the program's own error on
// an action it takes.
func (s *Service) refusal(ctx context.Context, inst *instance, action json.RawMessage, cause error) error {
	if backend.ErrorCode(cause) != backend.EINVALID || string(compactJSON(action)) == "null" || inst.world.Done() {
		return nil
	}
	if !inst.world.HasActions() {
		if !errors.Is(cause, starlark.ErrRaised) {
			return nil
		}
	} else {
		offered, err := inst.world.Actions(ctx)
		if err != nil {
			return nil
		}
		want, err := starlark.CanonicalJSON(action, s.Limits().MaxStateBytes)
		if err != nil {
			return nil
		}
		for _, a := range offered {
			if bytes.Equal(a, want) {
				return nil
			}
		}
	}
	return backend.Wrap(cause, backend.EINVALID, "the world program refused the action, so nothing was recorded and run %s is as it was: %s",
		inst.run.ID, backend.ErrorMessage(cause))
}

// stepEvents records a step the world in memory has taken: the step, what
// the program emitted, and the completion when it made the world done (which
// also marks inst's run completed).
func (s *Service) stepEvents(inst *instance, action json.RawMessage, res backend.StepResult) []backend.Event {
	compact, _ := json.Marshal(json.RawMessage(action))
	stepEvent := s.event(inst, EventStep, stepPayload{
		Action: compact, StateDigest: digest(res.State), Emitted: len(res.Emitted), Done: res.Done,
	})
	stepEvent.ID = backend.NewID(backend.KindEvent)
	events := []backend.Event{stepEvent}
	for _, payload := range res.Emitted {
		e := s.event(inst, EventEmitted, nil)
		e.Payload = payload
		e.CausationID = stepEvent.ID // what the program emitted points back to its step
		events = append(events, e)
	}
	if res.Done {
		inst.run.Status = backend.RunCompleted
		events = append(events, s.event(inst, EventCompleted, map[string]any{"stateDigest": digest(res.State)}))
	}
	for i := range events {
		// The step's own time: a batch of steps has moved the world past
		// every step but its last.
		events[i].WorldLocalTime = res.WorldLocalTime
	}
	return events
}

// fail records a run's failure. The in-memory world is unchanged (a failed
// step is atomic), so the record holds exactly what happened before.
func (s *Service) fail(ctx context.Context, inst *instance, cause error) {
	inst.run.Status = backend.RunFailed
	inst.run.Error = backend.ErrorMessage(cause)
	e := s.event(inst, EventFailed, map[string]any{"error": inst.run.Error, "code": backend.ErrorCode(cause)})
	_ = s.save(context.WithoutCancel(ctx), inst, []backend.Event{e}, nil)
}

// RunOptions drive several steps.
type RunOptions struct {
	Steps           int
	Action          json.RawMessage // the same action every step; null lets the program choose
	CheckpointEvery int             // 0 = only at the end
	// SaveEvery saves the steps' events together every this many steps (one
	// transaction each); 0 is DefaultSaveEvery, 1 saves each step alone.
	// Checkpoints, the end, a failure and a cancel always save what is
	// pending, in the same transaction as the checkpoint.
	SaveEvery int
	// Progress is told how many steps are saved (durable) so far, after
	// each save: a step is acknowledged once it is reported here or
	// RunSteps returns, never before.
	Progress func(saved, total int)
}

// DefaultSaveEvery is how many steps RunSteps saves in one transaction when
// the caller does not say: a durable commit costs about as much as 100
// steps of a small world.
const DefaultSaveEvery = 100

// RunSteps applies up to opts.Steps steps, stopping early when the world is
// done, and checkpoints every CheckpointEvery steps and at the end.
func (s *Service) RunSteps(ctx context.Context, runID string, opts RunOptions) (StepOutcome, error) {
	if opts.Steps <= 0 {
		return StepOutcome{}, backend.Errorf(backend.EINVALID, "the number of steps must be positive, not %d", opts.Steps)
	}
	if opts.SaveEvery <= 0 {
		opts.SaveEvery = DefaultSaveEvery
	}
	defer s.MarkStepping(runID)()
	defer s.lockRun(runID)()
	inst, err := s.open(ctx, runID)
	if err != nil {
		return StepOutcome{}, err
	}
	var out StepOutcome
	var pending []backend.Event
	saved := 0
	// One batch's commit (with its checkpoint blob) runs while the next
	// batch is computed: at most one is in flight, and everything that
	// reads the run's head or saves waits for it first. A step is reported
	// (acknowledged) only once its commit returned.
	type result struct {
		head int64
		err  error
	}
	var inflight chan result
	inflightDone := 0
	wait := func() error {
		if inflight == nil {
			return nil
		}
		r := <-inflight
		inflight = nil
		if r.err != nil {
			s.forget(runID) // the world in memory is ahead of what is stored
			return r.err
		}
		if r.head > 0 {
			inst.head = r.head
		}
		if inflightDone > saved {
			saved = inflightDone
			if opts.Progress != nil {
				opts.Progress(saved, opts.Steps)
			}
		}
		return nil
	}
	defer func() { _ = wait() }() // no save outlives the call (and its lock on the run)
	// flush starts saving the pending steps' events, with a checkpoint of
	// the state after them when cp is set: one commit either way.
	// putState starts writing a checkpoint's blob; the channel answers
	// when it is durable.
	putState := func(ctx context.Context) ([]byte, chan error, error) {
		data, err := inst.world.CheckpointBytes()
		if err != nil {
			return nil, nil, err
		}
		put := make(chan error, 1)
		go func() {
			_, err := s.blobs.Put(ctx, data, "application/json")
			put <- err
		}()
		return data, put, nil
	}
	flush := func(ctx context.Context, done int, cp bool) error {
		// A checkpoint's blob is written while the commit before it
		// finishes: the two durable writes overlap, and the blob is still
		// durable before the commit that names it.
		var state []byte
		var put chan error
		if cp && len(pending) > 0 {
			var err error
			if state, put, err = putState(ctx); err != nil {
				return err
			}
		}
		if err := wait(); err != nil {
			if put != nil {
				<-put // no write outlives the call
			}
			return err
		}
		if cp && len(pending) == 0 && inst.run.LatestCheckpointID != "" {
			// Nothing moved since the last save: the run may have it.
			if _, err := s.checkpoint(ctx, inst); err != nil {
				return err
			}
			inflightDone = done
			return nil
		}
		if !cp && len(pending) == 0 {
			return nil
		}
		events := pending
		pending = nil // the saved events may still be read by those they were published to
		var rec *backend.Checkpoint
		if cp {
			if state == nil { // a checkpoint with nothing pending (of a run without one yet)
				var err error
				if state, put, err = putState(ctx); err != nil {
					return err
				}
			}
			c, e := s.checkpointRecord(inst, state)
			inst.run.LatestCheckpointID = c.ID
			events = append(events, e)
			rec = &c
		}
		inst.run.WorldLocalTime = inst.world.Time()
		inst.run.UpdatedAt = s.now().UTC()
		run, expect := inst.run, inst.head
		ch := make(chan result, 1)
		go func() {
			if put != nil {
				// The blob is durable before the commit that names it.
				if err := <-put; err != nil {
					ch <- result{err: err}
					return
				}
			}
			stored, err := s.store.SaveRun(ctx, run, expect, events, rec)
			var head int64
			if len(stored) > 0 {
				head = stored[len(stored)-1].Seq
			}
			ch <- result{head: head, err: err}
		}()
		inflight, inflightDone = ch, done
		return nil
	}
	finish := func(ctx context.Context, done int, cp bool) error {
		if err := flush(ctx, done, cp); err != nil {
			return err
		}
		return wait()
	}
	// Steps are taken in batches that end where a save or a checkpoint
	// falls (one exchange with the program's worker per batch), so every
	// save and checkpoint is where it was when steps were taken one by one.
	next := func(i int) int { // the step after i where a batch ends
		j := min(opts.Steps, (i/opts.SaveEvery+1)*opts.SaveEvery)
		if ce := opts.CheckpointEvery; ce > 0 {
			j = min(j, (i/ce+1)*ce)
		}
		return j
	}
	for i := 0; i < opts.Steps; {
		if inflight != nil && opts.SaveEvery == 1 {
			if err := wait(); err != nil {
				return out, err
			}
		}
		res, events, taken, err := s.advanceMany(ctx, inst, opts.Action, next(i)-i, wait, pending...)
		if taken > 0 {
			out = res
		}
		pending = append(pending, events...)
		i += taken
		if err != nil {
			if ctx.Err() != nil {
				// Steps applied before the cancel are kept; the world in
				// memory is then exactly what is recorded.
				if ferr := finish(context.WithoutCancel(ctx), i, false); ferr != nil {
					return out, ferr
				}
			}
			return out, err
		}
		last := i == opts.Steps || out.Done
		cp := last || (opts.CheckpointEvery > 0 && i%opts.CheckpointEvery == 0)
		if cp || i%opts.SaveEvery == 0 {
			if err := flush(ctx, i, cp); err != nil {
				return out, err
			}
		}
		if last {
			if err := wait(); err != nil {
				return out, err
			}
		}
		out.Run = inst.run
		if out.Done {
			break
		}
	}
	out.Run = inst.run
	return out, nil
}

// Checkpoint takes an exact checkpoint of a run's current state.
func (s *Service) Checkpoint(ctx context.Context, runID string) (backend.Checkpoint, error) {
	defer s.lockRun(runID)()
	inst, err := s.open(ctx, runID)
	if err != nil {
		return backend.Checkpoint{}, err
	}
	return s.checkpoint(ctx, inst)
}

func (s *Service) checkpoint(ctx context.Context, inst *instance) (backend.Checkpoint, error) {
	// A run that has not moved since its latest checkpoint already has it.
	if inst.run.LatestCheckpointID != "" {
		if last, err := s.store.GetCheckpoint(ctx, inst.run.LatestCheckpointID); err == nil && last.RunID == inst.run.ID && last.LedgerSeq == inst.head {
			return last, nil
		}
	}
	cp, e, err := s.snapshot(ctx, inst)
	if err != nil {
		return backend.Checkpoint{}, err
	}
	prev := inst.run.LatestCheckpointID
	inst.run.LatestCheckpointID = cp.ID
	if err := s.save(ctx, inst, []backend.Event{e}, &cp); err != nil {
		inst.run.LatestCheckpointID = prev
		return backend.Checkpoint{}, err
	}
	cp.LedgerSeq = inst.head
	return cp, nil
}

// State returns a run's current state (canonical JSON for simulated
// worlds; the registered reader's JSON for other backends).
func (s *Service) State(ctx context.Context, runID string) (json.RawMessage, error) {
	if run, err := s.store.GetRun(ctx, runID); err == nil {
		if spec, err := s.store.GetSpec(ctx, run.WorldID); err == nil && spec.Backend != BackendStarlark {
			if fn := s.stateOf[spec.Backend]; fn != nil {
				return fn(ctx, runID)
			}
		}
	}
	defer s.lockRun(runID)()
	inst, err := s.open(ctx, runID)
	if err != nil {
		return nil, err
	}
	return inst.world.State(), nil
}

// Observe returns what role sees of a run's current state.
func (s *Service) Observe(ctx context.Context, runID, role string) (json.RawMessage, error) {
	defer s.lockRun(runID)()
	inst, err := s.open(ctx, runID)
	if err != nil {
		return nil, err
	}
	return inst.world.Observe(ctx, role)
}
