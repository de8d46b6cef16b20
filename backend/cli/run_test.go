package cli_test

// These tests set DUCKLM_HOME and OLLAMA_HOST with t.Setenv, so none of
// them runs in parallel.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/cli"
	"ducklm/backend/planner"
	"ducklm/backend/runtime"
)

// taskHome is a fresh data directory with no Ollama: nothing listens on
// port 1, so every model call fails at once.
func taskHome(t *testing.T) string {
	t.Helper()
	dir := home(t)
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	return dir
}

// ducklmIn runs one invocation with stdin as its input.
func ducklmIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(cli.Env{Ctx: context.Background(), Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(stdin)}, args)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

func requireCode(t *testing.T, r result, code int, args ...string) {
	t.Helper()
	require.Equal(t, code, r.code, "ducklm %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.stdout, r.stderr)
}

var (
	runStarted  = regexp.MustCompile(`run (run_[0-9a-f]+) started`)
	approveHint = regexp.MustCompile(`waiting for approval of step step-1: ducklm approve (apr_[0-9a-f]+) \(or deny\)`)
)

func startedRun(t *testing.T, r result) string {
	t.Helper()
	m := runStarted.FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)
	return m[1]
}

func runsJSON(t *testing.T) []runtime.RunSummary {
	t.Helper()
	var runs []runtime.RunSummary
	ok(t, "runs", "--json").decode(t, &runs)
	return runs
}

func TestRunOneLinerStreamsItsOutputAndCompletes(t *testing.T) {
	taskHome(t)
	args := []string{"run", "$ echo hi", "--approve", "auto"}
	// "y" answers the prompt on a machine without bubblewrap, where even
	// auto asks before a shell step; with it, nothing asks.
	r := ducklmIn(t, "y\n", args...)
	requireCode(t, r, cli.ExitOK, args...)
	runID := startedRun(t, r)
	require.Contains(t, r.stdout, "task.received")
	require.Contains(t, r.stdout, `step.started             step-1 shell_exec {"command":"echo hi"}`)
	require.Contains(t, r.stdout, "step.finished            step-1 exit 0 · score 0.9 (rule of thumb): The step succeeded and produced output.\n      hi\n", "the step's output is streamed, with its critique")
	require.Contains(t, r.stdout, "run.completed")
	require.NotContains(t, r.stdout, "decision.applied", "bookkeeping stays in the ledger")
	require.NotContains(t, r.stdout, "memory.policy", "bookkeeping stays in the ledger")
	require.Contains(t, r.stderr, "run "+runID+" completed: Every step of the plan is done.")

	runs := runsJSON(t)
	require.Len(t, runs, 1)
	require.Equal(t, runID, runs[0].Run.ID)
	require.Equal(t, backend.RunCompleted, runs[0].Run.Status)
	require.Equal(t, "$ echo hi", runs[0].Task)
	require.Equal(t, 1, runs[0].StepsDone)
}

