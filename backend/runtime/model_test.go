package runtime_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/critic"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/planner"
	"ducklm/backend/runtime"
)

// These tests drive the loop against a fake Ollama that speaks the real wire
// protocol: the planner and the critic are the production ones, only the
// model's answers are scripted.

const testModel = "qwen2.5:7b"

func withTokens(fn func(runID, stepID, token string)) option {
	return func(d *runtime.Deps) { d.Tokens = fn }
}

// tokenSink collects streamed tokens per step ("" for the planner).
type tokenSink struct {
	mu    sync.Mutex
	steps map[string][]string
}

func (s *tokenSink) add(_, stepID, tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steps == nil {
		s.steps = map[string][]string{}
	}
	s.steps[stepID] = append(s.steps[stepID], tok)
}

func (s *tokenSink) get(stepID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.steps[stepID]...)
}

type modelFixture struct {
	*fixture
	srv    *ollamatest.Server
	tokens *tokenSink
}

// setupModel is the fixture with a fake Ollama listing a chat model and an
// embedding model, whose chats answer is scripts.
func setupModel(t *testing.T, answer func(req api.ChatRequest) ollamatest.Reply) *modelFixture {
	t.Helper()
	return setupReviewing(t, func(req api.ChatRequest) ollamatest.Reply {
		if isReview(req) {
			return ollamatest.Reply{Content: answerCiting("Done.", doneSteps(req)...)}
		}
		return answer(req)
	})
}

// setupReviewing is setupModel whose answer also answers the reviews.
func setupReviewing(t *testing.T, answer func(req api.ChatRequest) ollamatest.Reply, opts ...option) *modelFixture {
	t.Helper()
	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{testModel, "nomic-embed-text"}})
	srv.OnChat(answer)
	sink := &tokenSink{}
	f := setup(t, append([]option{withModel(ollama.New(srv.URL(), nil)), withTokens(sink.add)}, opts...)...)
	return &modelFixture{fixture: f, srv: srv, tokens: sink}
}

