package starlark

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"ducklm/backend"

	"go.starlark.net/resolve"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Limits bounds what one call into a world program may consume.
type Limits struct {
	// MaxSteps is the Starlark execution-step budget of each call (top-level
	// code, init, step, observe); 0 means the default, 1,000,000.
	MaxSteps uint64 `json:"maxSteps"`
	// MaxStateBytes bounds the canonical JSON of a state, of one step's
	// emitted events taken together, and of an observation; 0 means the
	// default, 8 MiB.
	MaxStateBytes int `json:"maxStateBytes"`
	// MaxMemoryBytes bounds the memory of the process a program's calls run
	// in, its top-level code included; 0 means the default, 512 MiB. Only a
	// Runner can hold it (the kernel bounds a worker process): a program
	// compiled by Compile runs in the caller's process, unbounded.
	MaxMemoryBytes int64 `json:"maxMemoryBytes"`
}

// DefaultLimits returns the limits a zero Limits stands for.
func DefaultLimits() Limits {
	return Limits{MaxSteps: 1_000_000, MaxStateBytes: 8 << 20, MaxMemoryBytes: DefaultMaxMemoryBytes}
}

// DefaultMaxMemoryBytes is the memory limit of a world program's worker
// when nothing else is set: 512 MiB.
const DefaultMaxMemoryBytes int64 = 512 << 20

// Filled returns l with every zero limit replaced by its default.
func (l Limits) Filled() Limits { return l.withDefaults() }

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxSteps == 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.MaxStateBytes <= 0 {
		l.MaxStateBytes = d.MaxStateBytes
	}
	if l.MaxMemoryBytes <= 0 {
		l.MaxMemoryBytes = d.MaxMemoryBytes
	}
	return l
}

// fileOptions let a program loop and recurse like ordinary code: the step
// limit, not the dialect, is what stops a runaway.
var fileOptions = &syntax.FileOptions{
	Set:             true,
	While:           true,
	TopLevelControl: true,
	GlobalReassign:  true,
	Recursion:       true,
}

// Program is a compiled world program. It is immutable: its globals were
// frozen after the top-level code ran once, so any number of worlds, in any
// number of goroutines, may share it.
type Program struct {
	name    string
	digest  string
	limits  Limits
	init    sl.Callable
	step    sl.Callable
	observe sl.Callable
	actions sl.Callable // optional: nil when the program does not define it
	score   sl.Callable // optional
	shape   Shape

	// A program compiled through a Runner keeps its source for the runner
	// and has no callables here: every call goes to runner.
	source []byte
	runner Runner
}

// Compile parses and resolves source once, runs its top-level code under the
// step limit, and checks that it defines init(seed), step(state, action, rng)
// and observe(state, role), and that the optional actions(state) and
// score(state) take one argument when defined (see [World.Actions]). name
// labels the program in positions. A syntax error, an undefined name, a load
// statement, a failing top-level statement or a missing function fails with EINVALID naming the line.
func Compile(name string, source []byte, limits Limits) (*Program, error) {
	limits = limits.withDefaults()
	if name == "" {
		name = "world.star" // positions need a file name to tell program frames from built-ins
	}
	f, err := fileOptions.Parse(name, source, 0)
	if err != nil {
		return nil, compileError(err)
	}
	for _, stmt := range f.Stmts {
		if load, ok := stmt.(*syntax.LoadStmt); ok {
			line, _ := load.Span()
			return nil, backend.Errorf(backend.EINVALID, "world program line %d: load is not allowed; a world program must be a single file", line.Line)
		}
	}
	compiled, err := sl.FileProgram(f, func(string) bool { return false })
	if err != nil {
		return nil, compileError(err)
	}

	p := &Program{name: name, limits: limits, digest: sourceDigest(source)}

	var globals sl.StringDict
	err = p.run(context.Background(), "top-level code", func(th *sl.Thread) (sl.Value, error) {
		g, err := compiled.Init(th, nil)
		globals = g
		return sl.None, err
	})
	if err != nil {
		return nil, err
	}
	globals.Freeze()

	p.init, err = p.entry(globals, "init", "init(seed) or init(seed, rng)", 1, 2)
	if err != nil {
		return nil, err
	}
	p.step, err = p.entry(globals, "step", "step(state, action, rng)", 3, 3)
	if err != nil {
		return nil, err
	}
	p.observe, err = p.entry(globals, "observe", "observe(state, role)", 2, 2)
	if err != nil {
		return nil, err
	}
	if p.actions, err = p.optional(globals, "actions", "actions(state)", 1); err != nil {
		return nil, err
	}
	if p.score, err = p.optional(globals, "score", "score(state)", 1); err != nil {
		return nil, err
	}
	p.shape = Shape{Actions: p.actions != nil, Score: p.score != nil, InitRNG: accepts(p.init, 2)}
	return p, nil
}