func TestRunAnswersApprovalsAtThePrompt(t *testing.T) {
	taskHome(t)

	args := []string{"run", "$ echo yes-please", "--approve", "ask"}
	r := ducklmIn(t, "y\n", args...)
	requireCode(t, r, cli.ExitOK, args...)
	require.Contains(t, r.stderr, "step step-1 wants to run shell_exec\n")
	require.Contains(t, r.stderr, `{"command":"echo yes-please"}`)
	require.Contains(t, r.stderr, "  time limit 2m0s: stopped and failed, not retried\n", "the prompt states the limit")
	require.Contains(t, r.stderr, "approve? [y]es, [n]o, [e]dit arguments: ")
	require.Contains(t, r.stdout, "\n      yes-please\n")
	require.Contains(t, r.stderr, "completed")

	args = []string{"run", "$ echo no-thanks", "--approve", "ask"}
	r = ducklmIn(t, "n\n", args...)
	requireCode(t, r, cli.ExitFail, args...)
	require.Contains(t, r.stdout, "step.denied")
	require.NotContains(t, r.stdout, "\n      no-thanks\n", "a denied step never runs")
	require.Regexp(t, `run run_[0-9a-f]+ failed: The run cannot go on: you denied "step-1", and ducklm does not plan around a no\.`, r.stderr)

	args = []string{"run", "$ echo original", "--approve", "ask"}
	r = ducklmIn(t, "e\n{\"command\":\"echo edited\"}\n", args...)
	requireCode(t, r, cli.ExitOK, args...)
	require.Contains(t, r.stderr, "new arguments as JSON: ")
	require.Contains(t, r.stdout, `step.started             step-1 shell_exec {"command":"echo edited"}`)
	require.Contains(t, r.stdout, "\n      edited\n")
	require.NotContains(t, r.stdout, "\n      original\n")

	// Edited arguments the tool refuses are refused at the prompt, which
	// asks again.
	args = []string{"run", "$ echo original", "--approve", "ask"}
	r = ducklmIn(t, "e\n{\"cmd\":\"x\"}\ny\n", args...)
	requireCode(t, r, cli.ExitOK, args...)
	require.Contains(t, r.stderr, "the edited arguments are not valid")
	require.Equal(t, 2, strings.Count(r.stderr, "approve? "), r.stderr)
	require.Contains(t, r.stdout, "\n      original\n")

	runs := runsJSON(t)
	require.Len(t, runs, 4)
}

func TestClosedStdinLeavesTheRunWaitingForApprove(t *testing.T) {
	dir := taskHome(t)
	args := []string{"run", "$ echo approved-later > later.txt; cat later.txt", "--approve", "ask"}
	r := ducklmIn(t, "", args...)
	requireCode(t, r, cli.ExitOK, args...)
	runID := startedRun(t, r)
	m := approveHint.FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)
	requestID := m[1]
	require.NoError(t, backend.CheckID(requestID, backend.KindApproval))
	_, err := os.Stat(filepath.Join(dir, "workspaces", runID, "later.txt"))
	require.True(t, os.IsNotExist(err), "nothing ran before the approval")

	text := ok(t, "runs")
	require.Regexp(t, runID+`\s+awaiting approval\s+1\s+0/1\s`, text.stdout)
	runs := runsJSON(t)
	require.Len(t, runs, 1)
	require.Equal(t, 1, runs[0].Approvals)

	r = ducklmIn(t, "", "approve", requestID)
	requireCode(t, r, cli.ExitOK, "approve", requestID)
	require.Contains(t, r.stderr, "step step-1 of run "+runID+" approved")
	require.Contains(t, r.stdout, "\n      approved-later\n")
	require.Contains(t, r.stderr, "run "+runID+" completed")
	content, err := os.ReadFile(filepath.Join(dir, "workspaces", runID, "later.txt"))
	require.NoError(t, err)
	require.Equal(t, "approved-later\n", string(content))

	runs = runsJSON(t)
	require.Equal(t, backend.RunCompleted, runs[0].Run.Status)
	require.Zero(t, runs[0].Approvals)

	// The request was answered; a finished run cannot be cancelled.
	r = ducklm(t, "approve", requestID)
	requireCode(t, r, cli.ExitUsage, "approve", requestID)
	require.Equal(t, "ducklm approve: no run is waiting on approval request "+requestID+" (ducklm runs lists the waiting ones)\n", r.stderr)
	r = ducklm(t, "cancel", runID)
	requireCode(t, r, cli.ExitUsage, "cancel", runID)
	require.Equal(t, "ducklm cancel: run "+runID+" is already completed\n", r.stderr)
}

