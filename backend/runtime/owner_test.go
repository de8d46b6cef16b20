package runtime_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/critic"
	"ducklm/backend/planner"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
	"ducklm/backend/store/postgres"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/tool"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// countTool counts its executions in one installation, and holds each one
// until hold is closed (when hold is set).
type countTool struct {
	runs    atomic.Int32
	hold    chan struct{}
	entered chan struct{}
	ended   chan error
}

func newCount() *countTool {
	return &countTool{entered: make(chan struct{}, 16), ended: make(chan error, 16)}
}

func (c *countTool) Name() string                { return "count" }
func (c *countTool) Description() string         { return "counts its runs" }
func (c *countTool) ArgsSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (c *countTool) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	c.runs.Add(1)
	c.entered <- struct{}{}
	if c.hold != nil {
		select {
		case <-c.hold:
		case <-ctx.Done():
			c.ended <- ctx.Err()
			return backend.ToolResult{}, ctx.Err()
		}
	}
	c.ended <- nil
	return backend.ToolResult{Stdout: []byte("counted\n")}, nil
}

// side is one process of one installation on the team's database: its own
// connection pool, ledger, controller, workspaces and run locks, following
// the ledger as ducklm does (postgres.Follow).
type side struct {
	rt     *runtime.Controller
	ledger *store.Ledger
	count  *countTool
	inst   runtime.Installation
	stop   func()
}

func openSide(t *testing.T, url string, inst runtime.Installation, count *countTool) *side {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ledger := store.NewLedger(db)
	dir := t.TempDir()
	locks := postgres.NewRunLocks(url)
	t.Cleanup(locks.Close)
	rt := runtime.New(runtime.Deps{
		Store: store.NewWorlds(db, ledger), Events: ledger, Blobs: store.NewBlobs(db),
		Tools: tool.NewRegistry(count, noopTool{}), Offline: planner.Offline{}, Critic: critic.WithFallback{},
		WorkRoot: filepath.Join(dir, "workspaces"), DataDir: dir, Installation: inst, Drivers: locks,
		Log: func(msg string, args ...any) { t.Log(append([]any{inst.Host + ": " + msg}, args...)...) },
	})
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); postgres.Follow(fctx, url, ledger, rt.Followed) }()
	s := &side{rt: rt, ledger: ledger, count: count, inst: inst}
	var once atomic.Bool
	s.stop = func() {
		if once.CompareAndSwap(false, true) {
			rt.Close()
			cancel()
			<-done
		}
	}
	t.Cleanup(s.stop)
	return s
}

