package worldproc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/starlark"
	"ducklm/backend/worldproc"
)

// lowLimit is the memory limit the hostile programs run under: low enough
// that each hits it within a second, high enough for an honest program.
const lowLimit = 64 << 20

// hostileLimits lets a program run long enough that memory, not the step
// budget, is what stops it.
var hostileLimits = starlark.Limits{MaxSteps: 1 << 40, MaxMemoryBytes: lowLimit}

const honest = `
def init(seed, rng):
    return {"n": 0, "draw": rng.randint(0, 1000)}
def step(state, action, rng):
    n = state["n"] + 1
    return {"n": n, "draw": rng.randint(0, 1000)}, [{"at": n}], n >= 1000
def observe(state, role):
    return {"role": role, "n": state["n"]}
def actions(state):
    return ["a", "b"]
def score(state):
    return state["n"] * 0.5
`

// newPool returns a pool the test closes.
func newPool(t *testing.T, opts worldproc.Options) *worldproc.Pool {
	t.Helper()
	p := worldproc.New(opts)
	t.Cleanup(func() { p.Close() })
	return p
}

// requireCode asserts err is a *backend.Error with code whose message holds
// every fragment.
func requireCode(t *testing.T, err error, code string, fragments ...string) {
	t.Helper()
	var be *backend.Error
	require.ErrorAs(t, err, &be, "error %v is not a *backend.Error", err)
	require.Equal(t, code, be.Code, "error: %v", err)
	for _, f := range fragments {
		require.Contains(t, be.Message, f)
	}
}

// alive reports whether process pid still exists (and is not a zombie).
func alive(pid int) bool {
	st := processState(pid)
	return st != 0 && st != 'Z'
}

// processState is the state letter of process pid ('R' running or
// runnable, 'S' sleeping, 'Z' zombie), 0 when there is none.
func processState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	return s[i+2]
}

// eventually polls cond until it holds, failing after a generous minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not true after a minute: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWorkerGivesWhatThisProcessGives runs the same world in this process
// and through a pool: every state, emitted event, RNG draw, observation,
// action list, score and checkpoint is byte-identical.
func TestWorkerGivesWhatThisProcessGives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, worldproc.Options{})
	for name, src := range map[string][]byte{"honest.star": []byte(honest), "grid.star": starlark.BranchingGrid} {
		local, err := starlark.Compile(name, src, starlark.Limits{})
		require.NoError(t, err)
		remote, err := starlark.CompileWith(ctx, pool, name, src, starlark.Limits{})
		require.NoError(t, err)
		require.Equal(t, local.Shape(), remote.Shape())
		require.Equal(t, local.Digest(), remote.Digest())

		lw, rw := local.New(), remote.New()
		ls, err := lw.Initialize(ctx, 7)
		require.NoError(t, err)
		rs, err := rw.Initialize(ctx, 7)
		require.NoError(t, err)
		require.Equal(t, string(ls), string(rs))
		for i := range 40 {
			if lw.Done() {
				break
			}
			action := json.RawMessage("null")
			if local.HasActions() {
				la, err := lw.Actions(ctx)
				require.NoError(t, err)
				ra, err := rw.Actions(ctx)
				require.NoError(t, err)
				require.Equal(t, la, ra)
				if len(la) > 0 {
					action = la[i%len(la)]
				}
			}
			lr, lerr := lw.Step(ctx, action)
			rr, rerr := rw.Step(ctx, action)
			require.Equal(t, lerr, rerr)
			require.Equal(t, lr, rr)
			lo, err := lw.Observe(ctx, "agent")
			require.NoError(t, err)
			ro, err := rw.Observe(ctx, "agent")
			require.NoError(t, err)
			require.Equal(t, string(lo), string(ro))
			if local.HasScore() {
				lsc, err := lw.Score(ctx)
				require.NoError(t, err)
				rsc, err := rw.Score(ctx)
				require.NoError(t, err)
				require.Equal(t, lsc, rsc)
			}
			lc, err := lw.CheckpointBytes()
			require.NoError(t, err)
			rc, err := rw.CheckpointBytes()
			require.NoError(t, err)
			require.Equal(t, string(lc), string(rc), "%s: checkpoint after step %d", name, i+1)
		}
	}
}

