package starlark_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"ducklm/backend"
	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

// trapProgram fails in step in different ways depending on the action, and
// otherwise draws from the rng, so a failed step that leaked RNG draws or
// state changes would show in the next good step.
const trapProgram = `
def init(seed):
    return {"n": 0, "r": 0.0}

def spin():
    x = 0
    while True:
        x += 1

def step(state, action, rng):
    state["n"] += 1
    state["r"] = rng.random()
    if action == "loop":
        spin()
    if action == "raise":
        fail("bad action", action)
    if action == "set":
        return {"s": set([1])}
    if action == "big":
        return {"n": 1 << 64}
    if action == "nan":
        return {"x": float("nan")}
    if action == "huge":
        return {"s": "x" * 2000}
    if action == "tuple4":
        return state, [], False, 1
    if action == "badevents":
        return state, {"a": 1}
    if action == "baddone":
        return state, [], "yes"
    if action == "badevent":
        return state, [1, {"k": set()}]
    if action == "manyevents":
        return state, ["y" * 600, "y" * 600]
    if action == "done":
        return state, [{"bye": True}], True
    return state, [{"n": state["n"]}]

def observe(state, role):
    if role == "loop":
        spin()
    return {"role": role, "n": state["n"]}
`

func trapWorld(t *testing.T) *starlark.World {
	t.Helper()
	w := compile(t, trapProgram, starlark.Limits{MaxSteps: 50_000, MaxStateBytes: 1000}).New()
	_, err := w.Initialize(context.Background(), 7)
	require.NoError(t, err)
	return w
}

func TestFailedStepsAreAtomic(t *testing.T) {
	t.Parallel()
	cases := []struct {
		action, code string
		want         []string
	}{
		{`"loop"`, backend.ELIMIT, []string{"world program exceeded 50000 execution steps in step (line 8)"}},
		{`"raise"`, backend.EINVALID, []string{"world program line 16: fail: bad action raise (in step)"}},
		{`"set"`, backend.EINVALID, []string{"world program line 10: step returned a value that is not JSON: set (at state[\"s\"])"}},
		{`"big"`, backend.EINVALID, []string{"not JSON: int 18446744073709551616 that does not fit in 64 bits"}},
		{`"nan"`, backend.EINVALID, []string{"not JSON: float nan"}},
		{`"huge"`, backend.ELIMIT, []string{"step returned a state larger than the limit of 1000 bytes"}},
		{`"tuple4"`, backend.EINVALID, []string{"tuple of 4 items"}},
		{`"badevents"`, backend.EINVALID, []string{"events as a dict"}},
		{`"baddone"`, backend.EINVALID, []string{"done as a string"}},
		{`"badevent"`, backend.EINVALID, []string{`not JSON: set (at events[1]["k"])`}},
		{`"manyevents"`, backend.ELIMIT, []string{"step returned events larger than the limit"}},
		{`[1,`, backend.EINVALID, []string{"action is not valid JSON"}},
	}
	for _, c := range cases {
		t.Run(c.action, func(t *testing.T) {
			t.Parallel()
			w := trapWorld(t)
			step(t, w, `null`)
			before := checkpoint(t, w)

			_, err := w.Step(context.Background(), json.RawMessage(c.action))
			requireCode(t, err, c.code, c.want...)
			require.Equal(t, before, checkpoint(t, w), "a failed step changes nothing")
			require.EqualValues(t, 1, w.Time())

			// The next good step equals what an untouched world gives.
			fresh := trapWorld(t)
			step(t, fresh, `null`)
			require.Equal(t, step(t, fresh, `null`), step(t, w, `null`))
			require.Equal(t, checkpoint(t, fresh), checkpoint(t, w))
		})
	}
}

func TestStepShapesAndTerminal(t *testing.T) {
	t.Parallel()
	w := trapWorld(t)
	res := step(t, w, `null`)
	require.Equal(t, backend.StepResult{
		WorldLocalTime: 1,
		State:          res.State,
		Emitted:        []json.RawMessage{json.RawMessage(`{"n":1}`)},
	}, res)
	require.Contains(t, string(res.State), `"n":1`)

	res = step(t, w, `"done"`)
	require.True(t, res.Done)
	require.True(t, w.Done())
	require.Equal(t, []json.RawMessage{json.RawMessage(`{"bye":true}`)}, res.Emitted)
	_, err := w.Step(context.Background(), nil)
	requireCode(t, err, backend.EINVALID, "world is terminal")
	require.Contains(t, string(checkpoint(t, w)), `"done":true`)

	// Observing a terminal world is still fine.
	obs, err := w.Observe(context.Background(), "x")
	require.NoError(t, err)
	require.Equal(t, `{"n":2,"role":"x"}`, string(obs))

	// A plain state return is a step with no events.
	plain := newWorld(t, minimalProgram, 3)
	res = step(t, plain, `{"anything": [1, 2]}`)
	require.Empty(t, res.Emitted)
	require.False(t, res.Done)
	require.Equal(t, `{"seed":3}`, string(res.State))
}

