package starlark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"

	"ducklm/backend"

	sl "go.starlark.net/starlark"
)

// World is one instance of a world program: its state, RNG, clock and
// terminal flag. It is not safe for concurrent use (the caller serialises
// calls, as backend.WorldBackend requires); distinct worlds of one Program
// may run in parallel.
//
// The state is kept as canonical JSON bytes, not as Starlark values, and
// decoded afresh for every call. That costs a parse per call but buys three
// things: a program may mutate the state it is given without touching the
// world, a failed call leaves nothing half-changed, and a restored world sees
// exactly the bytes the original saw (dict order included).
//
// step's return value may take three shapes:
//
//	return state                   # no events, not done
//	return state, events           # events: a list of JSON values (or None)
//	return state, events, done     # done: a bool; True makes the world terminal
//
// Each event becomes one StepResult.Emitted payload, in order. Because a
// returned tuple means this, a state that is an array must be a list.
//
// init(seed) receives the seed as an int; if init accepts a second
// positional parameter it also receives the rng, and its draws advance the
// RNG that step then continues from. observe(state, role) gets no rng, so
// observing never changes a world.
type World struct {
	prog       *Program
	state      []byte // canonical JSON, the source of truth
	rng        rand.PCG
	seed       uint64
	time       int64
	done       bool
	ready      bool // Initialize or RestoreBytes succeeded
	terminated bool
}

var _ backend.WorldBackend = (*World)(nil)

// Capabilities reports that the world is deterministic, checkpoints exactly
// and observes per role.
func (w *World) Capabilities() backend.BackendCapabilities {
	return backend.BackendCapabilities{Deterministic: true, Checkpoint: true, Observe: true}
}

// Initialize runs init(seed) with an RNG seeded by [SeedPCG] and makes its
// result the state at time 0. It may be called again to start over; on
// error the world is unchanged.
func (w *World) Initialize(ctx context.Context, seed uint64) (json.RawMessage, error) {
	if w.terminated {
		return nil, errTerminated()
	}
	r, err := w.prog.evalChecked(ctx, Call{Func: "init", Seed: seed})
	if err != nil {
		return nil, err
	}
	var pcg rand.PCG
	_ = pcg.UnmarshalBinary(r.RNG) // checked by evalChecked
	state := r.State
	w.state, w.rng, w.seed, w.time, w.done, w.ready = state, pcg, seed, 0, false, true
	return bytes.Clone(state), nil
}

// Step runs step(state, action, rng) and, only if everything succeeds,
// commits the new state, the advanced RNG and time+1. An empty action means
// JSON null. Stepping a terminal world fails with EINVALID.
func (w *World) Step(ctx context.Context, action json.RawMessage) (backend.StepResult, error) {
	if err := w.check(); err != nil {
		return backend.StepResult{}, err
	}
	if w.done {
		return backend.StepResult{}, backend.Errorf(backend.EINVALID, "world is terminal; it accepts no more steps")
	}
	action, err := w.actionOf(action)
	if err != nil {
		return backend.StepResult{}, err
	}
	rng, err := w.rng.MarshalBinary()
	if err != nil {
		return backend.StepResult{}, backend.Wrap(err, backend.EINTERNAL, "world RNG could not be saved")
	}
	r, err := w.prog.evalChecked(ctx, Call{Func: "step", State: w.state, Action: action, RNG: rng})
	if err != nil {
		return backend.StepResult{}, err
	}
	var pcg rand.PCG
	_ = pcg.UnmarshalBinary(r.RNG) // checked by evalChecked
	out := backend.StepResult{State: r.State, Done: r.Done}
	for _, e := range r.Emitted {
		out.Emitted = append(out.Emitted, e)
	}
	w.state, w.rng, w.time, w.done = out.State, pcg, w.time+1, out.Done
	out.WorldLocalTime = w.time
	out.State = bytes.Clone(out.State)
	return out, nil
}

// actionOf is a step's action as it is sent: JSON null when empty, within
// the limit of a state.
func (w *World) actionOf(action json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(action)) == 0 {
		action = json.RawMessage("null")
	}
	if max := w.prog.limits.MaxStateBytes; len(action) > max {
		return nil, backend.Errorf(backend.ELIMIT, "action is %d bytes, more than the limit of %d", len(action), max)
	}
	return action, nil
}