// waitFor waits (up to two minutes: a loaded machine) until the side's view
// of the run has one of the statuses.
func (s *side) waitFor(t *testing.T, runID string, want ...backend.RunStatus) *runtime.RunState {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, _, err := s.rt.Load(context.Background(), runID)
		require.NoError(t, err)
		for _, w := range want {
			if st.Status == w {
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s sees run %s %s (%s), not %v", s.inst.Host, runID, st.Status, st.StatusReason, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// entered waits until the tool's next execution has begun.
func entered(t *testing.T, c *countTool) {
	t.Helper()
	select {
	case <-c.entered:
	case <-time.After(2 * time.Minute):
		t.Fatal("the step did not start within two minutes")
	}
}

var (
	instA = runtime.Installation{ID: "inst_aaaaaaaaaaaaaaaaaaaaaaaaaa", Host: "host-a"}
	instB = runtime.Installation{ID: "inst_bbbbbbbbbbbbbbbbbbbbbbbbbb", Host: "host-b"}
)

func countPlan() *backend.TaskGraph { return plan(step("c", "count", `{}`)) }

// The reproduction of last session, on PostgreSQL: installation B answers
// an approval of a run installation A drives. B records the answer and
// drives nothing; A, following the ledger, wakes its driver and runs the
// step — once, in A — and both views see the run complete.
func TestARunAnsweredFromAnotherInstallationIsDrivenByItsOwner(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a := openSide(t, url, instA, newCount())
	b := openSide(t, url, instB, newCount())
	ctx := context.Background()
	run, err := a.rt.Submit(ctx, runtime.TaskRequest{Task: "answered elsewhere", ApprovalMode: runtime.AskEvery, Plan: countPlan()})
	require.NoError(t, err)
	st := a.waitFor(t, run.ID, backend.RunAwaitingApproval)
	require.Equal(t, &instA, st.Request.Owner, "the run records the installation that submitted it")

	as, err := b.rt.Approvals(ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.NoError(t, b.rt.Answer(ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true, By: "host-b"}))
	require.NoError(t, b.rt.Wait(ctx, run.ID))

	done := a.waitFor(t, run.ID, backend.RunCompleted)
	require.Equal(t, backend.RunCompleted, b.waitFor(t, run.ID, backend.RunCompleted).Status)
	require.EqualValues(t, 1, a.count.runs.Load(), "the owner runs the approved step")
	require.EqualValues(t, 0, b.count.runs.Load(), "the answering installation runs nothing")
	require.NoError(t, a.rt.Wait(ctx, run.ID))
	events, err := a.ledger.Query(ctx, backend.EventQuery{Stream: run.ID})
	require.NoError(t, err)
	require.Equal(t, 1, count(events, runtime.EvStepStarted), types(events))
	st, _, err = b.rt.Load(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, done.Status, st.Status)
	require.Equal(t, events[len(events)-1].Seq, st.Seq, "B's view of the run is its head")
}

// Starting installation B resumes only B's runs: A's run, answered from B
// while A is not running, waits for A, and A drives it when it starts.
func TestStartingAnotherInstallationDoesNotDriveThisOnesRuns(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	a := openSide(t, url, instA, newCount())
	run, err := a.rt.Submit(ctx, runtime.TaskRequest{Task: "A's run", ApprovalMode: runtime.AskEvery, Plan: countPlan()})
	require.NoError(t, err)
	a.waitFor(t, run.ID, backend.RunAwaitingApproval)
	a.stop() // A is not running

	b := openSide(t, url, instB, newCount())
	resumed, err := b.rt.ResumeAll(ctx)
	require.NoError(t, err)
	require.NotContains(t, resumed, run.ID)
	as, err := b.rt.Approvals(ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.NoError(t, b.rt.Answer(ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true, By: "host-b"}))
	require.NoError(t, b.rt.Wait(ctx, run.ID))
	require.ErrorContains(t, b.rt.Resume(ctx, run.ID), "driven by ducklm on host-a")
	by, err := b.rt.DrivenElsewhere(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, "host-a", by.Host)
	listed, err := b.rt.Runs(ctx)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	require.Equal(t, "host-a", listed[0].DrivenBy, "B's list says where the run is driven")
	listed, err = a.rt.Runs(ctx)
	require.NoError(t, err)
	require.Empty(t, listed[0].DrivenBy, "A drives its own run")
	st, _, err := b.rt.Load(ctx, run.ID)
	require.NoError(t, err)
	require.False(t, st.Status.Terminal(), "nothing drives A's run while A is away")
	require.EqualValues(t, 0, b.count.runs.Load())

	a2 := openSide(t, url, instA, newCount()) // A starts again
	resumed, err = a2.rt.ResumeAll(ctx)
	require.NoError(t, err)
	require.Contains(t, resumed, run.ID)
	a2.waitFor(t, run.ID, backend.RunCompleted)
	b.waitFor(t, run.ID, backend.RunCompleted)
	require.EqualValues(t, 1, a2.count.runs.Load())
	require.EqualValues(t, 0, b.count.runs.Load())
}

// Two processes of one installation (or an old run without an owner) never
// drive one run at once: the second cannot take the run's lock and follows.
func TestTwoProcessesNeverDriveOneRunAtOnce(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	c1 := newCount()
	c1.hold = make(chan struct{})
	p1 := openSide(t, url, instA, c1)
	p2 := openSide(t, url, instA, newCount())
	run, err := p1.rt.Submit(ctx, runtime.TaskRequest{Task: "one driver", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(step("c", "count", `{}`), step("n", "noop", `{}`, "c"))})
	require.NoError(t, err)
	p1.waitFor(t, run.ID, backend.RunAwaitingApproval)
	as, err := p1.rt.Approvals(ctx, run.ID)
	require.NoError(t, err)
	require.NoError(t, p1.rt.Answer(ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true}))
	entered(t, c1) // p1 runs the step and holds the run's lock

	p2.rt.Start(run.ID) // the same installation's other process tries to drive it
	require.NoError(t, p2.rt.Wait(ctx, run.ID))
	resumed, err := p2.rt.ResumeAll(ctx)
	require.NoError(t, err)
	require.Contains(t, resumed, run.ID, "an owned moving run is offered to its installation's drivers")
	require.NoError(t, p2.rt.Wait(ctx, run.ID))
	require.EqualValues(t, 0, p2.count.runs.Load(), "a process that cannot take the run's lock runs nothing")

	close(c1.hold)
	approveEvery(t, p1, run.ID)
	p2.waitFor(t, run.ID, backend.RunCompleted)
	require.EqualValues(t, 1, c1.runs.Load())
	require.EqualValues(t, 0, p2.count.runs.Load())
}

// approveEvery answers yes to the run's requests from s until the test ends.
func approveEvery(t *testing.T, s *side, runID string) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			as, err := s.rt.Approvals(context.Background(), runID)
			if err != nil {
				continue
			}
			for _, a := range as {
				_ = s.rt.Answer(context.Background(), runID, runtime.Answer{RequestID: a.RequestID, Approve: true})
			}
		}
	}()
}