func TestRunsListsACancelledRunOnOneLineWithNothingToApprove(t *testing.T) {
	taskHome(t)
	args := []string{"run", "$ echo never\n\tsecond line of the task", "--approve", "ask"}
	r := ducklmIn(t, "", args...)
	requireCode(t, r, cli.ExitOK, args...)
	runID := startedRun(t, r)
	requestID := approveHint.FindStringSubmatch(r.stderr)[1]

	r = ducklm(t, "cancel", runID)
	requireCode(t, r, cli.ExitOK, "cancel", runID)
	text := ok(t, "runs")
	lines := strings.Split(strings.TrimSpace(text.stdout), "\n")
	require.Len(t, lines, 2, "a header and one line for the run, whatever its task holds:\n%s", text.stdout)
	require.Regexp(t, runID+`\s+cancelled\s+0\s+0/1\s.*echo never second line of the task`, lines[1])
	require.Zero(t, runsJSON(t)[0].Approvals, "a cancelled run waits for nobody")

	r = ducklm(t, "approve", requestID)
	requireCode(t, r, cli.ExitUsage, "approve", requestID)
	require.Equal(t, "ducklm approve: no run is waiting on approval request "+requestID+" (ducklm runs lists the waiting ones)\n", r.stderr)
	r = ducklm(t, "cancel", runID)
	requireCode(t, r, cli.ExitUsage, "cancel", runID)
	require.Equal(t, "ducklm cancel: run "+runID+" is already cancelled\n", r.stderr)
}

func TestRunWithAPlanFile(t *testing.T) {
	taskHome(t)
	file := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"nodes": [
		{"id": "write", "kind": "tool", "tool": "file_write", "args": {"path": "note.txt", "content": "from a plan file"}},
		{"id": "read", "kind": "tool", "tool": "file_read", "args": {"path": "note.txt"}, "depends_on": ["write"]}]}`), 0o600))
	args := []string{"run", "--plan", file, "--approve", "auto", "--json"}
	r := ducklmIn(t, "y\ny\n", args...)
	requireCode(t, r, cli.ExitOK, args...)
	var last backend.Event
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	n := 0
	for dec.More() {
		require.NoError(t, dec.Decode(&last))
		n++
		require.EqualValues(t, n, last.Seq, "--json streams every event in order")
	}
	require.Equal(t, runtime.EvCheckpoint, last.Type)
	runs := runsJSON(t)
	require.Equal(t, "explicit plan", runs[0].Task)
	require.Equal(t, backend.RunCompleted, runs[0].Run.Status)
	require.Equal(t, 2, runs[0].StepsDone)
}

// TestRunReturnsAsSoonAsTheRunEnds: the command looks at the run when an
// event can end or park it, not only after a quiet spell (it waited 150 ms
// after every run's last event, the longest part of a short run). The lag
// is taken to the line saying how the run ended, written before the data
// directory closes.
func TestRunReturnsAsSoonAsTheRunEnds(t *testing.T) {
	taskHome(t)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "f.txt"), []byte("hello\n"), 0o600))
	file := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"nodes": [{"id": "s0", "kind": "tool", "tool": "file_read", "args": {"path": "f.txt"}}]}`), 0o600))
	args := []string{"run", "--plan", file, "--approve", "auto", "--workspace", ws, "--json"}
	for i := 0; i < 3; i++ {
		var out bytes.Buffer
		errOut := &stampedWriter{marker: " completed"}
		code := cli.Run(cli.Env{Ctx: context.Background(), Stdout: &out, Stderr: errOut, Stdin: strings.NewReader("")}, args)
		requireCode(t, result{stdout: out.String(), stderr: errOut.String(), code: code}, cli.ExitOK, args...)
		var last backend.Event
		dec := json.NewDecoder(&out)
		for dec.More() {
			require.NoError(t, dec.Decode(&last))
		}
		require.Equal(t, runtime.EvCheckpoint, last.Type, "the stream ends with the run's last checkpoint")
		require.False(t, errOut.at.IsZero(), errOut.String())
		lag := errOut.at.Sub(last.RecordedAt)
		// Waiting for a quiet spell took 150 ms after the last event at least.
		require.Less(t, lag, 150*time.Millisecond, "run %d: the command said the run ended %s after its last event", i, lag)
	}
}

// stampedWriter keeps what is written and when marker first appeared.
type stampedWriter struct {
	marker string
	mu     sync.Mutex
	buf    bytes.Buffer
	at     time.Time
}

