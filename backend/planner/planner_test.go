package planner_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/planner"
)

const model = "qwen2.5:7b"

var catalog = []planner.ToolInfo{
	{Name: "shell_exec", Description: "Runs a shell command in the task's workspace.",
		ArgsSchema: json.RawMessage(`{"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}`)},
	{Name: "file_read", Description: "Reads a file inside the workspace.",
		ArgsSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
}

type fixture struct {
	srv *ollamatest.Server
	llm planner.LLM
}

// setup scripts the model to answer content to every chat.
func setup(t *testing.T, content string) fixture {
	t.Helper()
	srv := ollamatest.NewServer(t)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply { return ollamatest.Reply{Content: content, Chunks: 5} })
	return fixture{srv: srv, llm: planner.LLM{Client: ollama.New(srv.URL(), nil)}}
}

func request(task string) planner.Request {
	return planner.Request{Task: task, Context: "The machine runs Debian 12.", Catalog: catalog, Model: model, Attempt: 1}
}

func payload[T any](t *testing.T, d backend.Decision) T {
	t.Helper()
	require.NoError(t, d.Validate())
	var v T
	require.NoError(t, json.Unmarshal(d.Payload, &v))
	return v
}

const goodPlan = `{"decision": "plan", "reason": "two commands answer it", "confidence": 0.8,
 "plan": {"nodes": [
  {"id": "step-1", "kind": "tool", "tool": "shell_exec", "args": {"command": "hostnamectl"}, "depends_on": [], "title": "Show the host"},
  {"id": "step-2", "kind": "coder", "args": {"goal": "summarise step-1"}, "depends_on": ["step-1"]}
 ]}}`

func TestPlanFromModel(t *testing.T) {
	t.Parallel()
	f := setup(t, goodPlan)
	var streamed strings.Builder
	req := request("What is this machine's hostname?")
	req.OnToken = func(s string) { streamed.WriteString(s) }
	d, err := f.llm.Plan(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, backend.DecisionPlan, d.Type)
	require.Equal(t, 0.8, d.Confidence)
	require.Equal(t, "two commands answer it", d.Reason)
	require.Equal(t, goodPlan, streamed.String(), "every token reached OnToken, in order")

	p := payload[planner.PlanPayload](t, d)
	require.Equal(t, planner.SourceModel, p.Source)
	require.Equal(t, model, p.Model)
	require.Len(t, p.Graph.Nodes, 2)
	n := p.Graph.Nodes[0]
	require.Equal(t, "step-1", n.ID)
	require.Equal(t, backend.KindToolStep, n.Kind)
	require.Equal(t, "shell_exec", n.Tool)
	require.JSONEq(t, `{"command":"hostnamectl"}`, string(n.Args))
	require.Equal(t, []string{}, n.DependsOn)
	require.Equal(t, backend.KindCoderStep, p.Graph.Nodes[1].Kind)
	require.Equal(t, []string{"step-1"}, p.Graph.Nodes[1].DependsOn)
}

