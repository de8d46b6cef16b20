package starlark

import (
	"context"
	"encoding/json"
	"math"
	"strconv"

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
func (p *Program) HasActions() bool { return p.actions != nil }

// HasScore reports whether the program defines score(state).
func (p *Program) HasScore() bool { return p.score != nil }

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
	p := w.prog
	if p.actions == nil {
		return nil, backend.Errorf(backend.EINVALID, "the world program does not define actions(state), so it offers nothing to choose from")
	}
	v, err := w.ask(ctx, "actions", p.actions)
	if err != nil {
		return nil, err
	}
	var items []sl.Value
	switch l := v.(type) {
	case *sl.List:
		for i := range l.Len() {
			items = append(items, l.Index(i))
		}
	case sl.Tuple:
		items = l
	default:
		return nil, backend.Errorf(backend.EINVALID, "%s: actions returned a %s; expected a list of actions",
			p.where(defLine(p.actions)), v.Type())
	}
	out := make([]json.RawMessage, 0, len(items))
	budget := p.limits.MaxStateBytes
	for i, item := range items {
		b, cerr := encodeJSON(item, budget)
		if cerr != nil {
			return nil, p.resultError(cerr, "actions", p.actions, "actions["+strconv.Itoa(i)+"]", "actions")
		}
		budget -= len(b)
		if budget <= 0 {
			return nil, p.resultError(&convError{tooLarge: true}, "actions", p.actions, "actions", "actions")
		}
		out = append(out, b)
	}
	return out, nil
}

// Score returns score(state) as a float: higher is better. It never changes
// the world.
func (w *World) Score(ctx context.Context) (float64, error) {
	p := w.prog
	if p.score == nil {
		return 0, backend.Errorf(backend.EINVALID, "the world program does not define score(state), so its states cannot be compared")
	}
	v, err := w.ask(ctx, "score", p.score)
	if err != nil {
		return 0, err
	}
	var f float64
	switch n := v.(type) {
	case sl.Int:
		f = float64(n.Float())
	case sl.Float:
		f = float64(n)
	default:
		return 0, backend.Errorf(backend.EINVALID, "%s: score returned a %s; expected a number", p.where(defLine(p.score)), v.Type())
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, backend.Errorf(backend.EINVALID, "%s: score returned %s; expected a finite number",
			p.where(defLine(p.score)), map[bool]string{true: "NaN", false: "an infinity"}[math.IsNaN(f)])
	}
	return f, nil
}

// ask calls fn(state) on a copy of the state.
func (w *World) ask(ctx context.Context, what string, fn sl.Callable) (sl.Value, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	state, err := w.decodeState()
	if err != nil {
		return nil, err
	}
	return w.prog.call(ctx, what, func(th *sl.Thread) (sl.Value, error) {
		return sl.Call(th, fn, sl.Tuple{state}, nil)
	})
}
