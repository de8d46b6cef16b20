package cli_test

// These tests set DUCKLM_HOME with t.Setenv, so none of them runs in parallel.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/cli"
	"ducklm/backend/service"
	"ducklm/backend/world"
)

// result is one CLI invocation.
type result struct {
	stdout, stderr string
	code           int
}

// field returns the value of the first "label: value" line of the output.
func (r result) field(t *testing.T, label string) string {
	t.Helper()
	for _, line := range strings.Split(r.stdout, "\n") {
		if v, ok := strings.CutPrefix(line, label+": "); ok {
			return v
		}
	}
	t.Fatalf("no %q line in:\n%s", label, r.stdout)
	return ""
}

// decode parses the JSON output into v.
func (r result) decode(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal([]byte(r.stdout), v), r.stdout)
}

func ducklm(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(cli.Env{Ctx: context.Background(), Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader("")}, args)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// ok runs a command that must succeed.
func ok(t *testing.T, args ...string) result {
	t.Helper()
	r := ducklm(t, args...)
	require.Equal(t, cli.ExitOK, r.code, "ducklm %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.stdout, r.stderr)
	return r
}

// home points DUCKLM_HOME at a fresh data directory.
func home(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("DUCKLM_HOME", dir)
	return dir
}

// grid creates a Branching Grid world and returns its world and run ids.
func grid(t *testing.T, seed string) (string, string) {
	t.Helper()
	r := ok(t, "world", "new", "--example", "branching_grid", "--seed", seed, "--name", "grid")
	return r.field(t, "world"), r.field(t, "run")
}

func TestWorldNewStepRunCheckpoint(t *testing.T) {
	home(t)
	r := ok(t, "world", "new", "--example", "branching_grid", "--seed", "7", "--json")
	var created struct {
		World      backend.WorldSpec  `json:"world"`
		Run        backend.WorldRun   `json:"run"`
		Checkpoint backend.Checkpoint `json:"checkpoint"`
	}
	r.decode(t, &created)
	require.NoError(t, backend.CheckID(created.World.ID, backend.KindWorld))
	require.Equal(t, created.World.ID, created.Run.WorldID)
	require.EqualValues(t, 7, created.World.Seed)
	require.Equal(t, "branching_grid", created.World.Name)
	require.EqualValues(t, 0, created.Checkpoint.WorldLocalTime)
	runID := created.Run.ID

	// Flags may follow the positional argument.
	r = ok(t, "world", "step", runID, "--action", `"S"`)
	require.Equal(t, "1", r.field(t, "time"))
	require.Contains(t, r.field(t, "state"), `"pos":[0,`)
	require.Contains(t, r.field(t, "event"), `"intended":"S"`)
	require.NotContains(t, r.field(t, "state"), "\n")

	r = ok(t, "world", "run", "--steps", "20", runID, "--checkpoint-every", "5")
	require.Equal(t, "21", r.field(t, "time"))
	require.Equal(t, "20", r.field(t, "steps"))
	require.Equal(t, "running", r.field(t, "status"))
	require.Contains(t, r.stderr, "step 2/20\n")
	require.Contains(t, r.stderr, "step 20/20\n")
	require.Len(t, strings.Split(strings.TrimSpace(r.stderr), "\n"), 10, "a progress line every 10%%")

	r = ok(t, "world", "checkpoint", runID)
	require.NoError(t, backend.CheckID(r.field(t, "checkpoint"), backend.KindCheckpoint))
	require.Equal(t, "21", r.field(t, "time"))
	require.True(t, strings.HasPrefix(r.field(t, "digest"), "sha256:"))

	// A program from a file, named after it.
	file := filepath.Join(t.TempDir(), "counter.star")
	require.NoError(t, os.WriteFile(file, []byte(`
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    return {"n": state["n"] + 1}, [{"n": state["n"] + 1}], state["n"] + 1 >= 3
def observe(state, role):
    return state
`), 0o600))
	r = ok(t, "world", "new", "--program", file)
	require.Equal(t, "counter", r.field(t, "name"))
	counter := r.field(t, "run")
	r = ok(t, "world", "run", counter, "--steps", "10", "--json")
	var res struct {
		world.StepOutcome
		Steps int `json:"steps"`
	}
	r.decode(t, &res)
	require.True(t, res.Done)
	require.Equal(t, 3, res.Steps, "the run stops when the world is done")
	require.Equal(t, backend.RunCompleted, res.Run.Status)
}

func TestWorldForkShowEventsLineageDiffVerify(t *testing.T) {
	home(t)
	parentWorld, parentRun := grid(t, "3")
	ok(t, "world", "run", parentRun, "--steps", "5")
	cp := ok(t, "world", "checkpoint", parentRun).field(t, "checkpoint")
	ok(t, "world", "run", parentRun, "--steps", "2")

	r := ok(t, "world", "fork", cp, "--divergence", "seed_change", "--seed-policy", "derive", "--name", "reseeded", "--deliberation-index", "2")
	forkID, childWorld, childRun := r.field(t, "fork"), r.field(t, "world"), r.field(t, "run")
	require.NoError(t, backend.CheckID(forkID, backend.KindFork))
	require.Equal(t, parentWorld, r.field(t, "parent world"))
	require.Equal(t, "5", r.field(t, "time"))

	r = ok(t, "world", "fork", cp, "--run", parentRun, "--divergence", "state_patch", "--delta", `{"params":{"noise":0}}`, "--json")
	var forked struct {
		Fork  backend.Fork      `json:"fork"`
		World backend.WorldSpec `json:"world"`
		Run   backend.WorldRun  `json:"run"`
	}
	r.decode(t, &forked)
	require.JSONEq(t, `{"params":{"noise":0}}`, string(forked.Fork.Delta))
	require.Equal(t, backend.SeedInherit, forked.Fork.SeedPolicy)
	calm := forked.Run.ID
	ok(t, "world", "run", childRun, "--steps", "4")
	ok(t, "world", "run", calm, "--steps", "3")

	// show: a world with its fork provenance and its runs' checkpoints.
	r = ok(t, "world", "show", childWorld)
	require.Equal(t, forkID, r.field(t, "fork"))
	require.Equal(t, parentWorld, r.field(t, "parent world"))
	require.Equal(t, cp, r.field(t, "fork checkpoint"))
	require.Equal(t, "5", r.field(t, "fork time"))
	require.Equal(t, "seed_change", r.field(t, "divergence"))
	require.Equal(t, "derive", r.field(t, "seed policy"))
	require.Contains(t, r.stdout, "run: "+childRun)
	require.Contains(t, r.stdout, "deliberation index: 2")
	r = ok(t, "world", "show", parentRun, "--json")
	var shown struct {
		World backend.WorldSpec `json:"world"`
		Fork  *backend.Fork     `json:"fork"`
		Runs  []struct {
			Run         backend.WorldRun     `json:"run"`
			Checkpoints []backend.Checkpoint `json:"checkpoints"`
		} `json:"runs"`
	}
	r.decode(t, &shown)
	require.Equal(t, parentWorld, shown.World.ID)
	require.Nil(t, shown.Fork)
	require.Len(t, shown.Runs, 1)
	// At time 0 and at the end of each `world run`; `world checkpoint` right
	// after a run returns the run's last checkpoint instead of a duplicate.
	require.Len(t, shown.Runs[0].Checkpoints, 3)
	require.Equal(t, cp, shown.Runs[0].Checkpoints[1].ID)

	// events: the own stream, then the full history with the inherited prefix marked.
	r = ok(t, "world", "events", childRun)
	require.NotContains(t, r.stdout, "inherited")
	require.Contains(t, r.stdout, world.EventForked)
	r = ok(t, "world", "events", childRun, "--full", "--json")
	var events []struct {
		backend.Event
		Inherited bool `json:"inherited"`
	}
	r.decode(t, &events)
	require.True(t, events[0].Inherited)
	require.Equal(t, parentRun, events[0].Stream)
	firstOwn := 0
	for firstOwn < len(events) && events[firstOwn].Inherited {
		firstOwn++
	}
	require.Equal(t, world.EventForked, events[firstOwn].Type, "the inherited prefix ends at the fork")
	r = ok(t, "world", "events", childRun, "--full", "--type", "world.checkpoint,world.forked", "--limit", "3")
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 1+3)
	require.Contains(t, r.stdout, "inherited from "+parentRun)
	require.NotContains(t, r.stdout, "world.step")

	// lineage: the tree, and one world's relatives.
	r = ok(t, "world", "lineage")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[0], parentWorld+" grid "))
	require.True(t, strings.HasPrefix(lines[1], "  [seed_change @ t=5] "+childWorld+" reseeded "))
	require.True(t, strings.HasPrefix(lines[2], "  [state_patch @ t=5] "+forked.World.ID))
	r = ok(t, "world", "lineage", childWorld)
	require.Contains(t, r.stdout, "ancestors (1, parent first):\n  "+parentWorld)
	require.Contains(t, r.stdout, "descendants (0):\n  none")
	r = ok(t, "world", "lineage", parentWorld, "--json")
	var rel struct {
		Descendants []backend.WorldSpec `json:"descendants"`
	}
	r.decode(t, &rel)
	require.Len(t, rel.Descendants, 2)

	// ls: one row per world; "reseeded" serves deliberation step 2
	// (--deliberation-index), so it is listed with --branches only.
	r = ok(t, "world", "ls")
	require.Contains(t, r.stdout, "WORLD")
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 1+2+1)
	require.NotContains(t, r.stdout, childWorld)
	require.Contains(t, r.stdout, "\n1 deliberation branch is not listed (--branches lists them)\n")
	r = ok(t, "world", "ls", "--branches")
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 1+3)
	require.Regexp(t, childWorld+`\s+reseeded\s+simulated\s+`+parentWorld+`\s+1\s+running\s+9`, r.stdout)
	r = ok(t, "world", "ls", "--branches", "--json")
	var nodes []world.Node
	r.decode(t, &nodes)
	require.Len(t, nodes, 3)

	// diff: the two siblings share the parent's history up to the checkpoint.
	r = ok(t, "world", "diff", childRun, calm)
	require.Equal(t, parentWorld, r.field(t, "common world"))
	require.Contains(t, r.stdout, "/params/noise changed: 0.2 → 0")
	require.Contains(t, r.stdout, "a after the fork: 11 events") // forked, checkpoint, 4×(step, moved), checkpoint
	require.Contains(t, r.stdout, "b after the fork: 9 events")
	r = ok(t, "world", "diff", childRun, calm, "--json")
	var d world.BranchDiff
	r.decode(t, &d)
	require.Equal(t, parentWorld, d.CommonWorldID)
	require.Equal(t, world.EventForked, d.EventsA[0].Type)

	// verify: every run re-executes to its record.
	for _, run := range []string{parentRun, childRun, calm} {
		r = ok(t, "world", "verify", run)
		require.Regexp(t, `^verified: \d+ events, \d+ steps, \d+ checkpoints\n$`, r.stdout)
	}
	r = ok(t, "world", "verify", childRun, "--json")
	var rep world.VerifyReport
	r.decode(t, &rep)
	require.True(t, rep.OK)
	require.Equal(t, 9, rep.Steps)
}