// TestWorkerErrorsAreTheSentencesOfThisProcess: a program's mistakes read
// the same wherever it runs, line numbers included.
func TestWorkerErrorsAreTheSentencesOfThisProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, worldproc.Options{})
	bad := map[string]string{
		"compile":   "def init(seed):\n    return {}\ndef step(state, action, rng):\n    return undefined_name\n",
		"top-level": "x = 1 // 0\n",
		"step": `def init(seed):
    return {}
def step(state, action, rng):
    fail("no way")
def observe(state, role):
    return state
`,
		"not an object": `def init(seed):
    return {}
def step(state, action, rng):
    return 3
def observe(state, role):
    return state
`,
		"too many steps": `def init(seed):
    return {}
def step(state, action, rng):
    while True:
        pass
def observe(state, role):
    return state
`,
	}
	for name, src := range bad {
		limits := starlark.Limits{MaxSteps: 10_000}
		local, lerr := starlark.Compile("bad.star", []byte(src), limits)
		remote, rerr := starlark.CompileWith(ctx, pool, "bad.star", []byte(src), limits)
		if lerr != nil {
			require.Error(t, rerr, name)
			require.Equal(t, backend.ErrorCode(lerr), backend.ErrorCode(rerr), name)
			require.Equal(t, backend.ErrorMessage(lerr), backend.ErrorMessage(rerr), name)
			continue
		}
		require.NoError(t, rerr, name)
		lw, rw := local.New(), remote.New()
		_, err := lw.Initialize(ctx, 1)
		require.NoError(t, err)
		_, err = rw.Initialize(ctx, 1)
		require.NoError(t, err)
		_, lerr = lw.Step(ctx, nil)
		_, rerr = rw.Step(ctx, nil)
		require.Error(t, lerr, name)
		require.Equal(t, backend.ErrorCode(lerr), backend.ErrorCode(rerr), name)
		require.Equal(t, backend.ErrorMessage(lerr), backend.ErrorMessage(rerr), name)
	}
}

// The hostile programs of issue 14: each allocates without end, in init, in
// step, or in top-level code run when the program is compiled.
var hostile = map[string]struct {
	src  string
	what string // the call that runs out
}{
	"string doubling in step": {`
def init(seed):
    return {}
def step(state, action, rng):
    s = "x"
    while True:
        s = s + s
def observe(state, role):
    return state
`, "step"},
	"list growth in init": {`
def init(seed):
    l = [seed]
    while True:
        l = l + l
def step(state, action, rng):
    return state
def observe(state, role):
    return state
`, "init"},
	"a huge dict in step": {`
def init(seed):
    return {}
def step(state, action, rng):
    d = {}
    i = 0
    while True:
        d[i] = "v" * 4096 + str(i)
        i += 1
def observe(state, role):
    return state
`, "step"},
	"a comprehension at top level": {`
big = [str(i) * 4000 for i in range(1 << 40)]
def init(seed):
    return {}
def step(state, action, rng):
    return state
def observe(state, role):
    return state
`, "top-level code"},
}

// TestHostileProgramsFailAtTheMemoryLimit: a program that allocates without
// end fails with ELIMIT and a sentence naming the limit and the setting that
// raises it; this process never holds what it allocated, and the pool goes
// on serving honest programs.
func TestHostileProgramsFailAtTheMemoryLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, worldproc.Options{Workers: 2})
	for name, h := range hostile {
		t.Run(name, func(t *testing.T) {
			prog, err := starlark.CompileWith(ctx, pool, "hostile.star", []byte(h.src), hostileLimits)
			if h.what == "top-level code" {
				requireCode(t, err, backend.ELIMIT, "memory limit of 64 MiB", "during top-level code", "worldMemoryMiB")
				return
			}
			require.NoError(t, err)
			w := prog.New()
			_, err = w.Initialize(ctx, 3)
			if h.what == "init" {
				requireCode(t, err, backend.ELIMIT, "memory limit of 64 MiB", "during init", "raise the memory limit of world programs in Settings")
				return
			}
			require.NoError(t, err)
			before, err := w.CheckpointBytes()
			require.NoError(t, err)
			_, err = w.Step(ctx, nil)
			requireCode(t, err, backend.ELIMIT, "memory limit of 64 MiB", "during step", "worldMemoryMiB")
			after, err := w.CheckpointBytes()
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "a failed step leaves the world as it was")
		})
	}
	// The pool survived: an honest program runs at once, under the same limit.
	prog, err := starlark.CompileWith(ctx, pool, "honest.star", []byte(honest), hostileLimits)
	require.NoError(t, err)
	w := prog.New()
	_, err = w.Initialize(ctx, 1)
	require.NoError(t, err)
	res, err := w.Step(ctx, nil)
	require.NoError(t, err)
	require.Contains(t, string(res.State), `"n":1`)
}