// heldInAStep submits a run on installation A, approves its one step and
// returns once A runs it, held until something cancels it; installation B
// is on the same throw-away PostgreSQL.
func heldInAStep(t *testing.T, task string) (a, b *side, run backend.WorldRun, ca *countTool) {
	t.Helper()
	url := pgtest.URL(t)
	ctx := context.Background()
	ca = newCount()
	ca.hold = make(chan struct{}) // never opened: only a cancel ends the step
	a = openSide(t, url, instA, ca)
	b = openSide(t, url, instB, newCount())
	run, err := a.rt.Submit(ctx, runtime.TaskRequest{Task: task, ApprovalMode: runtime.AskEvery, Plan: countPlan()})
	require.NoError(t, err)
	a.waitFor(t, run.ID, backend.RunAwaitingApproval)
	as, err := a.rt.Approvals(ctx, run.ID)
	require.NoError(t, err)
	require.NoError(t, a.rt.Answer(ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true}))
	entered(t, ca)
	return a, b, run, ca
}

// Cancel from another installation while the owner runs a step: the owner
// stops the step and records the cancellation after it; the run never
// reads cancelled while its step runs.
func TestCancelFromAnotherInstallationStopsTheOwnersStepFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, run, ca := heldInAStep(t, "cancelled elsewhere")

	require.NoError(t, b.rt.Cancel(ctx, run.ID, "Cancelled from host-b."))
	select {
	case err := <-ca.ended:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(time.Minute):
		t.Fatal("the owner's step still runs a minute after the cancel")
	}
	st := b.waitFor(t, run.ID, backend.RunTerminated)
	require.Equal(t, "Cancelled from host-b.", st.StatusReason)
	a.waitFor(t, run.ID, backend.RunTerminated)
	events, err := a.ledger.Query(ctx, backend.EventQuery{Stream: run.ID})
	require.NoError(t, err)
	var finished, cancelled int64
	for _, e := range events {
		switch e.Type {
		case runtime.EvStepFinished:
			finished = e.Seq
		case runtime.EvCancelled:
			cancelled = e.Seq
		}
	}
	require.NotZero(t, cancelled, types(events))
	require.Less(t, finished, cancelled, "the step's end is recorded before the run's cancellation: %v", types(events))
	require.Equal(t, 1, count(events, runtime.EvCancelled))

	// A parked run of A's (nobody drives it) is cancelled by B at once.
	run2, err := a.rt.Submit(ctx, runtime.TaskRequest{Task: "parked", ApprovalMode: runtime.AskEvery, Plan: countPlan()})
	require.NoError(t, err)
	a.waitFor(t, run2.ID, backend.RunAwaitingApproval)
	require.NoError(t, a.rt.Wait(ctx, run2.ID))
	require.NoError(t, b.rt.Cancel(ctx, run2.ID, "Cancelled from host-b."))
	st, _, err = b.rt.Load(ctx, run2.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunTerminated, st.Status)
	a.waitFor(t, run2.ID, backend.RunTerminated)
}