func (w *stampedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.at.IsZero() && strings.Contains(w.buf.String(), w.marker) {
		w.at = time.Now()
	}
	return n, err
}

func (w *stampedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestRunBadInputIsOneSentenceAndExitTwo(t *testing.T) {
	taskHome(t)
	notPlan := filepath.Join(t.TempDir(), "not-a-plan.json")
	require.NoError(t, os.WriteFile(notPlan, []byte(`{"steps": []}`), 0o600))
	unknownRequest := backend.NewID(backend.KindApproval)
	unknownRun := backend.NewID(backend.KindRun)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "run needs a task or --plan"},
		{[]string{"run", "$ echo x", "--approve", "maybe"}, `--approve is ask, risky or auto, not "maybe"`},
		{[]string{"run", "$ echo x", "--model", "x"}, `--model takes ROLE=NAME (planner, coder, critic), not "x"`},
		{[]string{"run", "--plan", filepath.Join(t.TempDir(), "missing.json")}, "cannot read the plan file"},
		{[]string{"run", "--plan", notPlan}, "is not a valid plan"},
		{[]string{"run", "a", "b"}, "run takes at most 1 argument(s), but got 2"},
		{[]string{"run", "x", "--frobnicate"}, "flag provided but not defined: -frobnicate"},
		{[]string{"approve", unknownRequest}, "no run is waiting on approval request " + unknownRequest},
		{[]string{"approve", "apr_nope"}, "apr_nope"},
		{[]string{"approve", unknownRequest, "--args", "{nope"}, "--args is not valid JSON"},
		{[]string{"deny"}, "deny needs REQUEST"},
		{[]string{"resume", unknownRun}, unknownRun},
		{[]string{"cancel", "run_nope"}, "run_nope"},
	} {
		r := ducklm(t, c.args...)
		requireCode(t, r, cli.ExitUsage, c.args...)
		require.Contains(t, r.stderr, c.want, "ducklm %s", strings.Join(c.args, " "))
		require.True(t, strings.HasPrefix(r.stderr, "ducklm "+c.args[0]+": "), r.stderr)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one sentence, one line: %q", r.stderr)
		require.Empty(t, r.stdout)
	}
	require.Empty(t, runsJSON(t), "no bad input created a run")
}

func TestNaturalLanguageTaskWithoutOllamaPauses(t *testing.T) {
	taskHome(t)
	args := []string{"run", "summarise the notes in my workspace"}
	r := ducklm(t, args...)
	requireCode(t, r, cli.ExitOK, args...)
	runID := startedRun(t, r)
	require.Contains(t, r.stderr, "run "+runID+" is paused: "+planner.NeedsModel+"\nresume it with: ducklm resume "+runID+"\n")
	runs := runsJSON(t)
	require.Len(t, runs, 1)
	require.Equal(t, backend.RunPaused, runs[0].Run.Status)

	// Resuming without a model pauses again, with the same sentence.
	r = ducklm(t, "resume", runID)
	requireCode(t, r, cli.ExitOK, "resume", runID)
	require.Contains(t, r.stderr, "run "+runID+" is paused: "+planner.NeedsModel)
}

// world show of a task run: its world names no program (the task is the
// run's first event), which it says instead of a digest or an error.
func TestWorldShowOfATaskRun(t *testing.T) {
	taskHome(t)
	args := []string{"run", "$ echo hi", "--approve", "auto"}
	r := ducklmIn(t, "y\n", args...)
	requireCode(t, r, cli.ExitOK, args...)
	runID := startedRun(t, r)
	show := ok(t, "world", "show", runID).stdout
	require.Contains(t, show, "backend: task\n")
	require.Contains(t, show, "program: - (the task is its run's first event, task.received)\n")
	require.Contains(t, show, "run: "+runID+"\n")
	var out struct {
		World backend.WorldSpec `json:"world"`
	}
	ok(t, "world", "show", runID, "--json").decode(t, &out)
	require.Equal(t, runtime.BackendTask, out.World.Backend)
	require.Empty(t, out.World.Program.Digest)
}
