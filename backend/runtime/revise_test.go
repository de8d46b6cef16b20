package runtime_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/router"
	"ducklm/backend/runtime"
)

// routerDecisions returns the router's applied decisions of a type.
func routerDecisions(t *testing.T, events []backend.Event, typ backend.DecisionType) []backend.Decision {
	t.Helper()
	var out []backend.Decision
	for _, d := range runtime.Decisions(events) {
		if d.Source == "router" && d.Decision.Type == typ {
			out = append(out, d.Decision)
		}
	}
	return out
}

func startedSteps(t *testing.T, events []backend.Event) []string {
	t.Helper()
	var out []string
	for _, e := range events {
		if e.Type == runtime.EvStepStarted {
			var p struct {
				Step string `json:"step"`
			}
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			out = append(out, p.Step)
		}
	}
	return out
}

const revisedPlan = `{"decision": "plan", "reason": "count the file that is there", "confidence": 0.8, "plan": {"nodes": [
 {"id": "step-3", "kind": "tool", "tool": "shell_exec", "args": {"command": "echo revised"}, "depends_on": ["step-1"], "title": "another way"}]}}`

func TestFailedStepIsRevisedOnceKeepingFinishedSteps(t *testing.T) {
	t.Parallel()
	m := setupModel(t, criticAnswers(func(n int) ollamatest.Reply {
		if n == 1 {
			return ollamatest.Reply{Content: modelPlan("echo first", "echo broken >&2; exit 3")}
		}
		return ollamatest.Reply{Content: revisedPlan}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Do two things.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	// The revised graph keeps the finished step as it ran, drops the failed
	// one, and adds the new step.
	require.Equal(t, []string{"step-1", "step-3"}, st.Order())
	require.Equal(t, runtime.StepDone, st.Steps["step-1"].State)
	require.Equal(t, "first\n", st.Steps["step-1"].Result.StdoutTail)
	require.Equal(t, "revised\n", st.Steps["step-3"].Result.StdoutTail)
	events := m.events(t, run.ID)
	require.Equal(t, []string{"step-1", "step-2", "step-3"}, startedSteps(t, events), "the finished step did not run again")

	// The router decided by rule, and said so.
	replans := routerDecisions(t, events, backend.DecisionReplan)
	require.Len(t, replans, 1)
	var rp router.ReplanPayload
	require.NoError(t, json.Unmarshal(replans[0].Payload, &rp))
	require.Equal(t, router.RuleRevise, rp.Rule)
	require.Equal(t, []string{"step-2"}, rp.Failed)
	require.Equal(t, `step "step-2" failed: exited with code 3`, rp.Error)
	require.Equal(t, 1, count(events, runtime.EvPlanRevising))
	require.Len(t, st.Revised, 1)
	require.Equal(t, []string{"step-1"}, st.Revised[0].Kept)
	require.Equal(t, router.RuleRevise, st.Revised[0].Rule)
	require.Nil(t, st.Revision, "the round closed with the accepted plan")

	// The planner was told what finished and what failed, not that its answer was wrong.
	plans := m.chats(isPlanner)
	require.Len(t, plans, 2)
	second := user(plans[1])
	require.Contains(t, second, `- step-1 (shell_exec {"command":"echo first"}): first`)
	require.Contains(t, second, "These steps failed after their retries:\n- step-2 (shell_exec")
	require.Contains(t, second, "exited with code 3: broken")
	require.NotContains(t, second, "rejected")
	require.Len(t, st.Planning, 3, "the plan, the revision, the review's answer")
	require.Equal(t, 1, st.Planning[1].Revision)
	require.True(t, st.Planning[1].Accepted)
	m.requireExactCheckpoints(t, run.ID)
}

func TestRevisedPlanThatFailsAgainEndsTheRun(t *testing.T) {
	t.Parallel()
	m := setupModel(t, criticAnswers(func(n int) ollamatest.Reply {
		if n == 1 {
			return ollamatest.Reply{Content: modelPlan("echo first", "exit 3")}
		}
		return ollamatest.Reply{Content: `{"decision": "plan", "reason": "r", "confidence": 0.5, "plan": {"nodes": [
 {"id": "step-9", "kind": "tool", "tool": "shell_exec", "args": {"command": "exit 4"}, "depends_on": []}]}}`}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Do two things.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunFailed, st.Status)
	require.Equal(t, `The run cannot go on: step "step-9" failed (exited with code 4); that was after 1 revised plan, the run's limit. `+
		`Fork the run before the step with an edited plan to try another way.`, st.StatusReason)
	require.Len(t, m.chats(isPlanner), 2, "bounded: one revision")
	fails := routerDecisions(t, m.events(t, run.ID), backend.DecisionFail)
	require.Len(t, fails, 1)
	require.JSONEq(t, `{"cause": "steps_failed", "steps": ["step-9"], "rule": "revisions_used"}`, string(fails[0].Payload))
}

func TestDeniedStepIsNotPlannedAround(t *testing.T) {
	t.Parallel()
	m := setupModel(t, criticAnswers(func(int) ollamatest.Reply {
		return ollamatest.Reply{Content: modelPlan("echo asks")}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Say it.", ApprovalMode: runtime.AskEvery})
	require.NoError(t, err)
	m.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	as, err := m.rt.Approvals(m.ctx, run.ID)
	require.NoError(t, err)
	require.NoError(t, m.rt.Answer(m.ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: false, Reason: "not now"}))
	st := m.waitStatus(t, run.ID, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunFailed, st.Status)
	require.Contains(t, st.StatusReason, `you denied "step-1", and ducklm does not plan around a no`)
	require.True(t, st.Steps["step-1"].Denied)
	require.Len(t, m.chats(isPlanner), 1, "no revision after a no")
}

func TestUsersPlanIsNotRewritten(t *testing.T) {
	t.Parallel()
	m := setupModel(t, criticAnswers(func(int) ollamatest.Reply { return ollamatest.Reply{Content: revisedPlan} }))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "$ exit 5", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunFailed, st.Status)
	require.Contains(t, st.StatusReason, "the plan is yours, so ducklm does not rewrite it")
	require.Empty(t, m.chats(isPlanner))
}

func TestEveryPlanningAttemptIsRecordedAndDiffers(t *testing.T) {
	t.Parallel()
	const first = `{"decision":"plan","reason":"r","confidence":7,"plan":{"nodes":[{"id":"step-1","kind":"tool","tool":"teleport","args":{},"depends_on":[]}]}}`
	m := setupModel(t, criticAnswers(func(n int) ollamatest.Reply {
		if n == 1 {
			return ollamatest.Reply{Content: first}
		}
		return ollamatest.Reply{Content: modelPlan("echo ok")}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Say ok.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	require.Len(t, st.Planning, 3, "two plans, then the review's answer")
	require.Equal(t, 1, st.Planning[2].Review)
	require.True(t, st.Planning[2].Accepted)
	a, b := st.Planning[0], st.Planning[1]
	require.Equal(t, first, a.Answer)
	require.Equal(t, []string{"confidence 7 is outside 0–1: taken as 1"}, a.Normalised)
	require.Contains(t, a.Error, `uses tool "teleport", which is not available`)
	require.False(t, a.Accepted)
	require.Equal(t, map[string]any{"temperature": 0.0}, a.Options)
	require.Equal(t, map[string]any{"temperature": 0.3, "seed": float64(1)}, b.Options, "the replan is not the same request")
	require.True(t, b.Accepted)
	require.Empty(t, b.Error)

	plans := m.chats(isPlanner)
	require.Len(t, plans, 2)
	msgs := plans[1].Messages
	require.Equal(t, "assistant", msgs[len(msgs)-2].Role, "the model sees its previous answer")
	require.Equal(t, first, msgs[len(msgs)-2].Content)
	require.True(t, strings.HasPrefix(msgs[len(msgs)-1].Content, `Your previous answer was rejected: step "step-1" uses tool "teleport"`))
	m.requireExactCheckpoints(t, run.ID)
}

// ducklm stops while the planner revises the plan: after the restart the
// open round goes on (the planner is asked again), it is not counted as a
// revision used up.
func TestRestartDuringARevisionAsksThePlannerAgain(t *testing.T) {
	t.Parallel()
	var revising atomic.Bool
	revisionAsked := make(chan struct{}, 4)
	m := setupModel(t, criticAnswers(func(n int) ollamatest.Reply {
		if n == 1 {
			return ollamatest.Reply{Content: modelPlan("echo first", "exit 3")}
		}
		revisionAsked <- struct{}{}
		if !revising.Load() {
			// The first revision request hangs until ducklm stops.
			return ollamatest.Reply{Content: revisedPlan, Delay: time.Hour, Chunks: 2}
		}
		return ollamatest.Reply{Content: revisedPlan}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Do two things.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	select {
	case <-revisionAsked:
	case <-time.After(30 * time.Second):
		t.Fatal("the revision was never asked for")
	}
	revising.Store(true)
	m.restart(t)
	_, err = m.rt.ResumeAll(m.ctx)
	require.NoError(t, err)
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Len(t, st.Revised, 1, "one round, resumed")
	require.Equal(t, []string{"step-1", "step-3"}, st.Order())
	require.Equal(t, 1, st.Steps["step-1"].Attempts, "the finished step did not run again")
}

// A step that fails while no planning model is there does not end the
// run: it waits for one, flagged for the window, recording nothing more
// when taken up with none there yet; once one answers, the plan is revised
// and the run goes on (DESIGN: Ollama unreachable → the run pauses).
func TestAFailedStepWaitsForAModelToReviseThePlan(t *testing.T) {
	t.Parallel()
	var m *modelFixture
	m = setupModel(t, criticAnswers(func(n int) ollamatest.Reply {
		if n == 1 {
			m.srv.SetModels("nomic-embed-text") // the planning model goes once it has planned
			return ollamatest.Reply{Content: modelPlan("echo first", "exit 3")}
		}
		return ollamatest.Reply{Content: revisedPlan}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Do two things.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunPaused, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunPaused, st.Status, st.StatusReason)
	require.True(t, st.NeedsModel, "the pause waits for a model, for the window")
	require.Equal(t, `Step "step-2" failed (exited with code 3), and no planning model is available to revise the plan. `+
		`Start Ollama with a model and resume the run, or fork it before the step with an edited plan.`, st.StatusReason)
	require.Empty(t, st.Error)

	// Taken up again with no model yet: nothing changes, nothing is recorded.
	before := len(m.events(t, run.ID))
	require.NoError(t, m.rt.Resume(m.ctx, run.ID))
	time.Sleep(100 * time.Millisecond)
	st = m.waitStatus(t, run.ID, backend.RunPaused)
	require.True(t, st.NeedsModel)
	require.Len(t, m.events(t, run.ID), before, "a wait taken up again records nothing")

	m.srv.SetModels(testModel, "nomic-embed-text")
	require.NoError(t, m.rt.Resume(m.ctx, run.ID))
	st = m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.False(t, st.NeedsModel)
	require.Equal(t, []string{"step-1", "step-3"}, st.Order())
	require.Equal(t, "revised\n", st.Steps["step-3"].Result.StdoutTail)
	require.Len(t, st.Revised, 1)
	m.requireExactCheckpoints(t, run.ID)
}

// A run whose steps are done while no planning model is there waits for
// one to read the results and answer, instead of ending without an answer.
func TestAReviewWaitsForAModelToAnswer(t *testing.T) {
	t.Parallel()
	var m *modelFixture
	m = setupModel(t, criticAnswers(func(int) ollamatest.Reply {
		m.srv.SetModels("nomic-embed-text")
		return ollamatest.Reply{Content: modelPlan("echo raft")}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "What is a group of ducks on water called?", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunPaused, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunPaused, st.Status, st.StatusReason)
	require.True(t, st.NeedsModel)
	require.Equal(t, "Every step of the plan is done, but no planning model is available to read the results and answer the task. "+
		"Start Ollama with a model and resume the run.", st.StatusReason)
	require.Nil(t, st.Answer)

	m.srv.SetModels(testModel, "nomic-embed-text")
	require.NoError(t, m.rt.Resume(m.ctx, run.ID))
	st = m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.NotNil(t, st.Answer)
	require.Equal(t, "Done.", st.Answer.Text)
	require.Equal(t, 1, st.Answer.Review)
}