func TestWorldVerifyReportsTheFirstDivergence(t *testing.T) {
	dir := home(t)
	_, run := grid(t, "1")
	ok(t, "world", "run", run, "--steps", "3")

	svc, err := service.Open(context.Background(), dir)
	require.NoError(t, err)
	forged, err := svc.Ledger.Append(context.Background(), run, backend.ExpectAny, backend.Event{
		Type: world.EventStep, Reality: backend.WorldLocal,
		Payload: json.RawMessage(`{"action":null,"stateDigest":"sha256:0000","emitted":0,"done":false}`),
	})
	require.NoError(t, err)
	require.NoError(t, svc.Close())

	r := ducklm(t, "world", "verify", run)
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stdout, "diverged: "+run)
	require.Contains(t, r.stdout, "expected: sha256:0000")
	r = ducklm(t, "world", "verify", run, "--json")
	require.Equal(t, cli.ExitFail, r.code)
	var rep world.VerifyReport
	r.decode(t, &rep)
	require.False(t, rep.OK)
	require.Equal(t, forged[0].Seq, rep.Divergence.Seq)
}

func TestWorldDemo(t *testing.T) {
	home(t)
	r := ok(t, "world", "demo", "--json")
	var demo struct {
		ParentWorld  string `json:"parentWorld"`
		Checkpoint   string `json:"checkpoint"`
		SharedPrefix int    `json:"sharedPrefix"`
		Children     []struct {
			World    string `json:"world"`
			Terminal struct {
				Pos  [2]int `json:"pos"`
				Done bool   `json:"done"`
			} `json:"terminal"`
		} `json:"children"`
		Verified map[string]struct{ OK bool } `json:"verified"`
	}
	r.decode(t, &demo)
	require.Len(t, demo.Children, 2)
	require.Equal(t, [2]int{8, 8}, demo.Children[0].Terminal.Pos)
	require.True(t, demo.Children[0].Terminal.Done)
	require.NotEqual(t, demo.Children[0].Terminal, demo.Children[1].Terminal)
	require.Equal(t, 15, demo.SharedPrefix) // initialized, checkpoint, 6×(step, moved), checkpoint
	require.Len(t, demo.Verified, 3)
	for label, v := range demo.Verified {
		require.True(t, v.OK, label)
	}
	r = ok(t, "world", "lineage", demo.ParentWorld)
	require.Contains(t, r.stdout, "descendants (2)")
}