func system(req api.ChatRequest) string {
	for _, m := range req.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

func user(req api.ChatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// isPlanner reports a planning call (not a review).
func isPlanner(req api.ChatRequest) bool {
	return strings.HasPrefix(system(req), "You are the planner of ducklm") && !isReview(req)
}

// isReview reports a review of a run's results.
func isReview(req api.ChatRequest) bool {
	if !strings.HasPrefix(system(req), "You are the planner of ducklm") {
		return false
	}
	for _, m := range req.Messages {
		if m.Role == "user" && strings.Contains(m.Content, "The plan for this task has run.") {
			return true
		}
	}
	return false
}

var doneLine = regexp.MustCompile(`(?m)^- (\S+) \(.*\[done`)

// doneSteps are the finished steps a review lists.
func doneSteps(req api.ChatRequest) []string {
	var ids []string
	for _, m := range doneLine.FindAllStringSubmatch(user(req), -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// answerCiting is a review's answer: text resting on the steps cited.
func answerCiting(text string, cites ...string) string {
	data, _ := json.Marshal(map[string]any{"decision": "respond", "reason": "the results answer it", "confidence": 0.9,
		"response": text, "cites": cites})
	return string(data)
}

func isCritic(req api.ChatRequest) bool {
	return strings.HasPrefix(system(req), "You are the critic of ducklm")
}

func (m *modelFixture) chats(match func(api.ChatRequest) bool) []api.ChatRequest {
	var out []api.ChatRequest
	for _, c := range m.srv.Chats() {
		if match(c) {
			out = append(out, c)
		}
	}
	return out
}

// modelPlan is a planning model's answer: a plan of shell steps, each
// depending on the one before.
func modelPlan(commands ...string) string {
	type node struct {
		ID        string            `json:"id"`
		Kind      string            `json:"kind"`
		Tool      string            `json:"tool"`
		Args      map[string]string `json:"args"`
		DependsOn []string          `json:"depends_on"`
		Title     string            `json:"title"`
	}
	nodes := make([]node, len(commands))
	for i, c := range commands {
		nodes[i] = node{ID: fmt.Sprintf("step-%d", i+1), Kind: "tool", Tool: "shell_exec",
			Args: map[string]string{"command": c}, DependsOn: []string{}, Title: c}
		if i > 0 {
			nodes[i].DependsOn = []string{fmt.Sprintf("step-%d", i)}
		}
	}
	data, _ := json.Marshal(map[string]any{"decision": "plan", "reason": "shell commands do it", "confidence": 0.9,
		"plan": map[string]any{"nodes": nodes}})
	return string(data)
}

const goodCritique = `{"score": 0.85, "explanation": "The step printed what the task asked for."}`

// criticAnswers answers every critic chat with a valid critique.
func criticAnswers(plannerReply func(n int) ollamatest.Reply) func(req api.ChatRequest) ollamatest.Reply {
	var planned atomic.Int32
	return func(req api.ChatRequest) ollamatest.Reply {
		if isCritic(req) {
			return ollamatest.Reply{Content: goodCritique}
		}
		if isReview(req) {
			return ollamatest.Reply{Content: answerCiting("Done.", doneSteps(req)...)}
		}
		return plannerReply(int(planned.Add(1)))
	}
}

// requireExactCheckpoints checks that every checkpoint of a run is exact:
// its base blob is the fold of the run's events up to the seq it names, and
// the state at the checkpoint (base and the events after it, as a fork or a
// resume reads it) is the fold of every event up to the checkpoint's own.
func (f *fixture) requireExactCheckpoints(t *testing.T, runID string) {
	t.Helper()
	run, err := f.store.GetRun(f.ctx, runID)
	require.NoError(t, err)
	events := f.events(t, runID)
	fold := func(n int64) string {
		want := runtime.NewRunState(runID, run.WorldID)
		for _, prev := range events[:n] {
			want.Apply(prev)
		}
		data, err := json.Marshal(want)
		require.NoError(t, err)
		return string(data)
	}
	n := 0
	for _, e := range events {
		if e.Type != runtime.EvCheckpoint {
			continue
		}
		n++
		var p struct {
			CheckpointID string `json:"checkpointId"`
			Seq          int64  `json:"seq"`
		}
		require.NoError(t, json.Unmarshal(e.Payload, &p))
		require.Less(t, p.Seq, e.Seq, "checkpoint event %d names a base before it", e.Seq)
		cp, err := f.store.GetCheckpoint(f.ctx, p.CheckpointID)
		require.NoError(t, err)
		require.Equal(t, e.Seq, cp.LedgerSeq)
		data, err := f.blobs.Get(f.ctx, cp.Blob)
		require.NoError(t, err)
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil { // a base is gzipped JSON
			data, err = io.ReadAll(zr)
			require.NoError(t, err)
		}
		require.JSONEq(t, fold(p.Seq), string(data), "the base of the checkpoint at seq %d is the exact fold to seq %d", e.Seq, p.Seq)
		at, err := f.rt.StateAt(f.ctx, cp.ID)
		require.NoError(t, err)
		got, err := json.Marshal(at)
		require.NoError(t, err)
		require.JSONEq(t, fold(e.Seq), string(got), "the state at the checkpoint at seq %d is the exact fold", e.Seq)
		require.Equal(t, at.Ticks, cp.WorldLocalTime, "the checkpoint at seq %d has the run's clock", e.Seq)
	}
	require.Positive(t, n)
}

func TestModelPlansAndRunsATask(t *testing.T) {
	t.Parallel()
	answer := modelPlan("echo planned-by-model")
	m := setupModel(t, criticAnswers(func(int) ollamatest.Reply {
		return ollamatest.Reply{Content: answer, Chunks: 7}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Say hello from the model.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID) // only asked where bubblewrap is missing
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, runtime.StepDone, st.Steps["step-1"].State)
	require.Equal(t, "planned-by-model\n", st.Steps["step-1"].Result.StdoutTail)

	// The planner asked the router's model with the plan schema as the
	// format and the tool catalog in its prompt.
	plans := m.chats(isPlanner)
	require.Len(t, plans, 1)
	require.Equal(t, testModel, plans[0].Model)
	var format map[string]any
	require.NoError(t, json.Unmarshal(plans[0].Format, &format))
	require.Contains(t, string(plans[0].Format), `"tool":{"type":"string","enum":["shell_exec"]}`, "the format names the catalog's tools")
	for _, name := range []string{"shell_exec", "file_read", "file_write", "gate", "noop"} {
		require.Contains(t, system(plans[0]), "- "+name+": ", "the catalog lists %s", name)
	}
	require.Contains(t, system(plans[0]), `args schema: {"$schema"`)
	require.Contains(t, user(plans[0]), "Say hello from the model.")
	require.Contains(t, user(plans[0]), "Workspace: "+st.Request.Workspace, "the context builder's part")

	// Every planner token reached Deps.Tokens, in order, as it streamed.
	toks := m.tokens.get("")
	require.Greater(t, len(toks), 7, "the plan's tokens, then the review's")
	require.Equal(t, answer, strings.Join(toks[:7], ""))

	// The critic model judged the step (the router's pick: nobody chose one).
	crits := m.chats(isCritic)
	require.Len(t, crits, 1)
	require.Equal(t, testModel, crits[0].Model)
	require.JSONEq(t, string(critic.CritiqueSchema()), string(crits[0].Format))
	require.Contains(t, user(crits[0]), "planned-by-model")
	c := st.Steps["step-1"].Critique
	require.Equal(t, critic.SourceModel, c.Source)
	require.Equal(t, testModel, c.Model)
	require.InDelta(t, 0.85, c.Score, 1e-9)

	events := m.events(t, run.ID)
	var accepted struct {
		Model string `json:"model"`
	}
	for _, e := range events {
		if e.Type == runtime.EvPlanAccepted {
			require.NoError(t, json.Unmarshal(e.Payload, &accepted))
		}
	}
	require.Equal(t, testModel, accepted.Model)
	require.Equal(t, 0, count(events, runtime.EvPlanInvalid))
	m.requireExactCheckpoints(t, run.ID)
}

func TestInvalidPlansAreReplannedThenTheRunFails(t *testing.T) {
	t.Parallel()
	bad := []string{
		"Sure! Here is my plan: run hostnamectl.",
		`{"decision": "plan"}`,
		`{"decision": "plan", "reason": "one step", "confidence": 0.5, "plan": {"nodes": [` +
			`{"id": "step-1", "kind": "tool", "tool": "teleport", "args": {}, "depends_on": []}]}}`,
		modelPlan("echo never"), // a fourth attempt would get this; there is none
	}
	m := setupModel(t, criticAnswers(func(n int) ollamatest.Reply { return ollamatest.Reply{Content: bad[min(n, len(bad))-1]} }))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Show the host name.", ApprovalMode: runtime.AutoSandboxed, MaxReplans: 2})
	require.NoError(t, err)
	st := m.waitStatus(t, run.ID, backend.RunFailed, backend.RunCompleted, backend.RunPaused)
	require.Equal(t, backend.RunFailed, st.Status, st.StatusReason)

	plans := m.chats(isPlanner)
	require.Len(t, plans, 3, "the first attempt and MaxReplans replans")
	require.NotContains(t, user(plans[0]), "rejected")
	require.Contains(t, user(plans[1]), "Your previous answer was rejected: the planner's answer is not valid JSON")
	require.Contains(t, user(plans[2]), "Your previous answer was rejected: the planner's answer does not match the plan schema")
	require.Contains(t, user(plans[2]), "'confidence'")

	events := m.events(t, run.ID)
	require.Equal(t, 3, count(events, runtime.EvPlanInvalid))
	require.Equal(t, 0, count(events, runtime.EvStepStarted))
	// The run fails with the validator's own sentence.
	const validator = `step "step-1" uses tool "teleport", which is not available (available tools: file_read, file_write, gate, hang, hang_read, noop, shell_exec, web_fetch)`
	require.Equal(t, "The plan is still invalid after 2 replans by qwen2.5:7b: "+validator+". Try a larger planning model than qwen2.5:7b, or give an explicit plan.", st.StatusReason)
	require.Equal(t, st.StatusReason, st.Error)
	m.requireExactCheckpoints(t, run.ID)
}

func TestBadPlanThenGoodReplanCompletes(t *testing.T) {
	t.Parallel()
	m := setupModel(t, criticAnswers(func(n int) ollamatest.Reply {
		if n == 1 {
			return ollamatest.Reply{Content: "```json\n{\"decision\": \"plan\", \"plan\": {\"nodes\": [\n```", DoneReason: "length"}
		}
		return ollamatest.Reply{Content: modelPlan("echo second-try", "echo and-then")}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Say two things.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "and-then\n", st.Steps["step-2"].Result.StdoutTail)

	plans := m.chats(isPlanner)
	require.Len(t, plans, 2)
	require.Contains(t, user(plans[1]), "cut off at the model's length limit", "the feedback says why the answer was refused")
	events := m.events(t, run.ID)
	require.Equal(t, 1, count(events, runtime.EvPlanInvalid))
	require.Equal(t, 1, count(events, runtime.EvPlanAccepted))
	require.Empty(t, st.InvalidPlan)
	m.requireExactCheckpoints(t, run.ID)
}

func TestModelRespondsWithoutAPlan(t *testing.T) {
	t.Parallel()
	const text = "Paris is the capital of France."
	m := setupModel(t, criticAnswers(func(int) ollamatest.Reply {
		return ollamatest.Reply{Content: `{"decision": "respond", "reason": "a question of fact", "confidence": 0.95, "response": "` + text + `"}`}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "What is the capital of France?"})
	require.NoError(t, err)
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, text, st.Response)
	require.Equal(t, "a question of fact", st.StatusReason)
	require.Nil(t, st.Graph)
	events := m.events(t, run.ID)
	require.Equal(t, 1, count(events, runtime.EvAnswered), "the answer is the run's answer")
	require.Equal(t, text, st.Answer.Text)
	require.Empty(t, st.Answer.Cites, "it rests on no step")
	require.Equal(t, testModel, st.Answer.Model)
	require.Equal(t, 0, count(events, runtime.EvStepStarted))
	require.Empty(t, m.chats(isCritic), "nothing ran, so there is nothing to criticise")
}

func TestOllamaGoneMidRunPausesAndResumes(t *testing.T) {
	t.Parallel()
	var m *modelFixture
	var down atomic.Bool
	m = setupModel(t, criticAnswers(func(n int) ollamatest.Reply {
		if n == 1 {
			// Ollama dies right after its first (useless) answer.
			down.Store(true)
			m.srv.Fail("/api/chat", 503, "model runner has unexpectedly stopped")
			return ollamatest.Reply{Content: "not json"}
		}
		return ollamatest.Reply{Content: modelPlan("echo back-again")}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Say you are back.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunPaused, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunPaused, st.Status, st.StatusReason)
	require.True(t, down.Load())
	require.Equal(t, "Ollama at "+m.srv.URL().String()+" failed while "+testModel+
		" was answering: model runner has unexpectedly stopped (HTTP 503)", st.StatusReason)
	row, err := m.store.GetRun(m.ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunPaused, row.Status, "the registry row shows the pause")
	require.NoError(t, m.rt.Wait(m.ctx, run.ID), "a paused run has no driver")

	m.srv.Fail("/api/chat", 0, "")
	require.NoError(t, m.rt.Resume(m.ctx, run.ID))
	st = m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "back-again\n", st.Steps["step-1"].Result.StdoutTail)
	plans := m.chats(isPlanner)
	require.Len(t, plans, 2, "the first answer and the replan after the resume (the failed one is not decoded)")
	require.Contains(t, user(plans[1]), "Your previous answer was rejected", "the replan after the pause still carries the feedback")
	chatCalls := 0
	for _, r := range m.srv.Requests() {
		if r.Path == "/api/chat" {
			chatCalls++
		}
	}
	require.Equal(t, 5, chatCalls, "three planner calls, one of them refused, one critic call and the review")
	err = m.rt.Resume(m.ctx, run.ID)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "a finished run cannot be resumed")
	m.requireExactCheckpoints(t, run.ID)
}

func TestWithoutOllamaATaskWaitsForAModel(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	f := setup(t, withModel(ollama.New(&url.URL{Scheme: "http", Host: addr}, nil)))

	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "Summarise my notes."})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunPaused, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunPaused, st.Status, "a task that needs a model waits for one; it does not fail")
	require.Equal(t, planner.NeedsModel, st.StatusReason)
	require.True(t, st.NeedsModel, "the pause is flagged as waiting for a model, for the window")
	require.Empty(t, st.Error)

	// What needs no model still runs: an explicit plan, a shell one-liner.
	explicit, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "write then read", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(step("w", "file_write", `{"path":"a.txt","content":"offline"}`), step("r", "file_read", `{"path":"a.txt"}`, "w"))})
	require.NoError(t, err)
	oneLiner, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "$ echo still-here", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	f.approveAll(t, oneLiner.ID)
	st = f.waitStatus(t, explicit.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.False(t, st.NeedsModel)
	require.Contains(t, string(st.Steps["r"].Result.Output), "offline")
	require.Equal(t, critic.SourceHeuristic, st.Steps["r"].Critique.Source)
	require.Contains(t, st.Steps["r"].Critique.Explanation, "no critic model is available")
	st = f.waitStatus(t, oneLiner.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "still-here\n", st.Steps["step-1"].Result.StdoutTail)
}

func TestCriticFailureFallsBackToTheHeuristic(t *testing.T) {
	t.Parallel()
	var critiques atomic.Int32
	m := setupModel(t, func(req api.ChatRequest) ollamatest.Reply {
		if isCritic(req) {
			if critiques.Add(1) == 1 {
				return ollamatest.Reply{Content: "What a lovely step! 10/10"}
			}
			return ollamatest.Reply{Status: 500, Error: "CUDA error: out of memory"}
		}
		return ollamatest.Reply{Content: modelPlan("echo one", "echo two")}
	})
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Count to two.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, "a failing critic never stops the run: %s", st.StatusReason)
	require.Len(t, m.chats(isCritic), 2, "the critic model was asked about each step")

	first, second := st.Steps["step-1"].Critique, st.Steps["step-2"].Critique
	require.Equal(t, critic.SourceHeuristic, first.Source)
	require.Contains(t, first.Explanation, "the critic model's answer is not valid JSON")
	require.InDelta(t, 0.9, first.Score, 1e-9)
	require.Equal(t, critic.SourceHeuristic, second.Source)
	require.Contains(t, second.Explanation, "CUDA error: out of memory")
	m.requireExactCheckpoints(t, run.ID)
}

func TestDroppedStreamPausesAndSlowStreamCancels(t *testing.T) {
	t.Parallel()
	var drop atomic.Bool
	drop.Store(true)
	answer := modelPlan("echo after-the-drop")
	m := setupModel(t, criticAnswers(func(int) ollamatest.Reply {
		if drop.Load() {
			return ollamatest.Reply{Content: answer, Chunks: 10, DropAfter: 3, Delay: 5 * time.Millisecond}
		}
		return ollamatest.Reply{Content: answer, Chunks: 4, Delay: 20 * time.Millisecond}
	}))
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Survive a dropped stream.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunPaused, backend.RunFailed, backend.RunCompleted)
	require.Equal(t, backend.RunPaused, st.Status, st.StatusReason)
	require.Equal(t, "the connection to Ollama dropped while "+testModel+" was answering", st.StatusReason)
	require.Len(t, m.tokens.get(""), 3, "the tokens before the drop were streamed")
	require.Nil(t, st.Graph, "half an answer is never a plan")

	drop.Store(false)
	require.NoError(t, m.rt.Resume(m.ctx, run.ID))
	st = m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "after-the-drop\n", st.Steps["step-1"].Result.StdoutTail)

	// A stream that trickles on for minutes does not hold a cancel up.
	m.srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: answer, Chunks: 100, Delay: time.Second}
	})
	slow, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Take your time."})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for _, c := range m.chats(isPlanner) {
			if strings.Contains(user(c), "Take your time.") {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond)
	start := time.Now()
	require.NoError(t, m.rt.Cancel(m.ctx, slow.ID, ""))
	require.Less(t, time.Since(start), 30*time.Second, "the stream goes on for 100 s")
	st = m.waitStatus(t, slow.ID, backend.RunTerminated)
	require.Equal(t, "Cancelled by the user.", st.StatusReason)
}

func TestSlowCriticDoesNotHoldTheResultBack(t *testing.T) {
	t.Parallel()
	var m *modelFixture
	var durableFirst atomic.Bool
	m = setupModel(t, func(req api.ChatRequest) ollamatest.Reply {
		if !isCritic(req) {
			return ollamatest.Reply{Content: modelPlan("echo judged-slowly")}
		}
		// While the model thinks, the step's result is already on the
		// ledger: a crash now would not leave the step in doubt.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			events, err := m.ledger.Query(m.ctx, backend.EventQuery{Types: []string{runtime.EvStepFinished}})
			if err == nil && len(events) > 0 {
				durableFirst.Store(true)
				break
			}
		}
		return ollamatest.Reply{Content: goodCritique, Chunks: 3, Delay: 50 * time.Millisecond}
	})
	run, err := m.rt.Submit(m.ctx, runtime.TaskRequest{Task: "Be judged slowly.", ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	m.approveAll(t, run.ID)
	st := m.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.True(t, durableFirst.Load(), "the result was durable while the critic model was still answering")
	require.Equal(t, critic.SourceModel, st.Steps["step-1"].Critique.Source)
	m.requireExactCheckpoints(t, run.ID)
}