// TestHonestProgramUsesMostOfItsLimit: the limit is what the program may
// use, not what is left after the runtime: 32 MiB of live data fits in 64.
func TestHonestProgramUsesMostOfItsLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, worldproc.Options{Workers: 1})
	src := `
def init(seed):
    return {}
def step(state, action, rng):
    s = "x" * (32 * 1024 * 1024)
    return {"len": len(s)}
def observe(state, role):
    return state
`
	prog, err := starlark.CompileWith(ctx, pool, "fits.star", []byte(src), hostileLimits)
	require.NoError(t, err)
	w := prog.New()
	_, err = w.Initialize(ctx, 1)
	require.NoError(t, err)
	res, err := w.Step(ctx, nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"len": 33554432}`, string(res.State))
}

// TestWorkerIsReused: calls of several programs go to the same worker, not
// one process per call.
func TestWorkerIsReused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, worldproc.Options{Workers: 1})
	var pid int
	for i := range 20 {
		src := honest + fmt.Sprintf("\n# program %d\n", i%3)
		prog, err := starlark.CompileWith(ctx, pool, "honest.star", []byte(src), starlark.Limits{})
		require.NoError(t, err)
		w := prog.New()
		_, err = w.Initialize(ctx, uint64(i))
		require.NoError(t, err)
		_, err = w.Step(ctx, nil)
		require.NoError(t, err)
		pids := pool.PIDs()
		require.Len(t, pids, 1)
		if i == 0 {
			pid = pids[0]
		}
		require.Equal(t, pid, pids[0], "call %d started another worker", i)
	}
}

// TestCancelStopsTheCallAndTheNextCallRuns: a cancelled call ends at once
// (its worker is killed), the world is unchanged, and the pool serves on.
func TestCancelStopsTheCallAndTheNextCallRuns(t *testing.T) {
	t.Parallel()
	pool := newPool(t, worldproc.Options{Workers: 1})
	src := `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    if action == "spin":
        while True:
            pass
    return {"n": state["n"] + 1}
def observe(state, role):
    return state
`
	prog, err := starlark.CompileWith(context.Background(), pool, "spin.star", []byte(src), starlark.Limits{MaxSteps: 1 << 40})
	require.NoError(t, err)
	w := prog.New()
	_, err = w.Initialize(context.Background(), 1)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	pids := pool.PIDs()
	require.Len(t, pids, 1)
	go func() {
		// Cancel once the worker runs the call (runnable, not waiting on its
		// pipe), so the cancel meets a call in progress.
		deadline := time.Now().Add(time.Minute)
		for processState(pids[0]) != 'R' && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err = w.Step(ctx, json.RawMessage(`"spin"`))
	requireCode(t, err, backend.ELIMIT, "stopped during step")
	eventually(t, "the cancelled call's worker exits", func() bool { return !alive(pids[0]) })
	res, err := w.Step(context.Background(), nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"n": 1}`, string(res.State))
}

// TestIdleWorkersStop: a worker nobody calls exits by itself.
func TestIdleWorkersStop(t *testing.T) {
	t.Parallel()
	pool := newPool(t, worldproc.Options{Workers: 1, IdleTimeout: 50 * time.Millisecond})
	_, err := starlark.CompileWith(context.Background(), pool, "honest.star", []byte(honest), starlark.Limits{})
	require.NoError(t, err)
	pids := pool.PIDs()
	require.Len(t, pids, 1)
	eventually(t, "the idle worker exits", func() bool { return len(pool.PIDs()) == 0 && !alive(pids[0]) })
}

// helperEnv marks this test binary run as the parent of
// TestWorkerDiesWithItsParent.
const helperEnv = "WORLDPROC_TEST_PARENT"

// TestWorkerDiesWithItsParent: when ducklm dies (SIGKILL, nothing cleaned
// up), its workers die too.
func TestWorkerDiesWithItsParent(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		parentMain()
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerDiesWithItsParent$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pid int
	_, err = fmt.Fscanf(out, "worker %d\n", &pid)
	require.NoError(t, err, "the parent did not report its worker")
	require.True(t, alive(pid))
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	eventually(t, "the worker of a killed parent exits", func() bool { return !alive(pid) })
}

// parentMain is the helper parent: it starts a worker, says its pid and
// waits to be killed.
func parentMain() {
	pool := worldproc.New(worldproc.Options{Workers: 1})
	if _, err := starlark.CompileWith(context.Background(), pool, "honest.star", []byte(honest), starlark.Limits{}); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("worker %d\n", pool.PIDs()[0])
	time.Sleep(10 * time.Minute)
	os.Exit(1)
}

// TestAWorkerThatDiedIdleIsNotHandedOut: a worker that dies while idle (a
// cancel's kill that landed as its answer came, the OOM killer, a person
// with kill) is skipped by the next call, which starts another. A CI run
// saw "world program was stopped during top-level code: ducklm is shutting
// down" for a call nobody cancelled, after another command's context ended
// as its call answered.
func TestAWorkerThatDiedIdleIsNotHandedOut(t *testing.T) {
	t.Parallel()
	pool := newPool(t, worldproc.Options{Workers: 1})
	ctx := context.Background()
	_, err := starlark.CompileWith(ctx, pool, "honest.star", []byte(honest), starlark.Limits{})
	require.NoError(t, err)
	pids := pool.PIDs()
	require.Len(t, pids, 1)
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))
	// Reaped (no /proc entry left), so the pool has seen it exit.
	eventually(t, "the idle worker is dead and reaped", func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pids[0]))
		return os.IsNotExist(err)
	})
	_, err = starlark.CompileWith(ctx, pool, "honest.star", []byte(honest+"\n# again\n"), starlark.Limits{})
	require.NoError(t, err, "the next call gets a live worker")
	require.NotEqual(t, pids, pool.PIDs())
}