func TestWorldHelp(t *testing.T) {
	home(t)
	r := ok(t, "help")
	require.Contains(t, r.stdout, "ducklm world ")
	r = ok(t, "world", "help")
	for _, c := range []string{"new", "step", "run", "checkpoint", "fork", "ls", "show", "events", "lineage", "diff", "verify", "demo"} {
		require.Contains(t, r.stdout, "ducklm world "+c+" ")
	}
	r = ok(t, "world", "fork", "--help")
	require.Contains(t, r.stdout, "usage: ducklm world fork CHECKPOINT")
	r = ducklm(t, "world")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "ducklm world demo")
}

func TestWorldMutatingCommandsHoldTheLock(t *testing.T) {
	dir := home(t)
	_, run := grid(t, "5")
	lock, err := service.AcquireLock(dir)
	require.NoError(t, err)
	for _, args := range [][]string{
		{"world", "new", "--example", "branching_grid"},
		{"world", "step", run},
		{"world", "run", run, "--steps", "2"},
		{"world", "checkpoint", run},
		{"world", "demo"},
	} {
		r := ducklm(t, args...)
		require.Equal(t, cli.ExitFail, r.code, args)
		require.Contains(t, r.stderr, "ducklm is already running on "+dir)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"))
	}
	// Bad input is refused before the lock is even asked for.
	r := ducklm(t, "world", "new")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "give exactly one of")
	// Readers do not need the lock.
	ok(t, "world", "ls")
	ok(t, "world", "show", run)
	ok(t, "world", "verify", run)
	lock.Release()
	ok(t, "world", "step", run) // and the lock was released by every command above
	ok(t, "world", "step", run)
}

