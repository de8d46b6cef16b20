package crash_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/prereq"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
	"ducklm/backend/store"
)

// The runtime crash test kills a ducklm process at random moments while it
// runs multi-step tasks whose steps leave marks outside the process (a line
// in a file of the run's workspace), restarts it on the same data
// directory, and checks after every life that the ledger is whole and that
// no step took effect twice unless the user approved it again after it was
// left in doubt.

const (
	runtimeChildEnv = "DUCKLM_CRASH_RUNTIME_DIR"
	noSubmitEnv     = "DUCKLM_CRASH_RUNTIME_NO_SUBMIT"
	readsEnv        = "DUCKLM_CRASH_RUNTIME_READS" // the children submit readPlan
	// startsFirstEnv has a child record every read's start before the
	// read runs (runtime.Deps.StartGrace < 0): a quick read records it
	// with its result, so only these lives can kill a read whose start is
	// recorded.
	startsFirstEnv = "DUCKLM_CRASH_RUNTIME_STARTS_FIRST"
	crashReads     = 300
	crashRuns      = 10 // runs the children submit in all
	crashSteps     = 8
	effectsFile    = "effects.log"
	noOllama       = "127.0.0.1:1" // the tasks are explicit plans: no model is needed
)

// crashPlan is two chains of four shell steps, each followed by a read of
// the effects file; each shell step sleeps, appends its marker to the
// effects file, and sleeps again, so kills land before, during and after
// the effect. A read (file_read: safe to repeat, its start not synced) may
// run again after a kill; a shell step never does without a fresh approval.
func crashPlan() *backend.TaskGraph {
	g := &backend.TaskGraph{}
	for i := 1; i <= crashSteps; i++ {
		id := fmt.Sprintf("step-%d", i)
		cmd := fmt.Sprintf("sleep 0.0%d; echo %s >> %s; sleep 0.%d", 2+i%5, id, effectsFile, 1+i%2)
		args, _ := json.Marshal(map[string]string{"command": cmd})
		node := backend.TaskNode{ID: id, Kind: backend.KindToolStep, Tool: "shell_exec", Args: args, DependsOn: []string{}}
		if i != 1 && i != 5 {
			node.DependsOn = []string{fmt.Sprintf("read-%d", i-1)}
		}
		read, _ := json.Marshal(map[string]string{"path": effectsFile})
		g.Nodes = append(g.Nodes, node, backend.TaskNode{ID: fmt.Sprintf("read-%d", i), Kind: backend.KindToolStep,
			Tool: "file_read", Args: read, DependsOn: []string{id}})
	}
	return g
}

// readPlan is a chain of reads of one file: every step safe to repeat, so
// a kill lands in a read's start most of the time.
func readPlan() *backend.TaskGraph {
	g := &backend.TaskGraph{}
	read, _ := json.Marshal(map[string]string{"path": effectsFile})
	for i := 1; i <= crashReads; i++ {
		node := backend.TaskNode{ID: fmt.Sprintf("read-%d", i), Kind: backend.KindToolStep, Tool: "file_read", Args: read, DependsOn: []string{}}
		if i > 1 {
			node.DependsOn = []string{fmt.Sprintf("read-%d", i-1)}
		}
		g.Nodes = append(g.Nodes, node)
	}
	return g
}

