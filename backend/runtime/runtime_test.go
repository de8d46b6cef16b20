package runtime_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

func TestExplicitPlanRunsToCompletion(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{
		Task: "write and read a file", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(
			step("write", "file_write", `{"path":"notes/hello.txt","content":"hello ducklm"}`),
			step("read", "file_read", `{"path":"notes/hello.txt"}`, "write"),
		),
	})
	require.NoError(t, err)
	require.NoError(t, backend.CheckID(run.ID, backend.KindRun))
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, runtime.StepDone, st.Steps["write"].State)
	require.Equal(t, runtime.StepDone, st.Steps["read"].State)
	require.Contains(t, string(st.Steps["read"].Result.Output), "hello ducklm")
	require.NotNil(t, st.Steps["read"].Critique)
	require.Equal(t, "heuristic", st.Steps["read"].Critique.Source)

	content, err := os.ReadFile(filepath.Join(st.Request.Workspace, "notes", "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello ducklm", string(content))

	events := f.events(t, run.ID)
	require.Equal(t, runtime.EvTaskReceived, events[0].Type)
	for i, e := range events {
		require.EqualValues(t, i+1, e.Seq)
		require.Equal(t, backend.ExternalReal, e.Reality, "a task run records facts")
	}
	require.Equal(t, 2, count(events, runtime.EvStepStarted))
	require.Equal(t, 2, count(events, runtime.EvStepFinished))
	require.Positive(t, count(events, runtime.EvDecision), "every applied decision is an event")
	require.Positive(t, count(events, runtime.EvCheckpoint))
	require.Equal(t, runtime.EvCompleted, events[len(events)-2].Type, "%v", types(events))

	row, err := f.store.GetRun(f.ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, row.Status, "the registry row follows the ledger")
	spec, err := f.store.GetSpec(f.ctx, row.WorldID)
	require.NoError(t, err)
	require.Equal(t, backend.DomainReal, spec.Domain)
}

func TestRiskyStepWaitsForApprovalThenRuns(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{
		Task: "make a file", ApprovalMode: runtime.AskRisky,
		Plan: plan(shell("touch", "echo made > made.txt && cat made.txt")),
	})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	approvals, err := f.rt.Approvals(f.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, approvals, 1)
	a := approvals[0]
	require.Equal(t, "touch", a.Step)
	require.Equal(t, "shell_exec", a.Tool)
	require.NotEmpty(t, a.Rule)
	require.Contains(t, string(a.Args), "echo made")
	require.NoError(t, backend.CheckID(a.RequestID, backend.KindApproval))
	other, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "say hi", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(shell("hi", "echo hi"))})
	require.NoError(t, err)
	f.waitStatus(t, other.ID, backend.RunCompleted, backend.RunFailed)
	// The runs list puts the waiting run first with its approval (read
	// twice: the second answer comes from the summaries kept).
	for range 2 {
		list, err := f.rt.Runs(f.ctx)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, run.ID, list[0].Run.ID)
		require.Equal(t, 1, list[0].Approvals)
		require.Equal(t, backend.RunAwaitingApproval, list[0].Run.Status)
		require.Equal(t, "make a file", list[0].Task)
		require.Equal(t, 0, list[0].StepsDone)
	}

	// Nothing ran before the answer.
	_, err = os.Stat(filepath.Join(f.dir, "workspaces", run.ID, "made.txt"))
	require.True(t, os.IsNotExist(err))

	require.NoError(t, f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: a.RequestID, Approve: true, IdempotencyKey: "k1", By: "test"}))
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "made\n", st.Steps["touch"].Result.StdoutTail)
	// Once the run has moved, its summary is read afresh.
	list, err := f.rt.Runs(f.ctx)
	require.NoError(t, err)
	require.Equal(t, []string{other.ID, run.ID}, []string{list[0].Run.ID, list[1].Run.ID}) // no longer waiting: newest first
	require.Zero(t, list[1].Approvals)
	require.Equal(t, 1, list[1].StepsDone)
	require.Equal(t, backend.RunCompleted, list[1].Run.Status)

	// A retried answer is a no-op; an unknown request is refused.
	require.NoError(t, f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: a.RequestID, Approve: true, IdempotencyKey: "k1"}))
	require.Equal(t, 1, count(f.events(t, run.ID), runtime.EvApproved))
	err = f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: backend.NewID(backend.KindApproval), Approve: true})
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	err = f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: "apr_nope", Approve: true})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