// A fork another installation makes of this installation's run shares the
// run's workspace, so the run's owner drives it: B forks A's finished run
// with one more step, and A (following the ledger) asks, runs it and ends it.
func TestAForkMadeElsewhereIsDrivenByTheRunsOwner(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	a := openSide(t, url, instA, newCount())
	b := openSide(t, url, instB, newCount())
	run, err := a.rt.Submit(ctx, runtime.TaskRequest{Task: "forked elsewhere", ApprovalMode: runtime.AskEvery, Plan: countPlan()})
	require.NoError(t, err)
	approveEvery(t, b, run.ID)
	a.waitFor(t, run.ID, backend.RunCompleted)
	require.NoError(t, a.rt.Wait(ctx, run.ID))
	st, done, err := a.rt.Load(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, st.Status)

	_, _, child, err := b.rt.Fork(ctx, runtime.ForkRequest{CheckpointID: done.LatestCheckpointID,
		Delta: json.RawMessage(`{"nodes":[{"id":"c","kind":"tool","tool":"count","args":{},"depends_on":[]},{"id":"d","kind":"tool","tool":"count","args":{},"depends_on":["c"]}]}`)})
	require.NoError(t, err)
	approveEvery(t, b, child.ID)
	a.waitFor(t, child.ID, backend.RunCompleted)
	b.waitFor(t, child.ID, backend.RunCompleted)
	require.EqualValues(t, 2, a.count.runs.Load(), "A ran its run's step and the fork's new one")
	require.EqualValues(t, 0, b.count.runs.Load())
}