func TestInfiniteLoopStopsQuickly(t *testing.T) {
	t.Parallel()
	w := newWorld(t, trapProgram, 1) // default limit: one million steps
	start := time.Now()
	_, err := w.Step(context.Background(), json.RawMessage(`"loop"`))
	requireCode(t, err, backend.ELIMIT, "world program exceeded 1000000 execution steps in step (line 8)")
	require.Less(t, time.Since(start), 60*time.Second, "an endless loop, cut")

	_, err = w.Observe(context.Background(), "loop")
	requireCode(t, err, backend.ELIMIT, "in observe (line 8)")
}

func TestContextCancellationStopsALongLoop(t *testing.T) {
	t.Parallel()
	p := compile(t, trapProgram, starlark.Limits{MaxSteps: 1 << 62})
	w := p.New()
	_, err := w.Initialize(context.Background(), 1)
	require.NoError(t, err)
	before := checkpoint(t, w)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = w.Step(ctx, json.RawMessage(`"loop"`))
	// Starlark reports a loop's back-jump at its function's def line, so a
	// cancel from outside may name line 5 (def spin) or line 8 (x += 1).
	requireCode(t, err, backend.ELIMIT, "world program was stopped during step (line ")
	require.Regexp(t, `\(line [58]\)`, err.Error())
	require.True(t, errors.Is(err, context.DeadlineExceeded))
	require.Less(t, time.Since(start), 60*time.Second, "an endless loop, cut")
	require.Equal(t, before, checkpoint(t, w))

	// An already cancelled context does not start the call.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = w.Step(done, nil)
	require.True(t, errors.Is(err, context.Canceled))
	_, err = w.Observe(done, "x")
	require.True(t, errors.Is(err, context.Canceled))
}

func TestObservePerRole(t *testing.T) {
	t.Parallel()
	w := newWorld(t, string(starlark.BranchingGrid), 1)
	agent, err := w.Observe(context.Background(), "agent")
	require.NoError(t, err)
	require.Equal(t, `{"neighbours":{"E":"open","N":"blocked","S":"open","W":"blocked"},"pos":[0,0]}`, string(agent))
	observer, err := w.Observe(context.Background(), "observer")
	require.NoError(t, err)
	require.Equal(t, string(w.State()), string(observer))
	_, err = w.Observe(context.Background(), "spy")
	requireCode(t, err, backend.EINVALID, `unknown role "spy"`, "(in observe)")
}

func TestObserveCannotChangeTheWorld(t *testing.T) {
	t.Parallel()
	src := `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    state["n"] += 1
    return state
def observe(state, role):
    state["n"] = 100
    return state
`
	w := newWorld(t, src, 1)
	obs, err := w.Observe(context.Background(), "any")
	require.NoError(t, err)
	require.Equal(t, `{"n":100}`, string(obs))
	require.Equal(t, `{"n":0}`, string(w.State()))
	require.Equal(t, `{"n":1}`, string(step(t, w, `null`).State))
}

func TestLifecycleErrors(t *testing.T) {
	t.Parallel()
	p := compile(t, minimalProgram, starlark.Limits{})
	w := p.New()
	_, err := w.Step(context.Background(), nil)
	requireCode(t, err, backend.EINVALID, "not initialized")
	_, err = w.Observe(context.Background(), "x")
	requireCode(t, err, backend.EINVALID, "not initialized")
	_, err = w.CheckpointBytes()
	requireCode(t, err, backend.EINVALID, "not initialized")
	require.Nil(t, w.State())
	require.Equal(t, backend.BackendCapabilities{Deterministic: true, Checkpoint: true, Observe: true}, w.Capabilities())

	_, err = w.Initialize(context.Background(), 5)
	require.NoError(t, err)
	step(t, w, `1`)
	// Initialize again starts over.
	st, err := w.Initialize(context.Background(), 6)
	require.NoError(t, err)
	require.Equal(t, `{"seed":6}`, string(st))
	require.Zero(t, w.Time())
	require.EqualValues(t, 6, w.Seed())

	require.NoError(t, w.Terminate())
	require.NoError(t, w.Terminate())
	for _, err := range []error{
		func() error { _, err := w.Step(context.Background(), nil); return err }(),
		func() error { _, err := w.Observe(context.Background(), "x"); return err }(),
		func() error { _, err := w.CheckpointBytes(); return err }(),
		func() error { _, err := w.Initialize(context.Background(), 1); return err }(),
		w.RestoreBytes([]byte(`{}`)),
	} {
		requireCode(t, err, backend.EINVALID, "world terminated")
	}
}