func TestDenyFailsTheRunAndEditApproveRunsTheEdit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	denied, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "deny me", ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("a", "echo no"))})
	require.NoError(t, err)
	f.waitStatus(t, denied.ID, backend.RunAwaitingApproval)
	as, err := f.rt.Approvals(f.ctx, denied.ID)
	require.NoError(t, err)
	require.NoError(t, f.rt.Answer(f.ctx, denied.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: false, Reason: "not today"}))
	st := f.waitStatus(t, denied.ID, backend.RunFailed)
	require.Contains(t, st.Steps["a"].Error, "denied")

	edited, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "edit me", ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("a", "echo original"))})
	require.NoError(t, err)
	f.waitStatus(t, edited.ID, backend.RunAwaitingApproval)
	as, err = f.rt.Approvals(f.ctx, edited.ID)
	require.NoError(t, err)
	err = f.rt.Answer(f.ctx, edited.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true, Args: json.RawMessage(`{"cmd":"x"}`)})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "edited args are validated against the tool")
	require.NoError(t, f.rt.Answer(f.ctx, edited.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true,
		Args: json.RawMessage(`{"command":"echo edited"}`)}))
	st = f.waitStatus(t, edited.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, "edited\n", st.Steps["a"].Result.StdoutTail)
}

func TestApprovalWaitSurvivesRestart(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "wait", ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("a", "echo after restart"))})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	statuses := count(f.events(t, run.ID), runtime.EvStatus)

	f.restart(t)
	resumed, err := f.rt.ResumeAll(f.ctx)
	require.NoError(t, err)
	require.Contains(t, resumed, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	// Taken up again with nothing to do, the run stays waiting: no
	// awaiting → running → awaiting flap in its history.
	require.Equal(t, statuses, count(f.events(t, run.ID), runtime.EvStatus), "no status change on resume")
	require.Len(t, st.PendingApprovals(), 1, "the same request is still open; no second one")
	as, err := f.rt.Approvals(f.ctx, "")
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.NoError(t, f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true}))
	st = f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, 1, count(f.events(t, run.ID), runtime.EvApprovalRequested))
}

func TestStepStartedWithoutResultIsInDoubtAfterRestart(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "killed mid-step", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(step("h", "hang", `{}`))})
	require.NoError(t, err)
	f.approveFirst(t, run.ID)
	<-f.hang.entered
	// The process dies here: its step's start is durable, its result never
	// comes. The old controller is abandoned, stuck in a tool that ignores
	// cancellation, as a SIGKILLed process would be (tests/ kills for real).
	require.Equal(t, 1, count(f.events(t, run.ID), runtime.EvStepStarted))
	f.rt = runtime.New(f.deps)
	t.Cleanup(f.rt.Close)

	_, err = f.rt.ResumeAll(f.ctx)
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	require.Equal(t, runtime.StepAwaitingApproval, st.Steps["h"].State)
	as, err := f.rt.Approvals(f.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.Equal(t, "in_doubt", as[0].Rule)
	require.True(t, as[0].InDoubt)
	require.Equal(t, 1, count(f.events(t, run.ID), runtime.EvStepInDoubt))
	require.Equal(t, 1, count(f.events(t, run.ID), runtime.EvStepStarted), "an in-doubt step is never silently re-run")

	require.NoError(t, f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true}))
	st = f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, 2, count(f.events(t, run.ID), runtime.EvStepStarted), "it ran again only after a fresh approval")
}

