package starlark_test

import (
	"context"
	"testing"

	"ducklm/backend"
	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

const minimalProgram = `
def init(seed):
    return {"seed": seed}

def step(state, action, rng):
    return state

def observe(state, role):
    return state
`

func TestCompileErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		src  string
		want string
	}{
		"undefined name": {minimalProgram + "\nx = 1\n\ndef helper():\n    return foo\n", "world program line 14: undefined: foo"},
		"syntax error":   {"def init(seed):\n    return {\n\ndef step(", "world program line 4: "},
		"indentation":    {"def init(seed):\nreturn 1\n", "world program line 2: "},
		"load":           {"\n\nload(\"x.star\", \"y\")\n" + minimalProgram, "world program line 3: load is not allowed"},
		"top-level fail": {minimalProgram + "\nfail(\"nope\")\n", "world program line 11: fail: nope (in top-level code)"},
		"missing step":   {"def init(seed):\n    return 1\ndef observe(s, r):\n    return s\n", "world program does not define step(state, action, rng)"},
		"missing init":   {"def step(s, a, r):\n    return s\ndef observe(s, r):\n    return s\n", "does not define init(seed)"},
		"not callable":   {"init = 3\ndef step(s, a, r):\n    return s\ndef observe(s, r):\n    return s\n", "defines init as a int"},
		"wrong arity":    {"def init(seed):\n    return 1\ndef step(s, a):\n    return s\ndef observe(s, r):\n    return s\n", "world program line 3: step cannot be called as step(state, action, rng)"},
		"kwonly":         {"def init(seed, *, x):\n    return 1\ndef step(s, a, r):\n    return s\ndef observe(s, r):\n    return s\n", "line 1: init cannot be called"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := starlark.Compile("test.star", []byte(c.src), starlark.Limits{})
			requireCode(t, err, backend.EINVALID, c.want)
		})
	}
}

func TestCompileAcceptsFlexibleSignatures(t *testing.T) {
	t.Parallel()
	src := `
init = lambda seed, rng=None: {"r": rng.random() if rng else 0}
def step(state, *args):
    return state
def observe(state, role, extra=1, *, kw=2):
    return role
`
	p := compile(t, src, starlark.Limits{})
	w := p.New()
	st, err := w.Initialize(context.Background(), 1)
	require.NoError(t, err)
	require.NotEqual(t, `{"r":0}`, string(st), "init with a second parameter receives the rng")
	step(t, w, `1`)
	obs, err := w.Observe(context.Background(), "x")
	require.NoError(t, err)
	require.Equal(t, `"x"`, string(obs))
}

func TestProgramMetadata(t *testing.T) {
	t.Parallel()
	p := compile(t, minimalProgram, starlark.Limits{MaxSteps: 100})
	require.Equal(t, "test.star", p.Name())
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, p.Digest())
	require.Equal(t, p.Digest(), compile(t, minimalProgram, starlark.Limits{}).Digest())
	require.Equal(t, starlark.Limits{MaxSteps: 100, MaxStateBytes: 8 << 20, MaxMemoryBytes: 512 << 20}, p.Limits())
	require.Equal(t, starlark.Limits{MaxSteps: 1_000_000, MaxStateBytes: 8 << 20, MaxMemoryBytes: 512 << 20}, starlark.DefaultLimits())
}

func TestProgramSeesNoHost(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"time", "open", "os", "env", "json", "math", "struct", "module", "sleep"} {
		src := minimalProgram + "\ndef probe():\n    return " + name + "\n"
		_, err := starlark.Compile("test.star", []byte(src), starlark.Limits{})
		requireCode(t, err, backend.EINVALID, "world program line 12: undefined: "+name)
	}
	// Top-level code cannot touch globals after compile: they are frozen, so
	// no state can hide outside the checkpoint.
	src := `
counter = [0]
def init(seed):
    return {}
def step(state, action, rng):
    counter.append(1)
    return state
def observe(state, role):
    return state
`
	w := newWorld(t, src, 1)
	_, err := w.Step(context.Background(), nil)
	requireCode(t, err, backend.EINVALID, "world program line 6:", "frozen", "(in step)")

	// print is harmless: it goes nowhere.
	w = newWorld(t, "def init(seed):\n    print('hi')\n    return {\"n\": 1}\n"+minimalProgram[len("\ndef init(seed):\n    return {\"seed\": seed}\n"):], 1)
	require.Equal(t, `{"n":1}`, string(w.State()))
}

func TestCompileTopLevelLoopIsLimited(t *testing.T) {
	t.Parallel()
	_, err := starlark.Compile("test.star", []byte(minimalProgram+"\nx = 0\nwhile True:\n    x += 1\n"), starlark.Limits{MaxSteps: 10_000})
	requireCode(t, err, backend.ELIMIT, "world program exceeded 10000 execution steps in top-level code (line 13)")
}

func TestProgramSharedAcrossGoroutines(t *testing.T) {
	t.Parallel()
	p := compile(t, string(starlark.BranchingGrid), starlark.Limits{})
	results := make(chan string, 8)
	for i := range 8 {
		go func() {
			w := p.New()
			if _, err := w.Initialize(context.Background(), uint64(i%2)); err != nil {
				results <- err.Error()
				return
			}
			for range 20 {
				if w.Done() {
					break
				}
				if _, err := w.Step(context.Background(), nil); err != nil {
					results <- err.Error()
					return
				}
			}
			results <- string(w.State())
		}()
	}
	got := map[string]int{}
	for range 8 {
		got[<-results]++
	}
	require.Len(t, got, 2, "two seeds give two final states: %v", got)
}