func TestPromptCarriesCatalogSchemaAndContext(t *testing.T) {
	t.Parallel()
	f := setup(t, goodPlan)
	_, err := f.llm.Plan(context.Background(), request("What is this machine's hostname?"))
	require.NoError(t, err)

	chats := f.srv.Chats()
	require.Len(t, chats, 1)
	c := chats[0]
	require.Equal(t, model, c.Model)
	require.JSONEq(t, string(planner.PlanFormat(catalog)), string(c.Format), "the plan schema, narrowed to the catalog, is the format")
	require.Equal(t, map[string]any{"temperature": float64(0)}, c.Options)
	require.Len(t, c.Messages, 2)
	sys, user := c.Messages[0], c.Messages[1]
	require.Equal(t, "system", sys.Role)
	require.Contains(t, sys.Content, "- shell_exec: Runs a shell command in the task's workspace.")
	require.Contains(t, sys.Content, `args schema: {"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)
	require.Contains(t, sys.Content, "- file_read: Reads a file inside the workspace.")
	require.Contains(t, sys.Content, "step-1, step-2")
	require.Contains(t, sys.Content, `"respond"`)
	require.Equal(t, "user", user.Role)
	require.Equal(t, "Task:\nWhat is this machine's hostname?\n\nContext:\nThe machine runs Debian 12.", user.Content)
}

func TestReplanSendsThePreviousAnswerAndTheExactError(t *testing.T) {
	t.Parallel()
	f := setup(t, goodPlan)
	req := request("What is this machine's hostname?")
	req.Feedback = `step step-1 uses tool "shell" that is not in the catalog`
	req.Previous = `{"decision":"plan","reason":"r","confidence":1,"plan":{"nodes":[{"id":"step-1","kind":"tool","tool":"shell","args":{},"depends_on":[]}]}}`
	req.Attempt = 2
	d, err := f.llm.Plan(context.Background(), req)
	require.NoError(t, err)
	msgs := f.srv.Chats()[0].Messages
	require.Len(t, msgs, 4, "system, task, the previous answer, the error")
	require.Equal(t, "Task:\nWhat is this machine's hostname?\n\nContext:\nThe machine runs Debian 12.", msgs[1].Content)
	require.Equal(t, "assistant", msgs[2].Role)
	require.Equal(t, req.Previous, msgs[2].Content)
	require.Equal(t, "user", msgs[3].Role)
	require.Equal(t, "Your previous answer was rejected: step step-1 uses tool \"shell\" that is not in the catalog\nAnswer again with a corrected JSON object.", msgs[3].Content)

	// The replan is not the request that failed: its own seed, a higher temperature; both recorded.
	opts := f.srv.Chats()[0].Options
	require.Equal(t, map[string]any{"temperature": 0.3, "seed": float64(1)}, opts)
	call := planner.CallOf(d)
	require.NotNil(t, call)
	require.Equal(t, 2, call.Attempt)
	require.Equal(t, model, call.Model)
	require.Equal(t, map[string]any{"temperature": 0.3, "seed": float64(1)}, call.Options)
	require.Equal(t, goodPlan, call.Answer)
}

func TestAttemptOptionsNeverRepeatARequest(t *testing.T) {
	t.Parallel()
	require.Equal(t, map[string]any{"temperature": 0.0}, planner.AttemptOptions(nil, 1))
	seen := map[string]bool{}
	for attempt := 1; attempt <= 6; attempt++ {
		o := planner.AttemptOptions(map[string]any{"temperature": 0.0, "num_ctx": 4096}, attempt)
		require.Equal(t, 4096, o["num_ctx"], "other options are kept")
		require.LessOrEqual(t, o["temperature"].(float64), 1.0)
		key, _ := json.Marshal(o)
		require.False(t, seen[string(key)], "attempt %d repeats an earlier request: %s", attempt, key)
		seen[string(key)] = true
	}
	base := map[string]any{"temperature": 0.0}
	planner.AttemptOptions(base, 3)
	require.Equal(t, map[string]any{"temperature": 0.0}, base, "the base options are not changed")
}

// The answer a real Ollama server gave a tiny model: the grammar fixes the
// shape, not the bounds.
func TestOutOfRangeConfidenceIsMendedAndRecorded(t *testing.T) {
	t.Parallel()
	f := setup(t, `{"decision":"fail","reason":"ok","confidence":4}`)
	d, err := f.llm.Plan(context.Background(), request("list the files in the workspace"))
	require.NoError(t, err)
	require.Equal(t, backend.DecisionFail, d.Type, "a confidence of 4 is not a reason to replan")
	require.Equal(t, 1.0, d.Confidence)
	want := "qwen2.5:7b declined the task, saying: “ok.” Try a larger planning model than qwen2.5:7b, or give an explicit plan."
	require.Equal(t, want, d.Reason)
	require.Equal(t, want, payload[planner.FailPayload](t, d).Error)
	require.Equal(t, []string{"confidence 4 is outside 0–1: taken as 1"}, planner.CallOf(d).Normalised)

	f = setup(t, `{"decision":"plan","reason":"r","confidence":-2,"plan":{"nodes":[{"id":"step-1","kind":"tool","tool":"shell_exec","args":{"command":"ls"},"depends_on":[]}]}}`)
	d, err = f.llm.Plan(context.Background(), request("list"))
	require.NoError(t, err)
	require.Equal(t, backend.DecisionPlan, d.Type)
	require.Zero(t, d.Confidence)
	require.Equal(t, []string{"confidence -2 is outside 0–1: taken as 0"}, planner.CallOf(d).Normalised)
}

func TestUnambiguousSlipsAreMendedAndRecorded(t *testing.T) {
	t.Parallel()
	f := setup(t, `{"decision":"plan","reason":"r","confidence":0.5,"plan":{"nodes":[
	  {"id":"","kind":"tool","tool":"shell_exec","args":{"command":"ls"},"depends_on":[]},
	  {"id":" b ","kind":"coder","tool":"shell_exec","args":{"goal":"sum"},"depends_on":["step-1","step-1"," step-1"]}]}}`)
	d, err := f.llm.Plan(context.Background(), request("list"))
	require.NoError(t, err)
	require.Equal(t, backend.DecisionPlan, d.Type, d.Reason)
	g := payload[planner.PlanPayload](t, d).Graph
	require.Equal(t, "step-1", g.Nodes[0].ID)
	require.Equal(t, "b", g.Nodes[1].ID)
	require.Empty(t, g.Nodes[1].Tool)
	require.Equal(t, []string{"step-1"}, g.Nodes[1].DependsOn)
	require.Equal(t, []string{
		`step id " b " of plan.nodes[1] lost its surrounding spaces`,
		`plan.nodes[1] listed dependency "step-1" twice: once is enough`,
		`plan.nodes[1] dependency " step-1" lost its surrounding spaces`,
		`plan.nodes[1] listed dependency "step-1" twice: once is enough`,
		`plan.nodes[1] is a coder step, so its "tool" was dropped`,
		`plan.nodes[0] had an empty id: named step-1 after its place`,
	}, planner.CallOf(d).Normalised)

	// An empty id another step depends on has no one meaning: replanned.
	f = setup(t, `{"decision":"plan","reason":"r","confidence":0.5,"plan":{"nodes":[
	  {"id":"","kind":"tool","tool":"shell_exec","args":{"command":"ls"},"depends_on":[]},
	  {"id":"b","kind":"tool","tool":"shell_exec","args":{"command":"ls"},"depends_on":[""]}]}}`)
	d, err = f.llm.Plan(context.Background(), request("list"))
	require.NoError(t, err)
	require.Equal(t, backend.DecisionReplan, d.Type)
	require.Contains(t, d.Reason, "at /plan/nodes/0/id: minLength")
}

func TestRepetitionCutIsReplannedNotPaused(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(t)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: `{"decision":"plan","reason":"` + strings.Repeat("o", 40), Chunks: 69, Cut: true}
	})
	d, err := planner.LLM{Client: ollama.New(srv.URL(), nil)}.Plan(context.Background(), request("x"))
	require.NoError(t, err, "the server is fine: this is an unusable answer, not an unreachable model")
	require.Equal(t, backend.DecisionReplan, d.Type)
	require.Equal(t, `qwen2.5:7b repeated "o" over and over, so Ollama stopped its answer; a larger model, or a retry at a higher temperature, may answer`, d.Reason)
	require.Equal(t, `{"decision":"plan","reason":"`+strings.Repeat("o", 40), planner.CallOf(d).Answer)
}