func TestStepsRunConcurrentlyWithinTheBound(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "parallel", ApprovalMode: runtime.AutoSandboxed, Concurrency: 2,
		Plan: plan(step("a", "gate", `{}`), step("b", "gate", `{}`), step("c", "gate", `{}`), step("d", "noop", `{}`, "a", "b", "c"))})
	require.NoError(t, err)
	f.approveAll(t, run.ID)
	// Two independent steps are inside the tool at once before either may leave.
	<-f.gate.entered
	<-f.gate.entered
	close(f.gate.open)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, 2, f.gate.maxSeen, "never more than the concurrency bound")
	for _, id := range []string{"a", "b", "c", "d"} {
		require.Equal(t, runtime.StepDone, st.Steps[id].State)
	}
}

func TestCancelKillsTheRunningStep(t *testing.T) {
	t.Parallel()
	f := setup(t)
	marker := "ducklm-cancel-" + strings.ReplaceAll(t.Name(), "/", "-")
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "long", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(shell("sleep", "sleep 300; echo "+marker))})
	require.NoError(t, err)
	f.waitStep(t, run.ID, "sleep", runtime.StepRunning)
	require.NoError(t, f.rt.Cancel(f.ctx, run.ID, ""))
	st := f.waitStatus(t, run.ID, backend.RunTerminated)
	require.Equal(t, runtime.StepFailed, st.Steps["sleep"].State)
	require.Equal(t, "Cancelled by the user.", st.StatusReason)
	err = f.rt.Cancel(f.ctx, run.ID, "")
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

func TestACancelClosesTheApprovalItLeftOpen(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "asks", ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("ask", "echo never"))})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	asked, err := f.rt.Approvals(f.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, asked, 1)

	require.NoError(t, f.rt.Cancel(f.ctx, run.ID, ""))
	st := f.waitStatus(t, run.ID, backend.RunTerminated)
	require.Empty(t, st.PendingApprovals(), "a cancelled run waits for nobody")
	require.Equal(t, runtime.StepPending, st.Steps["ask"].State, "the step never ran, and no longer waits")
	require.Nil(t, st.Steps["ask"].Approval)
	open, err := f.rt.Approvals(f.ctx, run.ID)
	require.NoError(t, err)
	require.Empty(t, open, "the window offers no Approve on a cancelled run")
	runs, err := f.rt.Runs(f.ctx)
	require.NoError(t, err)
	for _, r := range runs {
		if r.Run.ID == run.ID {
			require.Zero(t, r.Approvals, "the run list counts no approval of a cancelled run")
		}
	}
	err = f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: asked[0].RequestID, Approve: true})
	require.Error(t, err, "an answer after the cancel runs nothing")
	require.Zero(t, count(f.events(t, run.ID), runtime.EvStepStarted))
}

func TestFailingStepFailsTheRunWithItsReason(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "fail", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(shell("bad", "echo broken >&2; exit 3"), shell("after", "echo never", "bad"))})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunFailed, st.Status)
	require.Contains(t, st.StatusReason, "bad")
	require.Equal(t, 3, st.Steps["bad"].Result.ExitCode)
	require.Equal(t, "broken\n", st.Steps["bad"].Result.StderrTail)
	require.Less(t, st.Steps["bad"].Critique.Score, 0.5)
	require.Equal(t, runtime.StepPending, st.Steps["after"].State, "a dependent of a failed step never runs")
}

func TestTimedOutStepFailsWithoutARetry(t *testing.T) {
	t.Parallel()
	f := setup(t)
	limits := backend.DefaultLimits()
	limits.Timeout = 300 * time.Millisecond
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "slow", ApprovalMode: runtime.AutoSandboxed, Limits: limits, MaxRetries: 1,
		Plan: plan(shell("slow", "sleep 30"))})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunFailed, st.Status)
	require.True(t, st.Steps["slow"].Result.TimedOut)
	events := f.events(t, run.ID)
	require.Equal(t, 1, count(events, runtime.EvStepStarted), "a limit of 300 ms is 300 ms, not twice that")
	require.Zero(t, count(events, runtime.EvStepRetrying))
}