// runtimeCrashChild is the child process of TestKilledRuntime…: it holds
// the data directory, resumes what was moving, and submits a new run
// whenever none is moving, until it is killed.
func runtimeCrashChild(dir string) {
	ctx := context.Background()
	svc, release := openChild(dir)
	defer release()
	if _, err := svc.StartRuntime(ctx); err != nil {
		childFail("resume", err)
	}
	fmt.Println("ready")
	submit := os.Getenv(noSubmitEnv) == ""
	for {
		runs, err := svc.Runtime.Runs(ctx)
		if err != nil {
			childFail("list runs", err)
		}
		moving, waiting := 0, 0
		for _, r := range runs {
			switch {
			case r.Run.Status == backend.RunAwaitingApproval && r.Approvals > 0:
				waiting++
			case !r.Run.Status.Terminal():
				moving++ // an answered run is about to move again
			}
		}
		switch {
		case moving > 0:
		case submit && len(runs) < crashRuns:
			req := runtime.TaskRequest{Task: "leave marks", Plan: crashPlan(), ApprovalMode: runtime.AutoSandboxed, Concurrency: 2}
			if os.Getenv(readsEnv) != "" {
				// The reads share a workspace that holds an empty effects file.
				ws := dir + "-reads"
				if err := os.MkdirAll(ws, 0o700); err != nil {
					childFail("workspace", err)
				}
				if err := os.WriteFile(filepath.Join(ws, effectsFile), nil, 0o600); err != nil {
					childFail("effects file", err)
				}
				req = runtime.TaskRequest{Task: "read", Plan: readPlan(), ApprovalMode: runtime.AutoSandboxed, Workspace: ws,
					MaxSteps: 2 * crashReads, MaxPlanSteps: crashReads} // a read run again is a step run
			}
			run, err := svc.Runtime.Submit(ctx, req)
			if err != nil {
				childFail("submit", err)
			}
			fmt.Println("submitted", run.ID)
		case waiting > 0:
			fmt.Println("waiting")
		default:
			fmt.Println("idle")
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// childFail ends a child with what went wrong (exit 3, which the parent
// reports with the child's stderr).
func childFail(what string, err error) {
	fmt.Fprintf(os.Stderr, "child: %s: %v\n", what, err)
	os.Exit(3)
}

// openChild holds the data directory and opens it as a ducklm process does;
// release lets it go.
func openChild(dir string) (svc *service.Service, release func()) {
	lock, err := service.AcquireLock(dir)
	if err != nil {
		childFail("lock", err)
	}
	opts := service.Options{OllamaHost: noOllama}
	if os.Getenv(startsFirstEnv) != "" {
		opts.StartGrace = -1
	}
	svc, err = service.OpenWith(context.Background(), dir, opts)
	if err != nil {
		childFail("open", err)
	}
	return svc, func() { lock.Release() }
}

// child is one life of the child process.
type child struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *strings.Builder
}

func startChild(t *testing.T, dir string, submit bool) *child {
	t.Helper()
	var env []string
	if !submit {
		env = append(env, noSubmitEnv+"=1")
	}
	return startChildOf(t, runtimeChildEnv, dir, env...)
}

// startChildOf starts this test binary as the child that dirEnv names
// (TestMain), with dirEnv=dir and env in its environment.
func startChildOf(t *testing.T, dirEnv, dir string, env ...string) *child {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), dirEnv+"="+dir), env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c := &child{cmd: cmd, lines: make(chan string, 1024), stderr: &strings.Builder{}}
	cmd.Stderr = c.stderr
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

// await reads the child's lines until one starts with a prefix in want.
func (c *child) await(t *testing.T, timeout time.Duration, want ...string) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-c.lines:
			require.True(t, ok, "the child exited: %s", c.stderr.String())
			for _, w := range want {
				if strings.HasPrefix(line, w) {
					return line
				}
			}
		case <-deadline:
			c.kill(t)
			t.Fatalf("the child printed none of %q in %s", want, timeout)
		}
	}
}

func (c *child) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, c.cmd.Wait(), "the child was killed")
	for range c.lines { // let the reader finish
	}
}

func TestKilledRuntimeNeverRepeatsAnEffect(t *testing.T) {
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "the steps must run sandboxed without asking: %s", why)
	}
	dir := t.TempDir()
	const trials = 24
	totals := tally{}
	for trial := 0; trial < trials; trial++ {
		c := startChild(t, dir, true)
		c.await(t, 20*time.Second, "ready")
		time.Sleep(time.Duration(100+rand.IntN(800)) * time.Millisecond)
		c.kill(t)
		totals.add(betweenLives(t, dir, fmt.Sprintf("trial %d", trial)))
	}
	// Then every run must finish: lives without kills, answering what
	// they ask between them, until nothing moves.
	for life := 0; ; life++ {
		require.Less(t, life, 10, "the runs never settled")
		c := startChild(t, dir, false)
		c.await(t, 20*time.Second, "ready")
		line := c.await(t, 40*time.Second, "idle", "waiting")
		c.kill(t)
		s := betweenLives(t, dir, fmt.Sprintf("settling life %d", life))
		t.Logf("settling life %d: %s; %+v", life, line, s)
		totals.add(s)
		if line == "idle" && s.approved == 0 {
			require.Equal(t, s.runs, s.completed, "every run completed")
			break
		}
	}
	require.Positive(t, totals.runs, "the children got runs going")
	require.Positive(t, totals.inDoubt, "kills landed while steps ran")
	t.Logf("%d kills; %d runs; %d steps left in doubt, re-approved %d times; %d effects seen twice (each after a fresh approval); %d reads run again without asking",
		trials, totals.runs, totals.inDoubt, totals.approved, totals.repeated, totals.reread)
}

