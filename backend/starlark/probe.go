package starlark

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"

	"ducklm/backend"
)

// Probed is what [World.Probe] found: the steps taken, and the actions and
// the score of where they led when asked.
type Probed struct {
	Steps  []backend.StepResult
	Next   []json.RawMessage // when Asked
	Asked  bool
	Score  float64 // when Judged
	Judged bool
}

// maxProbeMoves bounds the steps one probe takes; a longer branch takes
// them with Step.
const maxProbeMoves = 64

// Probe takes a step of each of moves until the world is done (as Step
// would, byte for byte), then lists the actions where they led (when ask,
// the world not done) and scores it (when judge), all in ONE exchange with
// the program's runner instead of one a call: a deliberation branch's whole
// computation. Whatever goes wrong — a step, actions or score failing, a
// branch too long or states too large for one answer — it returns an
// error and leaves the world as it was: the caller then takes the calls one
// by one (Step, Actions, Score), which fail exactly where and as they would
// have, since a world program's calls are functions of what they are given.
func (w *World) Probe(ctx context.Context, moves []json.RawMessage, ask, judge bool) (Probed, error) {
	if err := w.check(); err != nil {
		return Probed{}, err
	}
	if w.done {
		return Probed{}, backend.Errorf(backend.EINVALID, "world is terminal; it accepts no more steps")
	}
	if ask && !w.prog.HasActions() || judge && !w.prog.HasScore() {
		return Probed{}, backend.Errorf(backend.EINVALID, "the world program does not define what the probe asks for")
	}
	if len(moves) == 0 || len(moves) > maxProbeMoves || len(w.state)*(len(moves)+1) > maxStepsReplyBytes {
		return Probed{}, backend.Errorf(backend.ELIMIT, "a probe takes 1 to %d steps of states within %d bytes in all", maxProbeMoves, maxStepsReplyBytes)
	}
	c := Call{Func: "branch", State: w.state, Ask: ask, Judge: judge, Moves: make([][]byte, len(moves))}
	for i, a := range moves {
		a, err := w.actionOf(a)
		if err != nil {
			return Probed{}, err
		}
		c.Moves[i] = a
	}
	rng, err := w.rng.MarshalBinary()
	if err != nil {
		return Probed{}, backend.Wrap(err, backend.EINTERNAL, "world RNG could not be saved")
	}
	c.RNG = rng
	r, err := w.prog.evalChecked(ctx, c)
	if err != nil {
		return Probed{}, err
	}
	var pcg rand.PCG
	_ = pcg.UnmarshalBinary(r.RNG) // checked by evalChecked
	out := Probed{Asked: r.Asked, Judged: r.Judged, Score: r.Score}
	t := w.time
	for _, st := range r.Steps {
		t++
		res := st.result(t)
		res.State = bytes.Clone(st.State) // the world keeps its own
		out.Steps = append(out.Steps, res)
	}
	if r.Asked {
		out.Next = make([]json.RawMessage, len(r.Actions))
		for i, a := range r.Actions {
			out.Next[i] = a
		}
	}
	last := r.Steps[len(r.Steps)-1]
	w.state, w.rng, w.time, w.done = last.State, pcg, t, last.Done
	return out, nil
}

// evalBranch is a "branch" call: its steps, then actions and score where
// they led. It fails as soon as one of them fails; what failed is then
// found by the calls one by one (see Probe).
func (p *Program) evalBranch(ctx context.Context, c Call) (Reply, error) {
	if len(c.Moves) == 0 {
		return Reply{}, backend.Errorf(backend.EINTERNAL, "world program was asked for a branch of no steps")
	}
	state, rng := c.State, c.RNG
	var out Reply
	done := false
	for _, a := range c.Moves {
		if done {
			break
		}
		r, err := p.evalStep(ctx, Call{Func: "step", State: state, Action: a, RNG: rng})
		if err != nil {
			return Reply{}, err
		}
		out.Steps = append(out.Steps, StepReply{State: r.State, Emitted: r.Emitted, Done: r.Done})
		state, rng, done = r.State, r.RNG, r.Done
	}
	if c.Ask && !done {
		list, err := p.evalActions(ctx, state)
		if err != nil {
			return Reply{}, err
		}
		out.Actions, out.Asked = list, true
	}
	if c.Judge {
		f, err := p.evalScore(ctx, state)
		if err != nil {
			return Reply{}, err
		}
		out.Score, out.Judged = f, true
	}
	out.State, out.RNG = state, rng
	return out, nil
}