func TestTimedOutStepMarkedSafeIsRetriedOnceThenFails(t *testing.T) {
	t.Parallel()
	f := setup(t)
	limits := backend.DefaultLimits()
	limits.Timeout = 300 * time.Millisecond
	slow := shell("slow", "sleep 30")
	slow.RetryOnTimeout = true
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "slow", ApprovalMode: runtime.AutoSandboxed, Limits: limits, MaxRetries: 1,
		Plan: plan(slow)})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunFailed, st.Status)
	require.True(t, st.Steps["slow"].Node.RetryOnTimeout, "the plan's word survives validation")
	events := f.events(t, run.ID)
	require.Equal(t, 2, count(events, runtime.EvStepStarted), "one retry")
	require.Equal(t, 1, count(events, runtime.EvStepRetrying))
}

func TestBadRequestsAreRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.rt.Submit(f.ctx, runtime.TaskRequest{})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, err = f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "x", ApprovalMode: "yolo"})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	// An explicit plan that does not validate is refused with the
	// validator's sentence before a run exists: it is never replanned.
	_, err = f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "bad plan", Plan: plan(step("a", "teleport", `{}`), step("b", "noop", `{}`, "zzz"))})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "teleport")
	require.Contains(t, backend.ErrorMessage(err), "zzz")
	for _, bad := range []runtime.TaskRequest{
		{Task: "x", Limits: backend.Limits{Timeout: -5 * time.Second}},
		{Task: "x", MaxSteps: -1},
		{Task: "x", Limits: backend.Limits{MemoryBytes: -1}},
		{Task: "x", Workspace: "/etc"},
		{Task: "x", Workspace: f.dir},
		{Task: "x", Workspace: filepath.Join(f.dir, "workspaces")},
		{Task: "x", Workspace: filepath.Join(t.TempDir(), "missing")},
	} {
		_, err := f.rt.Submit(f.ctx, bad)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%+v: %v", bad, err)
	}
	runs, err := f.rt.Runs(f.ctx)
	require.NoError(t, err)
	require.Empty(t, runs, "no refused request created a run")
}

func (f *fixture) waitStep(t *testing.T, runID, stepID, state string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		st, _, err := f.rt.Load(f.ctx, runID)
		require.NoError(t, err)
		if s := st.Steps[stepID]; s != nil && s.State == state {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("step %s never reached %s", stepID, state)
}

// TestRepeatableStepStartedWithoutResultRunsAgainAfterRestart: a step safe
// to repeat (its tool only reads) whose process died after its start runs
// again when the run is taken up, instead of waiting in doubt: running a
// read twice changes nothing. (An effectful step is in doubt: the test
// above.)
func TestRepeatableStepStartedWithoutResultRunsAgainAfterRestart(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "killed mid-read", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(step("r", "hang_read", `{}`))})
	require.NoError(t, err)
	f.approveFirst(t, run.ID)
	<-f.hangRead.entered
	// A read records its start alone once it has run longer than an instant.
	require.Eventually(t, func() bool { return count(f.events(t, run.ID), runtime.EvStepStarted) == 1 }, 10*time.Second, 2*time.Millisecond)
	f.rt = runtime.New(f.deps)
	t.Cleanup(f.rt.Close)

	_, err = f.rt.ResumeAll(f.ctx)
	require.NoError(t, err)
	// The test tool is unknown to the risk policy, which asks about every
	// start of it: the re-run is approved as the first run was.
	f.approveAll(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	events := f.events(t, run.ID)
	require.Equal(t, 0, count(events, runtime.EvStepInDoubt), "a read is never in doubt")
	require.Equal(t, 1, count(events, runtime.EvStepRetrying))
	require.Equal(t, 2, count(events, runtime.EvStepStarted), "it ran again")
	require.Equal(t, 2, st.Steps["r"].Attempts)
	for _, e := range events {
		if e.Type == runtime.EvStepRetrying {
			require.Contains(t, string(e.Payload), "it only reads, so it runs again")
		}
	}
}
