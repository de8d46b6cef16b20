package starlark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"ducklm/backend"

	sl "go.starlark.net/starlark"
)

// Call is one call into a world program as plain data, so that it can cross
// a process boundary: a [Runner] may evaluate it in another process, under a
// memory limit no in-process check can give. The world that makes it keeps
// its state; a call only reads what it is given and returns what changed.
type Call struct {
	// Func is "init", "step", "steps", "branch", "observe", "actions" or
	// "score". "steps" is Count steps of one action in one call, each under
	// the limits of a step (see [Reply.Steps]). "branch" is a step of each
	// of Moves until the world is done, then actions (Ask) and score
	// (Judge) of where they led, in one call (see [World.Probe]).
	Func string
	// Seed is init's seed.
	Seed uint64
	// State is the canonical JSON of the state (every call but init).
	State []byte
	// Action is step's action, JSON.
	Action []byte
	// Role is observe's role.
	Role string
	// RNG is the PCG step draws from (PCG.MarshalBinary).
	RNG []byte
	// Count is how many steps "steps" takes at most.
	Count int
	// Moves are the actions of a "branch" call's steps, in order.
	Moves [][]byte
	// Ask and Judge make a "branch" call end with actions and score.
	Ask, Judge bool
}

// Reply is what a Call returned, canonical JSON throughout.
type Reply struct {
	State   []byte   // init, step
	Emitted [][]byte // step
	Done    bool     // step
	RNG     []byte   // init, step: the PCG after the call
	Value   []byte   // observe
	Actions [][]byte // actions
	Score   float64  // score
	// Steps are what each step of a "steps" call did, in order (State and
	// RNG are then those after the last). There are fewer than Count when
	// the world became done, when the answer reached maxStepsReplyBytes, or
	// when the next step failed: the steps before a failure are answered,
	// and the failing step, asked again on its own, fails as it would have.
	Steps []StepReply
	// Asked and Judged say a "branch" call answered Actions and Score.
	Asked, Judged bool
}

// StepReply is one step of a "steps" or "branch" call.
type StepReply struct {
	State   []byte
	Emitted [][]byte
	Done    bool
}

// result is the step as a world answers it, at world time t.
func (st StepReply) result(t int64) backend.StepResult {
	res := backend.StepResult{State: st.State, Done: st.Done, WorldLocalTime: t}
	for _, e := range st.Emitted {
		res.Emitted = append(res.Emitted, e)
	}
	return res
}

// maxStepsReplyBytes bounds the states and events one "steps" answer
// carries, so that a batch of large states never holds a hundred of them
// at once; a batch cut short goes on in the next call.
const maxStepsReplyBytes = 4 << 20

// ErrCallLost is wrapped by a Runner's error when the process running a
// call died in it (its memory limit, a kill): what the call had done is
// lost, so a "steps" call that failed so is taken again one step at a time
// to find the step that fails.
var ErrCallLost = errors.New("the process running the world program's call died")

// ErrRaised is wrapped by the error of a call in which the program itself
// called fail(): it refused what it was given, rather than breaking on it
// (a type error, a missing key, a division by zero). A Runner keeps it.
var ErrRaised = errors.New("the world program called fail()")

// Shape is what a compiled program defines beyond init, step and observe.
type Shape struct {
	Actions bool // actions(state)
	Score   bool // score(state)
	InitRNG bool // init takes the rng as its second argument
}

// Source is a program as a Runner receives it: enough to compile it again
// anywhere. Digest names Code ("sha256:<hex>"), so a runner may keep what
// it compiled under it.
type Source struct {
	Name   string
	Digest string
	Code   []byte
	Limits Limits
}

// Runner evaluates world programs somewhere else than the calling goroutine:
// in worker processes whose memory the kernel bounds. Compile must check a
// program exactly as [Compile] does (its top-level code runs there too) and
// Call must answer exactly as [Program.Eval] does, errors included, so a
// world gives byte-identical results wherever its calls run.
type Runner interface {
	Compile(ctx context.Context, src Source) (Shape, error)
	Call(ctx context.Context, src Source, c Call) (Reply, error)
}

// CompileWith compiles source through r: every later call of the program,
// its top-level code included, runs where r runs it. A nil r compiles in
// this process ([Compile]).
func CompileWith(ctx context.Context, r Runner, name string, source []byte, limits Limits) (*Program, error) {
	if r == nil {
		return Compile(name, source, limits)
	}
	limits = limits.withDefaults()
	if name == "" {
		name = "world.star"
	}
	p := &Program{name: name, digest: sourceDigest(source), limits: limits, source: bytes.Clone(source), runner: r}
	shape, err := r.Compile(ctx, p.Source())
	if err != nil {
		return nil, err
	}
	p.shape = shape
	return p, nil
}

