package starlark

import (
	"context"
	"encoding/json"
	"math"

	"ducklm/backend"

	sl "go.starlark.net/starlark"
)

// A world program may also describe its choices and its goal, for a search
// that deliberates over forks of the world:
//
//	def actions(state):     # the legal actions in state, a list of JSON values
//	    return [...]        # (empty when nothing is left to choose)
//	def score(state):       # how good state is: a number, higher is better
//	    return 0.0
//
// Both are optional and get no rng: asking never changes a world, so a
// search may ask as often as it likes without moving a branch's RNG.

// HasActions reports whether the program defines actions(state).
func (p *Program) HasActions() bool { return p.shape.Actions }

// HasActions reports whether the world's program defines actions(state).
func (w *World) HasActions() bool { return w.prog.HasActions() }

// HasScore reports whether the program defines score(state).
func (p *Program) HasScore() bool { return p.shape.Score }

// optional finds an optional function; absent is fine, present but not
// callable as signature is a compile error.
func (p *Program) optional(globals sl.StringDict, name, signature string, n int) (sl.Callable, error) {
	if _, ok := globals[name]; !ok {
		return nil, nil
	}
	return p.entry(globals, name, signature, n, n)
}

// Actions returns the canonical JSON of each action actions(state) lists,
// in the program's order. It never changes the world.
func (w *World) Actions(ctx context.Context) ([]json.RawMessage, error) {
	if !w.prog.HasActions() {
		return nil, backend.Errorf(backend.EINVALID, "the world program does not define actions(state), so it offers nothing to choose from")
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	r, err := w.prog.eval(ctx, Call{Func: "actions", State: w.state})
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(r.Actions))
	for i, a := range r.Actions {
		out[i] = a
	}
	return out, nil
}

// Score returns score(state) as a float: higher is better. It never changes
// the world.
func (w *World) Score(ctx context.Context) (float64, error) {
	if !w.prog.HasScore() {
		return 0, backend.Errorf(backend.EINVALID, "the world program does not define score(state), so its states cannot be compared")
	}
	if err := w.check(); err != nil {
		return 0, err
	}
	r, err := w.prog.eval(ctx, Call{Func: "score", State: w.state})
	if err != nil {
		return 0, err
	}
	if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) {
		return 0, backend.Errorf(backend.EINTERNAL, "the world program's worker answered score with a number that is not finite")
	}
	return r.Score, nil
}