func TestRevisionPromptListsFinishedAndFailedSteps(t *testing.T) {
	t.Parallel()
	f := setup(t, goodPlan)
	req := request("count the lines of notes.txt")
	req.Revision = &planner.Revision{
		Done: []planner.StepOutcome{{ID: "step-1", Kind: "tool", Tool: "shell_exec", Args: json.RawMessage(`{"command": "ls"}`), Result: "notes.txt\n"}},
		Failed: []planner.StepOutcome{{ID: "step-2", Kind: "tool", Tool: "shell_exec", Args: json.RawMessage(`{"command":"wc -l note.txt"}`),
			Result: "exited with code 1: wc: note.txt: No such file"}},
	}
	_, err := f.llm.Plan(context.Background(), req)
	require.NoError(t, err)
	user := f.srv.Chats()[0].Messages[1].Content
	require.Contains(t, user, "These steps finished and stay as they are")
	require.Contains(t, user, `- step-1 (shell_exec {"command":"ls"}): notes.txt`)
	require.Contains(t, user, "These steps failed after their retries:\n- step-2 (shell_exec {\"command\":\"wc -l note.txt\"}): exited with code 1: wc: note.txt: No such file")
	require.Contains(t, user, "only the new steps")
}

func TestUnusableAnswersBecomeReplans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not JSON", `Sure! Here is the plan: run hostnamectl`, "the planner's answer is not valid JSON: invalid character 'S' looking for beginning of value"},
		{"empty", "  ", "the planner's answer was empty"},
		{"trailing text", `{"decision":"fail","reason":"x","confidence":0} and more`, "the planner's answer is not valid JSON: invalid character after top-level value"},
		{"bad kind", `{"decision":"plan","reason":"r","confidence":0.5,"plan":{"nodes":[{"id":"step-1","kind":"script","tool":"shell_exec","args":{},"depends_on":[]}]}}`,
			"the planner's answer does not match the plan schema: at /plan/nodes/0/kind: value must be one of 'tool', 'coder'"},
		{"missing fields", `{"decision":"maybe","reason":"r"}`,
			"the planner's answer does not match the plan schema: at the top level: missing property 'confidence'; at /decision: value must be one of 'plan', 'respond', 'fail'"},
		{"no nodes", `{"decision":"plan","reason":"r","confidence":0.5,"plan":{"nodes":[]}}`,
			"the planner's answer does not match the plan schema: at /plan/nodes: minItems: got 0, want 1"},
		{"plan without plan", `{"decision":"plan","reason":"r","confidence":0.5}`, `the planner's answer chose "plan" but gave no "plan"`},
		{"respond without response", `{"decision":"respond","reason":"r","confidence":0.5}`, `the planner's answer chose "respond" but gave no "response"`},
		{"tool step without tool", `{"decision":"plan","reason":"r","confidence":0.5,"plan":{"nodes":[{"id":"step-1","kind":"tool","args":{},"depends_on":[]}]}}`,
			`the planner's answer has a tool step without a "tool" (plan.nodes[0], id "step-1")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t, tc.content)
			req := request("hostname?")
			req.Attempt = 3
			d, err := f.llm.Plan(context.Background(), req)
			require.NoError(t, err, "an unusable answer is a decision, not an error")
			require.Equal(t, backend.DecisionReplan, d.Type)
			require.Equal(t, tc.want, d.Reason)
			p := payload[planner.ReplanPayload](t, d)
			require.Equal(t, tc.want, p.Error)
			require.Equal(t, 3, p.Attempt)
			require.Equal(t, tc.content, p.Output)
			require.Zero(t, d.Confidence)
		})
	}
}

func TestCutOffAnswerSaysSo(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(t)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: `{"decision":"plan","reason":"r","confidence":0.5,"plan":{"nodes":[{"id":"st`, DoneReason: "length"}
	})
	d, err := planner.LLM{Client: ollama.New(srv.URL(), nil)}.Plan(context.Background(), request("x"))
	require.NoError(t, err)
	require.Equal(t, backend.DecisionReplan, d.Type)
	require.Contains(t, d.Reason, "not valid JSON")
	require.Contains(t, d.Reason, "cut off at the model's length limit")
}

func TestRespondAndFailFromModel(t *testing.T) {
	t.Parallel()
	f := setup(t, "```json\n"+`{"decision":"respond","reason":"the context says it","confidence":0.9,"response":"Debian 12."}`+"\n```")
	d, err := f.llm.Plan(context.Background(), request("Which OS is this?"))
	require.NoError(t, err)
	require.Equal(t, backend.DecisionRespond, d.Type)
	require.Equal(t, 0.9, d.Confidence)
	require.Equal(t, "Debian 12.", payload[planner.RespondPayload](t, d).Text)

	f = setup(t, `{"decision":"fail","reason":"no tool can reach the printer","confidence":0.7}`)
	d, err = f.llm.Plan(context.Background(), request("Print a page."))
	require.NoError(t, err)
	require.Equal(t, backend.DecisionFail, d.Type)
	want := "qwen2.5:7b declined the task, saying: “no tool can reach the printer.” Try a larger planning model than qwen2.5:7b, or give an explicit plan."
	require.Equal(t, want, d.Reason)
	p := payload[planner.FailPayload](t, d)
	require.Equal(t, want, p.Error)
	require.False(t, p.NeedsModel)
}

func TestModelErrorsAreErrors(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	host := &url.URL{Scheme: "http", Host: l.Addr().String()}
	require.NoError(t, l.Close())
	_, err = planner.LLM{Client: ollama.New(host, nil)}.Plan(context.Background(), request("hostname?"))
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "Ollama is not reachable at "+host.String())

	f := setup(t, goodPlan)
	req := request("hostname?")
	req.Model = "absent:1b"
	_, err = f.llm.Plan(context.Background(), req)
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))

	req.Model = ""
	_, err = f.llm.Plan(context.Background(), req)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, err = planner.LLM{}.Plan(context.Background(), request("hostname?"))
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))
}

func TestLLMServesDirectTasksWithoutTheModel(t *testing.T) {
	t.Parallel()
	f := setup(t, goodPlan)
	d, err := f.llm.Plan(context.Background(), request("$ uname -a"))
	require.NoError(t, err)
	require.Equal(t, backend.DecisionPlan, d.Type)
	require.Equal(t, planner.SourceOneLiner, payload[planner.PlanPayload](t, d).Source)
	require.Empty(t, f.srv.Requests())
}