// StepMany takes up to n steps of one action, as n calls of Step would
// (byte for byte: the same states, events, RNG and clock), stopping after a
// step that makes the world done. A Runner takes them in one exchange (a
// few, for large states) instead of n, each step still under the limits of
// a step. It returns the steps taken; on an error, the steps before the
// failing one are taken and returned with it, and the world stands after
// them, exactly as if Step had been called until it failed.
func (w *World) StepMany(ctx context.Context, action json.RawMessage, n int) ([]backend.StepResult, error) {
	if n <= 1 {
		res, err := w.Step(ctx, action)
		if err != nil {
			return nil, err
		}
		return []backend.StepResult{res}, nil
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	if w.done {
		return nil, backend.Errorf(backend.EINVALID, "world is terminal; it accepts no more steps")
	}
	action, err := w.actionOf(action)
	if err != nil {
		return nil, err
	}
	out := make([]backend.StepResult, 0, n)
	for len(out) < n && !w.done {
		rng, err := w.rng.MarshalBinary()
		if err != nil {
			return out, backend.Wrap(err, backend.EINTERNAL, "world RNG could not be saved")
		}
		r, err := w.prog.evalChecked(ctx, Call{Func: "steps", State: w.state, Action: action, RNG: rng, Count: n - len(out)})
		if err != nil {
			if errors.Is(err, ErrCallLost) && ctx.Err() == nil && n-len(out) > 1 {
				// The worker died somewhere in the batch: what it had
				// done is lost, so the steps are taken again one by one
				// and the one that fails fails alone.
				for len(out) < n && !w.done {
					res, err := w.Step(ctx, action)
					if err != nil {
						return out, err
					}
					out = append(out, res)
				}
				return out, nil
			}
			return out, err
		}
		var pcg rand.PCG
		_ = pcg.UnmarshalBinary(r.RNG) // checked by evalChecked
		for _, st := range r.Steps {
			w.time++
			out = append(out, st.result(w.time))
		}
		last := r.Steps[len(r.Steps)-1]
		w.state, w.rng, w.done = last.State, pcg, last.Done
		out[len(out)-1].State = bytes.Clone(last.State) // the world keeps its own
	}
	return out, nil
}

// Observe returns the canonical JSON of observe(state, role). It never
// changes the world.
func (w *World) Observe(ctx context.Context, role string) (json.RawMessage, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	r, err := w.prog.eval(ctx, Call{Func: "observe", State: w.state, Role: role})
	if err != nil {
		return nil, err
	}
	return r.Value, nil
}

// ReplaceState swaps in a new state without a step: the clock, RNG and done
// flag stay as they are. It is how a fork diverges by a state patch (say, a
// different "noise"). The state is canonicalized and must fit the size limit;
// on error the world is unchanged.
func (w *World) ReplaceState(state json.RawMessage) error {
	if err := w.check(); err != nil {
		return err
	}
	v, err := decodeJSON(state)
	if err != nil {
		return backend.Errorf(backend.EINVALID, "replacement state is not valid JSON: %v", err)
	}
	b, cerr := encodeJSON(v, w.prog.limits.MaxStateBytes)
	if cerr != nil {
		if cerr.tooLarge {
			return backend.Errorf(backend.ELIMIT, "replacement state is larger than the limit of %d bytes of canonical JSON", w.prog.limits.MaxStateBytes)
		}
		return backend.Errorf(backend.EINVALID, "replacement state is not JSON: %s", cerr)
	}
	if b[0] != '{' {
		return backend.Errorf(backend.EINVALID, "replacement state is %s; a state is a JSON object", jsonKind(b))
	}
	w.state = b
	return nil
}

// State returns the canonical JSON of the current state (nil before the
// world is initialized or after it is terminated).
func (w *World) State() json.RawMessage { return bytes.Clone(w.state) }

// Time returns the world-local time: the number of steps since init.
func (w *World) Time() int64 { return w.time }

// Done reports whether the program declared the world terminal.
func (w *World) Done() bool { return w.done }

// Seed returns the seed the world was initialized with.
func (w *World) Seed() uint64 { return w.seed }

// Terminate releases the world's state; every later call fails with EINVALID.
// Terminating twice is harmless.
func (w *World) Terminate() error {
	w.terminated = true
	w.state = nil
	return nil
}

func errTerminated() error {
	return backend.Errorf(backend.EINVALID, "world terminated")
}

func (w *World) check() error {
	if w.terminated {
		return errTerminated()
	}
	if !w.ready {
		return backend.Errorf(backend.EINVALID, "world is not initialized; call Initialize or restore a checkpoint first")
	}
	return nil
}

// stepResult takes apart step's return value (see World) and encodes it.
func (p *Program) stepResult(v sl.Value) (backend.StepResult, error) {
	var out backend.StepResult
	stateV := v
	var eventsV sl.Value = sl.None
	if t, ok := v.(sl.Tuple); ok {
		if len(t) != 2 && len(t) != 3 {
			return out, backend.Errorf(backend.EINVALID,
				"%s: step returned a tuple of %d items; expected state, (state, events) or (state, events, done)",
				p.where(defLine(p.step)), len(t))
		}
		stateV, eventsV = t[0], t[1]
		if len(t) == 3 {
			done, ok := t[2].(sl.Bool)
			if !ok {
				return out, backend.Errorf(backend.EINVALID, "%s: step returned done as a %s; expected True or False",
					p.where(defLine(p.step)), t[2].Type())
			}
			out.Done = bool(done)
		}
	}
	state, err := p.encodeResult(stateV, "step", p.step, "state", "a state")
	if err != nil {
		return out, err
	}
	if err := p.mustBeObject(state, "step", p.step); err != nil {
		return out, err
	}
	out.State = state

	var events []sl.Value
	switch ev := eventsV.(type) {
	case sl.NoneType:
	case *sl.List:
		for i := range ev.Len() {
			events = append(events, ev.Index(i))
		}
	case sl.Tuple:
		events = ev
	default:
		return out, backend.Errorf(backend.EINVALID, "%s: step returned events as a %s; expected a list",
			p.where(defLine(p.step)), eventsV.Type())
	}
	budget := p.limits.MaxStateBytes
	for i, e := range events {
		var b []byte
		cerr := &convError{tooLarge: true} // a zero budget would mean "no limit" to encodeJSON
		if budget > 0 {
			b, cerr = encodeJSON(e, budget)
		}
		if cerr != nil {
			return out, p.resultError(cerr, "step", p.step, "events["+strconv.Itoa(i)+"]", "events")
		}
		budget -= len(b)
		out.Emitted = append(out.Emitted, b)
	}
	return out, nil
}

// mustBeObject refuses a state that is not a JSON object: a bare number or
// list cannot take a state patch, nor be told apart from a program's
// mistake (returning the action, or a score, instead of the state).
func (p *Program) mustBeObject(state []byte, what string, fn sl.Callable) error {
	if len(state) > 0 && state[0] == '{' {
		return nil
	}
	return backend.Errorf(backend.EINVALID, "%s: %s returned %s as the state; a state is a dict (a JSON object)",
		p.where(defLine(fn)), what, jsonKind(state))
}

// jsonKind names the JSON value canonical bytes hold.
func jsonKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '[':
		return "a list"
	case b[0] == '"':
		return "a string"
	case b[0] == 'n':
		return "None"
	case b[0] == 't' || b[0] == 'f':
		return "a bool"
	}
	return "a number"
}

// encodeResult turns what a call returned into canonical JSON under the size
// limit; root names the value in messages ("state", "observation").
func (p *Program) encodeResult(v sl.Value, what string, fn sl.Callable, root, noun string) ([]byte, error) {
	b, cerr := encodeJSON(v, p.limits.MaxStateBytes)
	if cerr != nil {
		return nil, p.resultError(cerr, what, fn, root, noun)
	}
	return b, nil
}

func (p *Program) resultError(cerr *convError, what string, fn sl.Callable, root, noun string) error {
	where := p.where(defLine(fn))
	if cerr.tooLarge {
		return backend.Errorf(backend.ELIMIT, "%s: %s returned %s larger than the limit of %d bytes of canonical JSON",
			where, what, noun, p.limits.MaxStateBytes)
	}
	return backend.Errorf(backend.EINVALID, "%s: %s returned a value that is not JSON: %s (at %s%s)",
		where, what, cerr.what, root, cerr.path)
}