// TestKilledRuntimeRunsReadsAgain kills a ducklm process while it runs
// chains of reads (file_read: safe to repeat, so their starts are not
// synced, and a quick one's start is recorded with its result): a read a
// kill cut short runs again when the run is taken up, without asking and
// without being in doubt, and every run completes. Eighteen lives of
// twenty-four record each read's start before the read runs, so kills
// also land on reads whose start is recorded: about a third of a read's
// time is between its start's commit and its result's, and ten such
// lives found none once in twenty.
func TestKilledRuntimeRunsReadsAgain(t *testing.T) {
	dir := t.TempDir()
	const trials = 24
	totals := tally{}
	for trial := 0; trial < trials; trial++ {
		env := []string{readsEnv + "=1"}
		if trial%4 != 3 {
			env = append(env, startsFirstEnv+"=1")
		}
		c := startChildOf(t, runtimeChildEnv, dir, env...)
		c.await(t, 20*time.Second, "ready")
		time.Sleep(time.Duration(100+rand.IntN(400)) * time.Millisecond)
		c.kill(t)
		totals.add(betweenLives(t, dir, fmt.Sprintf("trial %d", trial)))
	}
	for life := 0; ; life++ {
		require.Less(t, life, 10, "the runs never settled")
		c := startChildOf(t, runtimeChildEnv, dir, readsEnv+"=1", noSubmitEnv+"=1")
		c.await(t, 20*time.Second, "ready")
		line := c.await(t, 60*time.Second, "idle", "waiting")
		c.kill(t)
		s := betweenLives(t, dir, fmt.Sprintf("settling life %d", life))
		totals.add(s)
		if line == "idle" {
			require.Equal(t, s.runs, s.completed, "every run completed")
			break
		}
	}
	require.Positive(t, totals.runs, "the children got runs going")
	require.Zero(t, totals.inDoubt, "a read is never in doubt")
	require.Zero(t, totals.approved, "nothing asked")
	require.Positive(t, totals.reread, "kills landed while reads ran, and they ran again")
	t.Logf("%d kills; %d runs; %d reads run again without asking", trials, totals.runs, totals.reread)
}

// tally is what one inspection between lives saw.
type tally struct {
	runs, completed, inDoubt, approved, repeated, reread int
}

func (t *tally) add(o tally) {
	t.runs = max(t.runs, o.runs)
	t.inDoubt = max(t.inDoubt, o.inDoubt)
	t.approved += o.approved
	t.repeated = max(t.repeated, o.repeated)
	t.reread = max(t.reread, o.reread)
}