// Source returns what a Runner needs to compile p again.
func (p *Program) Source() Source {
	return Source{Name: p.name, Digest: p.digest, Code: p.source, Limits: p.limits}
}

// Shape reports which optional functions p defines.
func (p *Program) Shape() Shape { return p.shape }

// eval runs c where p's calls run.
func (p *Program) eval(ctx context.Context, c Call) (Reply, error) {
	if p.runner != nil {
		return p.runner.Call(ctx, p.Source(), c)
	}
	return p.Eval(ctx, c)
}

// Eval runs c in this process under p's step limit (a Runner's worker calls
// it). It is the whole of a call: decoding the state, running the function,
// checking and encoding what it returned.
func (p *Program) Eval(ctx context.Context, c Call) (Reply, error) {
	switch c.Func {
	case "init":
		return p.evalInit(ctx, c.Seed)
	case "step":
		return p.evalStep(ctx, c)
	case "steps":
		return p.evalSteps(ctx, c)
	case "branch":
		return p.evalBranch(ctx, c)
	case "observe":
		state, err := decodeStateBytes(c.State)
		if err != nil {
			return Reply{}, err
		}
		v, err := p.call(ctx, "observe", func(th *sl.Thread) (sl.Value, error) {
			return sl.Call(th, p.observe, sl.Tuple{state, sl.String(c.Role)}, nil)
		})
		if err != nil {
			return Reply{}, err
		}
		b, err := p.encodeResult(v, "observe", p.observe, "observation", "an observation")
		return Reply{Value: b}, err
	case "actions":
		list, err := p.evalActions(ctx, c.State)
		return Reply{Actions: list}, err
	case "score":
		f, err := p.evalScore(ctx, c.State)
		return Reply{Score: f}, err
	}
	return Reply{}, backend.Errorf(backend.EINTERNAL, "world program has no call %q", c.Func)
}

func (p *Program) evalInit(ctx context.Context, seed uint64) (Reply, error) {
	pcg := *SeedPCG(seed)
	rv := &rngValue{pcg: &pcg}
	args := sl.Tuple{sl.MakeUint64(seed)}
	if p.shape.InitRNG {
		args = append(args, rv)
	}
	v, err := p.call(ctx, "init", func(th *sl.Thread) (sl.Value, error) {
		return sl.Call(th, p.init, args, nil)
	})
	rv.closed = true
	if err != nil {
		return Reply{}, err
	}
	state, err := p.encodeResult(v, "init", p.init, "state", "a state")
	if err != nil {
		return Reply{}, err
	}
	if err := p.mustBeObject(state, "init", p.init); err != nil {
		return Reply{}, err
	}
	rng, err := pcg.MarshalBinary()
	if err != nil {
		return Reply{}, backend.Wrap(err, backend.EINTERNAL, "world RNG could not be saved")
	}
	return Reply{State: state, RNG: rng}, nil
}

func (p *Program) evalStep(ctx context.Context, c Call) (Reply, error) {
	act, err := decodeJSON(c.Action)
	if err != nil {
		return Reply{}, backend.Errorf(backend.EINVALID, "action is not valid JSON: %v", err)
	}
	state, err := decodeStateBytes(c.State)
	if err != nil {
		return Reply{}, err
	}
	var pcg rand.PCG
	if err := pcg.UnmarshalBinary(c.RNG); err != nil {
		return Reply{}, backend.Wrap(err, backend.EINTERNAL, "world RNG could not be read back")
	}
	rv := &rngValue{pcg: &pcg}
	v, err := p.call(ctx, "step", func(th *sl.Thread) (sl.Value, error) {
		return sl.Call(th, p.step, sl.Tuple{state, act, rv}, nil)
	})
	rv.closed = true
	if err != nil {
		return Reply{}, err
	}
	out, err := p.stepResult(v)
	if err != nil {
		return Reply{}, err
	}
	rng, err := pcg.MarshalBinary()
	if err != nil {
		return Reply{}, backend.Wrap(err, backend.EINTERNAL, "world RNG could not be saved")
	}
	emitted := make([][]byte, len(out.Emitted))
	for i, e := range out.Emitted {
		emitted[i] = e
	}
	return Reply{State: out.State, Emitted: emitted, Done: out.Done, RNG: rng}, nil
}