func TestWorldBadInputIsOneSentenceAndExitTwo(t *testing.T) {
	home(t)
	worldID, run := grid(t, "2")
	cp := ok(t, "world", "checkpoint", run).field(t, "checkpoint")
	_, other := grid(t, "4")
	_, throwaway := grid(t, "6")
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.star")
	require.NoError(t, os.WriteFile(broken, []byte("def init(:\n"), 0o600))
	partial := filepath.Join(dir, "partial.star")
	require.NoError(t, os.WriteFile(partial, []byte("def init(seed):\n    return {}\n"), 0o600))
	missing := filepath.Join(dir, "missing.star")
	unknownRun, unknownWorld, unknownCp := backend.NewID(backend.KindRun), backend.NewID(backend.KindWorld), backend.NewID(backend.KindCheckpoint)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"new"}, "give exactly one of --program FILE or --example NAME"},
		{[]string{"new", "--example", "branching_grid", "--program", broken}, "give exactly one of"},
		{[]string{"new", "--example", "nope"}, `there is no example "nope"`},
		{[]string{"new", "--program", missing}, "there is no program file " + missing},
		{[]string{"new", "--program", broken}, broken + ": world program line 1"},
		{[]string{"new", "--program", partial}, "does not define step(state, action, rng)"},
		{[]string{"new", "--example", "branching_grid", "--seed", "-1"}, "--seed is a whole number"},
		{[]string{"new", "--example", "branching_grid", "--seed", "abc"}, `invalid value "abc" for flag -seed`},
		{[]string{"new", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"step"}, "world step needs RUN"},
		{[]string{"step", worldID}, "is a world id, but a run id was expected"},
		{[]string{"step", "run_123"}, "is not a valid run id"},
		{[]string{"step", unknownRun}, "there is no run " + unknownRun},
		{[]string{"step", run, "--action", "{bad"}, "--action is not valid JSON"},
		{[]string{"step", run, "extra"}, "takes at most 1 argument(s)"},
		{[]string{"step", throwaway, "--action", `"X"`}, "action must be one of N, S, E, W"},
		{[]string{"run", run}, "world run needs --steps N"},
		{[]string{"run", run, "--steps", "-2"}, "--steps must be a positive number"},
		{[]string{"run", run, "--steps", "2", "--checkpoint-every", "-1"}, "--checkpoint-every must not be negative"},
		{[]string{"checkpoint", cp}, "is a checkpoint id, but a run id was expected"},
		{[]string{"fork", run, "--divergence", "state_patch"}, "is a run id, but a checkpoint id was expected"},
		{[]string{"fork", unknownCp, "--divergence", "state_patch"}, "there is no checkpoint " + unknownCp},
		{[]string{"fork", cp}, "world fork needs --divergence"},
		{[]string{"fork", cp, "--divergence", "teleport"}, `unknown divergence "teleport"`},
		{[]string{"fork", cp, "--divergence", "state_patch", "--delta", "{x"}, "--delta is not valid JSON"},
		{[]string{"fork", cp, "--divergence", "state_patch", "--delta", "[1]"}, "a state_patch delta is a JSON object"},
		{[]string{"fork", cp, "--divergence", "seed_change"}, "a seed_change needs the seed policy derive or fresh"},
		{[]string{"fork", cp, "--divergence", "state_patch", "--seed-policy", "maybe"}, `unknown seed policy "maybe"`},
		{[]string{"fork", cp, "--divergence", "state_patch", "--run", worldID}, "is a world id, but a run id was expected"},
		{[]string{"fork", cp, "--divergence", "state_patch", "--run", other}, "is not in the history of run " + other},
		{[]string{"fork", cp, "--divergence", "state_patch", "--deliberation-index", "-1"}, "--deliberation-index must not be negative"},
		{[]string{"fork", cp, "--divergence", "program_change", "--delta", `{"program": "def init(:"}`}, "world program line 1"},
		{[]string{"show"}, "world show needs WORLD|RUN"},
		{[]string{"show", cp}, "world show takes a world or run id"},
		{[]string{"show", "hello"}, `"hello" is not a ducklm id`},
		{[]string{"show", unknownWorld}, "there is no world " + unknownWorld},
		{[]string{"events", worldID}, "is a world id, but a run id was expected"},
		{[]string{"events", unknownRun}, "there is no run " + unknownRun},
		{[]string{"events", run, "--limit", "-1"}, "--limit must not be negative"},
		{[]string{"lineage", run}, "is a run id, but a world id was expected"},
		{[]string{"lineage", unknownWorld}, "there is no world " + unknownWorld},
		{[]string{"diff", run}, "world diff needs RUN"},
		{[]string{"diff", run, worldID}, "is a world id, but a run id was expected"},
		{[]string{"diff", run, unknownRun}, "there is no run " + unknownRun},
		{[]string{"verify", worldID}, "is a world id, but a run id was expected"},
		{[]string{"verify", unknownRun}, "there is no run " + unknownRun},
		{[]string{"ls", "extra"}, `world ls takes no arguments, but got "extra"`},
		{[]string{"demo", "extra"}, "world demo takes no arguments"},
	} {
		r := ducklm(t, append([]string{"world"}, c.args...)...)
		require.Equal(t, cli.ExitUsage, r.code, "%v: %s", c.args, r.stderr)
		require.Empty(t, r.stdout, c.args)
		require.True(t, strings.HasPrefix(r.stderr, "ducklm world: "), r.stderr)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one sentence for %v: %q", c.args, r.stderr)
		require.Contains(t, r.stderr, c.want, c.args)
		for _, leak := range []string{"sql", "gorm", "%!", "goroutine", "internal error", "open " + missing} {
			require.NotContains(t, strings.ToLower(r.stderr), leak, c.args)
		}
	}

	r := ducklm(t, "world", "bogus")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, `unknown world command "bogus"`)

	// Nothing bad was stored: the three grids, and no fork.
	var nodes []world.Node
	ok(t, "world", "ls", "--json").decode(t, &nodes)
	require.Len(t, nodes, 3)

	// Bad input never touches the data directory.
	fresh := filepath.Join(t.TempDir(), "never")
	t.Setenv("DUCKLM_HOME", fresh)
	require.Equal(t, cli.ExitUsage, ducklm(t, "world", "step", worldID).code)
	require.Equal(t, cli.ExitUsage, ducklm(t, "world", "fork", cp, "--delta", "{").code)
	require.NoDirExists(t, fresh)
}