// betweenLives is the user between two lives of ducklm: it holds the data
// directory, checks the database and every run against the marks its steps
// left, and approves the steps that ask to run again.
func betweenLives(t *testing.T, dir, when string) tally {
	t.Helper()
	ctx := context.Background()
	// The kernel frees the lock once every holder of its file is gone: a
	// step process forked by the child holds it until its exec (the file
	// is close-on-exec) or until the parent's death signal reaches it.
	var lock *service.Lock
	var err error
	for start := time.Now(); ; {
		if lock, err = service.AcquireLock(dir); err == nil || time.Since(start) > 10*time.Second {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, err, "%s: the dead child's lock is free", when)
	defer lock.Release()
	svc, err := service.OpenWith(ctx, dir, service.Options{OllamaHost: noOllama})
	require.NoError(t, err, "%s: the data directory reopens", when)
	defer svc.Close()
	// This process only reads and answers; nothing may drive a run here
	// (an answer would otherwise start the run in the test process).
	svc.Runtime.Close()

	var integrity string
	require.NoError(t, svc.DB.SQL.QueryRow("PRAGMA integrity_check").Scan(&integrity))
	require.Equal(t, "ok", integrity, when)
	requireGapFree(t, svc, when)

	var s tally
	summaries, err := svc.Runtime.Runs(ctx)
	require.NoError(t, err)
	for _, sum := range summaries {
		s.runs++
		if sum.Run.Status == backend.RunCompleted {
			s.completed++
		}
		require.NotEqual(t, backend.RunFailed, sum.Run.Status, "%s: run %s failed: %s", when, sum.Run.ID, sum.Run.Error)
		require.NotEqual(t, backend.RunPaused, sum.Run.Status, "%s: run %s paused: nothing here needs a model", when, sum.Run.ID)
		inDoubt, repeated, reads := checkEffects(t, svc, sum.Run.ID, when)
		s.inDoubt += inDoubt
		s.repeated += repeated
		s.reread += reads
	}
	open, err := svc.Runtime.Approvals(ctx, "")
	require.NoError(t, err)
	for _, a := range open {
		require.True(t, a.InDoubt, "%s: auto_sandboxed asks only about steps left in doubt, not %s (%s)", when, a.Step, a.Rule)
		require.NoError(t, svc.Runtime.Answer(ctx, a.RunID, runtime.Answer{RequestID: a.RequestID, Approve: true, By: "crash test"}))
		s.approved++
	}
	return s
}

func requireGapFree(t *testing.T, svc *service.Service, when string) {
	t.Helper()
	rows, err := svc.DB.SQL.Query("SELECT stream_id, count(*), max(seq) FROM events GROUP BY stream_id")
	require.NoError(t, err)
	defer rows.Close()
	l := store.NewLedger(svc.DB)
	for rows.Next() {
		var stream string
		var n, top int64
		require.NoError(t, rows.Scan(&stream, &n, &top))
		require.Equal(t, n, top, "%s: stream %s has a gap", when, stream)
		head, err := l.Head(context.Background(), stream)
		require.NoError(t, err)
		require.Equal(t, top, head, "%s: stream %s head matches its events", when, stream)
	}
	require.NoError(t, rows.Err())
}

// checkEffects compares a run's marks with its ledger: a step's marker may
// appear no more often than the step started, and more than once only when
// the user approved it again after it was left in doubt. It returns the
// steps left in doubt and the markers seen twice.
func checkEffects(t *testing.T, svc *service.Service, runID, when string) (inDoubt, repeated, reads int) {
	t.Helper()
	ctx := context.Background()
	st, _, err := svc.Runtime.Load(ctx, runID)
	require.NoError(t, err)
	events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: runID})
	require.NoError(t, err)
	started := map[string]int{}
	doubted := map[string]int{}
	doubtRequests := map[string]bool{}
	reapproved := map[string]int{}
	reread := map[string]int{} // reads run again after a kill
	for _, e := range events {
		var p struct {
			Step      string `json:"step"`
			RequestID string `json:"requestId"`
			InDoubt   bool   `json:"inDoubt"`
		}
		require.NoError(t, json.Unmarshal(e.Payload, &p))
		switch e.Type {
		case runtime.EvStepStarted:
			started[p.Step]++
			require.LessOrEqual(t, started[p.Step], 1+reapproved[p.Step]+reread[p.Step],
				"%s: run %s started %s again without a fresh approval", when, runID, p.Step)
		case runtime.EvStepRetrying:
			// Only a read runs again after a kill, without asking.
			require.True(t, strings.HasPrefix(p.Step, "read-"), "%s: run %s: %s was retried", when, runID, p.Step)
			reread[p.Step]++
		case runtime.EvStepInDoubt:
			doubted[p.Step]++
		case runtime.EvApprovalRequested:
			doubtRequests[p.RequestID] = p.InDoubt
		case runtime.EvApproved:
			require.True(t, doubtRequests[p.RequestID], "%s: run %s: only in-doubt steps ask", when, runID)
			reapproved[p.Step]++
		}
	}
	data, err := os.ReadFile(filepath.Join(st.Request.Workspace, effectsFile))
	if os.IsNotExist(err) {
		data, err = nil, nil
	}
	require.NoError(t, err)
	lines := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line != "" {
			lines[line]++
		}
	}
	for marker, n := range lines {
		require.Contains(t, st.Steps, marker, "%s: run %s: unknown mark %q", when, runID, marker)
		require.LessOrEqual(t, n, started[marker], "%s: run %s: %s took effect more often than it started", when, runID, marker)
		require.LessOrEqual(t, n, 1+reapproved[marker],
			"%s: run %s: %s took effect %d times with %d fresh approvals", when, runID, marker, n, reapproved[marker])
		require.LessOrEqual(t, reapproved[marker], doubted[marker], "%s: run %s: approved again only after being in doubt", when, runID)
		if n > 1 {
			repeated++
		}
	}
	for id, rec := range st.Steps {
		if st.Status == backend.RunCompleted {
			require.Equal(t, runtime.StepDone, rec.State, "%s: run %s completed without step %s", when, runID, id)
		}
		if strings.HasPrefix(id, "read-") {
			require.Zero(t, doubted[id], "%s: run %s: a read is never in doubt", when, runID)
			reads += reread[id]
			continue
		}
		if rec.State == runtime.StepDone {
			require.GreaterOrEqual(t, lines[id], 1, "%s: run %s: %s is done, so its mark is there", when, runID, id)
		}
		inDoubt += doubted[id]
	}
	return inDoubt, repeated, reads
}