// sourceDigest names program source as a blob reference does.
func sourceDigest(source []byte) string {
	sum := sha256.Sum256(source)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Name returns the name the program was compiled under.
func (p *Program) Name() string { return p.name }

// Digest returns "sha256:<hex>" of the program source, the same form as a
// blob reference's digest.
func (p *Program) Digest() string { return p.digest }

// Limits returns the limits every call of the program runs under, defaults
// filled in.
func (p *Program) Limits() Limits { return p.limits }

// New returns a fresh, uninitialized world running p. Call Initialize or
// RestoreBytes before anything else.
func (p *Program) New() *World { return &World{prog: p} }

// entry finds a required function that can be called with min or max
// positional arguments.
func (p *Program) entry(globals sl.StringDict, name, signature string, min, max int) (sl.Callable, error) {
	v, ok := globals[name]
	if !ok {
		return nil, backend.Errorf(backend.EINVALID, "world program does not define %s", signature)
	}
	fn, ok := v.(sl.Callable)
	if !ok {
		return nil, backend.Errorf(backend.EINVALID, "world program defines %s as a %s, not as the function %s", name, v.Type(), signature)
	}
	if !accepts(fn, min) && !accepts(fn, max) {
		line := ""
		if f, ok := fn.(*sl.Function); ok {
			line = fmt.Sprintf(" line %d", f.Position().Line)
		}
		return nil, backend.Errorf(backend.EINVALID, "world program%s: %s cannot be called as %s", line, name, signature)
	}
	return fn, nil
}

// accepts reports whether fn can be called with n positional arguments and
// nothing else. Built-ins cannot be inspected and are given the benefit of
// the doubt; a wrong call still fails cleanly at run time.
func accepts(c sl.Callable, n int) bool {
	fn, ok := c.(*sl.Function)
	if !ok {
		return true
	}
	positional := fn.NumParams() - fn.NumKwonlyParams()
	if fn.HasVarargs() {
		positional--
	}
	if fn.HasKwargs() {
		positional--
	}
	required := 0
	for i := range positional {
		if fn.ParamDefault(i) == nil {
			required = i + 1
		}
	}
	for i := positional; i < positional+fn.NumKwonlyParams(); i++ {
		if fn.ParamDefault(i) == nil {
			return false // a keyword-only parameter nobody will pass
		}
	}
	return required <= n && (n <= positional || fn.HasVarargs())
}

// compileError turns a parser or resolver error into one sentence with the
// line, keeping the original as the cause for logs.
func compileError(err error) error {
	var se syntax.Error
	if errors.As(err, &se) {
		return backend.Wrap(err, backend.EINVALID, "world program line %d: %s", se.Pos.Line, se.Msg)
	}
	var list resolve.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return backend.Wrap(err, backend.EINVALID, "world program line %d: %s", list[0].Pos.Line, list[0].Msg)
	}
	return backend.Wrap(err, backend.EINVALID, "world program does not compile")
}