func TestInitErrors(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"def init(seed):\n    return set()\n":                        "world program line 1: init returned a value that is not JSON: set (at state)",
		"def init(seed):\n    return {'s': seed}\n":                  "", // seed above int64 is fine as an argument, not as state
		"def init(seed):\n    x = {}\n    return x[seed]\n":          "world program line 3: key",
		"def init(seed, rng):\n    return rng.randint(5, 1)\n":       "randint: empty range, 5 > 1 (in init)",
		"def init(seed, rng):\n    return rng.choice([])\n":          "choice: empty sequence",
		"def init(seed, rng):\n    return rng.normal('a', 1)\n":      "normal: mu and sigma must be numbers",
		"def init(seed, rng):\n    return rng.normal(0, -1)\n":       "finite sigma >= 0",
		"def init(seed, rng):\n    return rng.nope()\n":              "rng has no .nope field or method",
		"def init(seed, rng):\n    return rng.random(1)\n":           "random: got 1 arguments, want 0",
		"def init(seed, rng):\n    return {rng: 1}\n":                "unhashable type: rng",
		"def init(seed, rng):\n    return rng\n":                     "not JSON: rng",
		"def init(seed, rng):\n    return rng.shuffle(1)\n":          "want iterable",
		"def init(seed, rng):\n    return rng.randint(0, 1 << 64)\n": "out of range",
	} {
		p := compile(t, src+"def step(s, a, r):\n    return s\ndef observe(s, r):\n    return s\n", starlark.Limits{})
		w := p.New()
		_, err := w.Initialize(context.Background(), 1<<63)
		if want == "" {
			requireCode(t, err, backend.EINVALID, "does not fit in 64 bits")
			continue
		}
		requireCode(t, err, backend.EINVALID, want)
		require.Nil(t, w.State(), "a failed init leaves the world uninitialized")
	}
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	for _, src := range []string{string(starlark.BranchingGrid), counterProgram} {
		p := compile(t, src, starlark.Limits{})
		run := func() (trace []string) {
			w := p.New()
			st, err := w.Initialize(context.Background(), 42)
			require.NoError(t, err)
			trace = append(trace, string(st))
			for i := range 40 {
				if w.Done() {
					break
				}
				action := `null`
				if i%3 == 1 {
					action = `{"move":"E"}`
				}
				res := step(t, w, action)
				trace = append(trace, string(res.State))
				for _, e := range res.Emitted {
					trace = append(trace, string(e))
				}
				trace = append(trace, string(checkpoint(t, w)))
			}
			return trace
		}
		a, b := run(), run()
		require.Equal(t, a, b)
		require.Greater(t, len(a), 10)
		// Another seed gives another run.
		w := p.New()
		st, err := w.Initialize(context.Background(), 43)
		require.NoError(t, err)
		if strings.Contains(src, "rng.normal") {
			require.NotEqual(t, a[0], string(st))
		}
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	t.Parallel()
	err := starlark.RunPanicking(compile(t, minimalProgram, starlark.Limits{}))
	requireCode(t, err, backend.EINTERNAL, "world program step hit an internal error in the interpreter")
	require.Contains(t, err.Error(), "panic: boom")
	require.Equal(t, "world program step hit an internal error in the interpreter", backend.ErrorMessage(err), "no stack for the user")
}

func TestAStateIsAnObject(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"def init(seed):\n    return 7\ndef step(s, a, r):\n    return s\n":            "world program line 1: init returned a number as the state; a state is a dict (a JSON object)",
		"def init(seed):\n    return [1]\ndef step(s, a, r):\n    return s\n":          "init returned a list as the state",
		"def init(seed):\n    return {}\ndef step(s, a, r):\n    return 42\n":          "world program line 3: step returned a number as the state",
		"def init(seed):\n    return {}\ndef step(s, a, r):\n    return (\"x\", [])\n": "step returned a string as the state",
		"def init(seed):\n    return {}\ndef step(s, a, r):\n    return None\n":        "step returned None as the state",
	} {
		p := compile(t, src+"def observe(s, r):\n    return s\n", starlark.Limits{})
		w := p.New()
		_, err := w.Initialize(context.Background(), 1)
		if err == nil {
			before := w.State()
			_, err = w.Step(context.Background(), nil)
			require.Equal(t, before, w.State(), "a refused step changes nothing")
			require.EqualValues(t, 0, w.Time())
		}
		requireCode(t, err, backend.EINVALID, want)
	}
	w := newWorld(t, counterProgram, 1)
	require.ErrorContains(t, w.ReplaceState(json.RawMessage(`3`)), "replacement state is a number; a state is a JSON object")
}
