package starlark

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"ducklm/backend"

	sl "go.starlark.net/starlark"
)

// run is call for callers that need only the error.
func (p *Program) run(ctx context.Context, what string, f func(*sl.Thread) (sl.Value, error)) (err error) {
	_, err = p.call(ctx, what, f)
	return err
}

// call executes one call into the program (what names it in messages: "step",
// "init", ...) on a fresh thread, so no interpreter state, step count or
// cancellation leaks from one call to the next. It translates every failure
// into a *backend.Error:
//   - the step budget ran out: ELIMIT;
//   - ctx was cancelled or timed out: ELIMIT wrapping ctx.Err();
//   - the program raised (fail(), a type error, ...): EINVALID naming the
//     innermost program line;
//   - the interpreter or a built-in panicked: EINTERNAL.
func (p *Program) call(ctx context.Context, what string, f func(*sl.Thread) (sl.Value, error)) (v sl.Value, err error) {
	th := &sl.Thread{
		Name:  p.name + ": " + what,
		Print: func(*sl.Thread, string) {}, // print must not reach the host's stderr
	}
	th.SetMaxExecutionSteps(p.limits.MaxSteps)
	exceeded := false
	th.OnMaxSteps = func(t *sl.Thread) {
		exceeded = true
		t.Cancel("too many steps")
	}

	if cerr := ctx.Err(); cerr != nil {
		return nil, backend.Wrap(cerr, backend.ELIMIT, "world program %s was not started", what)
	}
	// A context that can never be cancelled needs no watcher goroutine.
	if done := ctx.Done(); done != nil {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			select {
			case <-done:
				th.Cancel("context cancelled")
			case <-stop:
			}
		})
		defer func() {
			close(stop)
			wg.Wait() // the watcher must not outlive the call
		}()
	}

	defer func() {
		if r := recover(); r != nil {
			v = nil
			err = backend.Wrap(fmt.Errorf("panic: %v\n%s", r, debug.Stack()), backend.EINTERNAL,
				"world program %s hit an internal error in the interpreter", what)
		}
	}()

	v, err = f(th)
	if err == nil {
		return v, nil
	}
	line := p.lineOf(err)
	switch {
	case exceeded:
		return nil, backend.Wrap(err, backend.ELIMIT, "world program exceeded %d execution steps in %s%s",
			p.limits.MaxSteps, what, lineSuffix(line))
	case ctx.Err() != nil:
		return nil, backend.Wrap(ctx.Err(), backend.ELIMIT, "world program was stopped during %s%s", what, lineSuffix(line))
	}
	msg := err.Error()
	var ee *sl.EvalError
	if errors.As(err, &ee) {
		msg = ee.Msg
		if n := len(ee.CallStack); n > 0 && ee.CallStack[n-1].Name == "fail" && ee.CallStack[n-1].Pos.Filename() == "<builtin>" {
			err = errors.Join(ErrRaised, err)
		}
	}
	return nil, backend.Wrap(err, backend.EINVALID, "%s: %s (in %s)", p.where(line), msg, what)
}

// lineOf finds the innermost frame that belongs to the program: the line a
// person should look at, even when a built-in such as fail() raised.
func (p *Program) lineOf(err error) int {
	var ee *sl.EvalError
	if !errors.As(err, &ee) {
		return 0
	}
	for i := len(ee.CallStack) - 1; i >= 0; i-- {
		if pos := ee.CallStack[i].Pos; pos.Filename() == p.name && pos.Line > 0 {
			return int(pos.Line)
		}
	}
	return 0
}

func (p *Program) where(line int) string {
	if line == 0 {
		return "world program"
	}
	return fmt.Sprintf("world program line %d", line)
}

func lineSuffix(line int) string {
	if line == 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", line)
}

// defLine is the line of a function's def, used for errors found after the
// function returned (its result is not JSON), when no frame is left to ask.
func defLine(c sl.Callable) int {
	if fn, ok := c.(*sl.Function); ok {
		return int(fn.Position().Line)
	}
	return 0
}