// evalSteps takes up to c.Count steps of c.Action, each a step call of its
// own (its own execution-step budget and size limits), stopping after a
// step that makes the world done. A failing step ends the batch: the steps
// before it are the answer, and only a failure of the first is the
// answer's error, so a caller meets a step's error exactly as a single
// step gives it.
func (p *Program) evalSteps(ctx context.Context, c Call) (Reply, error) {
	if c.Count < 1 {
		return Reply{}, backend.Errorf(backend.EINTERNAL, "world program was asked for %d steps", c.Count)
	}
	state, rng := c.State, c.RNG
	var out Reply
	size := 0
	for len(out.Steps) < c.Count {
		r, err := p.evalStep(ctx, Call{Func: "step", State: state, Action: c.Action, RNG: rng})
		if err != nil {
			if len(out.Steps) == 0 || ctx.Err() != nil {
				return Reply{}, err
			}
			break
		}
		out.Steps = append(out.Steps, StepReply{State: r.State, Emitted: r.Emitted, Done: r.Done})
		state, rng = r.State, r.RNG
		size += len(r.State)
		for _, e := range r.Emitted {
			size += len(e)
		}
		if r.Done || size >= maxStepsReplyBytes {
			break
		}
	}
	out.State, out.RNG = state, rng
	return out, nil
}

func (p *Program) evalActions(ctx context.Context, stateBytes []byte) ([][]byte, error) {
	v, err := p.ask(ctx, "actions", p.actions, stateBytes)
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
	out := make([][]byte, 0, len(items))
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

func (p *Program) evalScore(ctx context.Context, stateBytes []byte) (float64, error) {
	v, err := p.ask(ctx, "score", p.score, stateBytes)
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

// ask calls fn(state) on a decoded copy of the state.
func (p *Program) ask(ctx context.Context, what string, fn sl.Callable, stateBytes []byte) (sl.Value, error) {
	if fn == nil {
		return nil, backend.Errorf(backend.EINVALID, "the world program does not define %s(state)", what)
	}
	state, err := decodeStateBytes(stateBytes)
	if err != nil {
		return nil, err
	}
	return p.call(ctx, what, func(th *sl.Thread) (sl.Value, error) {
		return sl.Call(th, fn, sl.Tuple{state}, nil)
	})
}

func decodeStateBytes(b []byte) (sl.Value, error) {
	v, err := decodeJSON(b)
	if err != nil {
		// The bytes were produced or verified by this package.
		return nil, backend.Wrap(err, backend.EINTERNAL, "world state could not be read back")
	}
	return v, nil
}

// checkReply refuses what a Runner answered when it cannot be what Eval
// returns for the call: a worker is another process, and its answer is
// checked before it becomes the world's state.
func (p *Program) checkReply(c Call, r Reply) error {
	bad := func(what string) error {
		return backend.Errorf(backend.EINTERNAL, "the world program's worker answered %s with %s", c.Func, what)
	}
	// The steps of a batch: none after the world was done, each a state
	// as a step's.
	steps := func() error {
		for i, st := range r.Steps {
			if st.Done && i < len(r.Steps)-1 {
				return bad("a step after the world was done")
			}
			if err := p.checkReply(Call{Func: "step"}, Reply{State: st.State, RNG: r.RNG}); err != nil {
				return err
			}
		}
		return nil
	}
	switch c.Func {
	case "steps":
		if len(r.Steps) == 0 || len(r.Steps) > c.Count {
			return bad(fmt.Sprintf("%d steps of the %d asked for", len(r.Steps), c.Count))
		}
		return steps()
	case "branch":
		// Every move is taken, or the moves up to one that ended the world.
		n := len(r.Steps)
		if n == 0 || n > len(c.Moves) || n < len(c.Moves) && !r.Steps[n-1].Done {
			return bad(fmt.Sprintf("%d steps of the %d asked for", n, len(c.Moves)))
		}
		if r.Asked != (c.Ask && !r.Steps[n-1].Done) || r.Judged != c.Judge {
			return bad("other answers than it was asked for")
		}
		if math.IsNaN(r.Score) || math.IsInf(r.Score, 0) {
			return bad("a score that is not finite")
		}
		return steps()
	case "init", "step":
		if len(r.State) == 0 || r.State[0] != '{' || len(r.State) > p.limits.MaxStateBytes || !json.Valid(r.State) {
			return bad("a state that is not a JSON object within the limit")
		}
		var pcg rand.PCG
		if pcg.UnmarshalBinary(r.RNG) != nil {
			return bad("an unreadable RNG")
		}
	}
	return nil
}

// evalChecked is eval for calls whose reply becomes the world's state: a
// runner's answer is checked first.
func (p *Program) evalChecked(ctx context.Context, c Call) (Reply, error) {
	r, err := p.eval(ctx, c)
	if err != nil {
		return Reply{}, err
	}
	if p.runner != nil {
		if err := p.checkReply(c, r); err != nil {
			return Reply{}, err
		}
	}
	return r, nil
}