// A driver whose lock's connection ends (the server ended it, a network
// cut) stops driving: its step is cancelled, and the run's lock is free for
// the next driver, which takes the run up.
func TestADriverThatLosesTheRunsLockStops(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	c1 := newCount()
	c1.hold = make(chan struct{}) // only a cancel ends the first execution
	p1 := openSide(t, url, instA, c1)
	run, err := p1.rt.Submit(ctx, runtime.TaskRequest{Task: "lost lock", ApprovalMode: runtime.AskEvery, Plan: countPlan()})
	require.NoError(t, err)
	approveEvery(t, p1, run.ID)
	entered(t, c1)

	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	var ended int
	key := uint64(postgres.RunLockKey(run.ID))
	require.NoError(t, db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1`, int64(key>>32), int64(key&0xffffffff)).Scan(&ended))
	require.Equal(t, 1, ended, "one session holds the run's lock")
	select {
	case err := <-c1.ended:
		require.ErrorIs(t, err, context.Canceled, "the step is cancelled when its driver loses the run's lock")
	case <-time.After(time.Minute):
		t.Fatal("the driver went on a minute after its lock was lost")
	}
	require.NoError(t, p1.rt.Wait(ctx, run.ID))

	p2 := openSide(t, url, instA, newCount()) // another process of the installation
	resumed, err := p2.rt.ResumeAll(ctx)
	require.NoError(t, err)
	require.Contains(t, resumed, run.ID)
	approveEvery(t, p2, run.ID)
	p2.waitFor(t, run.ID, backend.RunCompleted, backend.RunFailed)
	events, err := p2.ledger.Query(ctx, backend.EventQuery{Stream: run.ID})
	require.NoError(t, err)
	require.Equal(t, 1, count(events, runtime.EvCompleted)+count(events, runtime.EvFailed), types(events))
}

// TestDriverProcess is the driving process of
// TestAKilledDriversLockIsFreedWithItsProcess (it does nothing otherwise):
// installation A's process, which resumes A's runs and hangs in their step.
func TestDriverProcess(t *testing.T) {
	url := os.Getenv("DUCKLM_TEST_DRIVER_URL")
	if url == "" {
		return
	}
	c := newCount()
	c.hold = make(chan struct{}) // until killed
	s := openSide(t, url, instA, c)
	_, err := s.rt.ResumeAll(context.Background())
	require.NoError(t, err)
	select {} // until killed
}

// A process driving a run is SIGKILLed in the run's step: the server frees
// the run's lock with the process's connection, and another process of the
// installation takes the run up, asking again about the step that was
// running (in doubt), never running it silently twice.
func TestAKilledDriversLockIsFreedWithItsProcess(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	a := openSide(t, url, instA, newCount())
	b := openSide(t, url, instB, newCount())
	run, err := a.rt.Submit(ctx, runtime.TaskRequest{Task: "killed driver", ApprovalMode: runtime.AskEvery, Plan: countPlan()})
	require.NoError(t, err)
	a.waitFor(t, run.ID, backend.RunAwaitingApproval)
	a.stop()
	as, err := b.rt.Approvals(ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.NoError(t, b.rt.Answer(ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true}))

	cmd := exec.Command(os.Args[0], "-test.run=^TestDriverProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DUCKLM_TEST_DRIVER_URL="+url)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitEvent(t, b.ledger, run.ID, runtime.EvStepStarted) // the process runs the step, under the run's lock

	p2 := openSide(t, url, instA, newCount()) // another process of A
	p2.rt.Start(run.ID)
	require.NoError(t, p2.rt.Wait(ctx, run.ID))
	require.Zero(t, p2.count.runs.Load(), "the run's lock keeps a second driver out")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	// The server frees the lock when it sees the connection end; the owner's
	// processes look at moving runs again (every 15 s in ducklm; here at once).
	approveEvery(t, p2, run.ID)
	deadline := time.Now().Add(2 * time.Minute)
	for p2.count.runs.Load() == 0 {
		require.True(t, time.Now().Before(deadline), "no process of A took the run up after its driver was killed")
		p2.rt.Start(run.ID)
		time.Sleep(50 * time.Millisecond)
	}
	p2.waitFor(t, run.ID, backend.RunCompleted)
	events, err := p2.ledger.Query(ctx, backend.EventQuery{Stream: run.ID})
	require.NoError(t, err)
	require.Equal(t, 1, count(events, runtime.EvStepInDoubt), types(events))
	require.Equal(t, 2, count(events, runtime.EvApprovalRequested), "the step in doubt is asked about again: %v", types(events))
	require.EqualValues(t, 1, p2.count.runs.Load())
}

// waitEvent waits until the run's stream holds an event of the type.
func waitEvent(t *testing.T, ledger *store.Ledger, runID, typ string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		events, err := ledger.Query(context.Background(), backend.EventQuery{Stream: runID, Types: []string{typ}})
		require.NoError(t, err)
		if len(events) > 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "run %s has no %s after two minutes", runID, typ)
		time.Sleep(20 * time.Millisecond)
	}
}

// A run recorded before owners (no owner in its task.received) on a team's
// database: no installation resumes it by itself, since nobody knows where
// its workspace is; a person's answer on one installation drives it there,
// one process at a time.
func TestARunWithoutAnOwnerIsDrivenWhereAPersonAnswersIt(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	old := openSide(t, url, runtime.Installation{}, newCount()) // a ducklm from before owners
	run, err := old.rt.Submit(ctx, runtime.TaskRequest{Task: "recorded before owners", ApprovalMode: runtime.AskEvery, Plan: countPlan()})
	require.NoError(t, err)
	st := old.waitFor(t, run.ID, backend.RunAwaitingApproval)
	require.Nil(t, st.Request.Owner)
	old.stop()

	a := openSide(t, url, instA, newCount())
	b := openSide(t, url, instB, newCount())
	for _, s := range []*side{a, b} {
		resumed, err := s.rt.ResumeAll(ctx)
		require.NoError(t, err)
		require.NotContains(t, resumed, run.ID, "%s resumed a run without an owner by itself", s.inst.Host)
		elsewhere, err := s.rt.DrivenElsewhere(ctx, run.ID)
		require.NoError(t, err)
		require.Nil(t, elsewhere, "no installation is named for a run without an owner")
	}
	as, err := b.rt.Approvals(ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.NoError(t, b.rt.Answer(ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true}))
	b.waitFor(t, run.ID, backend.RunCompleted)
	a.waitFor(t, run.ID, backend.RunCompleted)
	require.EqualValues(t, 1, b.count.runs.Load(), "the installation where a person answered drives it")
	require.EqualValues(t, 0, a.count.runs.Load())
}