// TestRunWithoutItsFirstEventIsRecordedOnResume plays a kill inside Submit:
// the run's row is committed, its task.received is not. On the next start
// the run is recorded from its spec and runs, instead of waiting forever
// for a model with an empty task.
func TestRunWithoutItsFirstEventIsRecordedOnResume(t *testing.T) {
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "the step must run sandboxed without asking: %s", why)
	}
	ctx := context.Background()
	dir := t.TempDir()
	svc, err := service.OpenWith(ctx, dir, service.Options{OllamaHost: noOllama})
	require.NoError(t, err)
	args, _ := json.Marshal(map[string]string{"command": "echo recovered >> " + effectsFile})
	req := runtime.TaskRequest{Task: "half submitted", ApprovalMode: runtime.AutoSandboxed, Limits: backend.DefaultLimits(),
		MaxSteps: 5, MaxReplans: 2, MaxRetries: 1, Concurrency: 2,
		Plan: &backend.TaskGraph{Nodes: []backend.TaskNode{{ID: "only", Kind: backend.KindToolStep, Tool: "shell_exec", Args: args, DependsOn: []string{}}}}}
	data, err := json.Marshal(req)
	require.NoError(t, err)
	ref, err := svc.Blobs.Put(ctx, data, "application/json")
	require.NoError(t, err)
	now := time.Now().UTC()
	spec := backend.WorldSpec{ID: backend.NewID(backend.KindWorld), Name: req.Task, Domain: backend.DomainReal,
		Backend: runtime.BackendTask, Program: ref, Params: json.RawMessage("{}"), CreatedAt: now}
	run := backend.WorldRun{ID: backend.NewID(backend.KindRun), WorldID: spec.ID, Status: backend.RunPending, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, store.NewWorlds(svc.DB, svc.Ledger).CreateSpecAndRun(ctx, spec, run))
	svc.Runtime.Close() // the process dies here
	require.NoError(t, svc.DB.Close())

	svc, err = service.OpenWith(ctx, dir, service.Options{OllamaHost: noOllama})
	require.NoError(t, err)
	defer svc.Close()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	resumed, err := svc.StartRuntime(sctx)
	require.NoError(t, err)
	require.Contains(t, resumed, run.ID)
	var st *runtime.RunState
	require.Eventually(t, func() bool {
		st, _, err = svc.Runtime.Load(ctx, run.ID)
		require.NoError(t, err)
		return st.Status.Terminal()
	}, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "half submitted", st.Request.Task)
	require.Equal(t, filepath.Join(dir, "workspaces", run.ID), st.Request.Workspace, "the default workspace")
	marks, err := os.ReadFile(filepath.Join(st.Request.Workspace, effectsFile))
	require.NoError(t, err)
	require.Equal(t, "recovered\n", string(marks))
	events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: run.ID})
	require.NoError(t, err)
	require.Equal(t, runtime.EvTaskReceived, events[0].Type)
}
