package critic_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/critic"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
)

const model = "qwen2.5:7b"

var step = backend.TaskNode{
	ID: "step-1", Kind: "tool", Tool: "shell_exec", Args: json.RawMessage(`{"command":"hostnamectl"}`),
	DependsOn: []string{}, Title: "Show the host",
}

func request(r backend.ToolResult, stdout, stderr string) critic.Request {
	return critic.Request{Task: "What is this machine's hostname?", Step: step, Result: r, Stdout: stdout, Stderr: stderr, Model: model}
}

func TestHeuristic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		result         backend.ToolResult
		stdout, stderr string
		score          float64
		says           string
	}{
		{"clean exit with output", backend.ToolResult{}, "Static hostname: duck\n", "", 0.9, "succeeded and produced output."},
		{"output from result bytes", backend.ToolResult{Stdout: []byte("duck\n")}, "", "", 0.9, "produced output"},
		{"structured output counts", backend.ToolResult{Output: json.RawMessage(`{"content":"x"}`)}, "", "", 0.9, "produced output"},
		{"clean exit with warnings", backend.ToolResult{}, "duck", "warning: locale not set", 0.8, `"warning: locale not set"`},
		{"clean exit, no output", backend.ToolResult{}, "", "  \n", 0.6, "produced no output"},
		{"cut output", backend.ToolResult{Truncated: true}, "lots", "", 0.85, "cut at the output limit"},
		{"timed out", backend.ToolResult{TimedOut: true, ExitCode: -1, Duration: 2*time.Minute + 3*time.Microsecond}, "partial", "", 0.05, "timed out after 2m0s"},
		{"timed out and cut", backend.ToolResult{TimedOut: true, Truncated: true}, "", "", 0, "timed out"},
		{"failed silently", backend.ToolResult{ExitCode: 1}, "", "", 0.3, "exit code 1 without an error message"},
		{"failed with a message", backend.ToolResult{ExitCode: 2}, "", "\nerror: unknown flag --x\nusage: ...", 0.2, `reported "error: unknown flag --x"`},
		{"command not found", backend.ToolResult{ExitCode: 127}, "", "sh: 1: hostnamectl: not found", 0.1, `could not do its work: "sh: 1: hostnamectl: not found"`},
		{"permission denied", backend.ToolResult{ExitCode: 1}, "", "cat: /etc/shadow: Permission denied", 0.1, "could not do its work"},
		{"python traceback", backend.ToolResult{ExitCode: 1, Truncated: true}, "", "Traceback (most recent call last):\n  File ...", 0.05, "cut at the output limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := critic.Heuristic{}.Evaluate(request(tc.result, tc.stdout, tc.stderr))
			require.Equal(t, tc.score, c.Score)
			require.Equal(t, critic.SourceHeuristic, c.Source)
			require.Empty(t, c.Model)
			require.Contains(t, c.Explanation, tc.says)
			require.True(t, strings.HasPrefix(c.Explanation, "The step "), c.Explanation)
			require.True(t, strings.HasSuffix(c.Explanation, "."), c.Explanation)
		})
	}
}

type fixture struct {
	srv   *ollamatest.Server
	model *critic.Model
}

func setup(t *testing.T, reply ollamatest.Reply) fixture {
	t.Helper()
	srv := ollamatest.NewServer(t)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply { return reply })
	return fixture{srv: srv, model: &critic.Model{Client: ollama.New(srv.URL(), nil)}}
}

func TestModelCritique(t *testing.T) {
	t.Parallel()
	f := setup(t, ollamatest.Reply{Content: `{"score": 0.95, "explanation": "The output names the host."}`})
	long := strings.Repeat("x", 10000) + "THE-END"
	var tokens strings.Builder
	req := request(backend.ToolResult{Duration: time.Second, FilesChanged: []string{"notes.txt"}}, "Static hostname: duck\n"+long, "")
	req.OnToken = func(s string) { tokens.WriteString(s) }
	c, err := f.model.Evaluate(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, critic.Critique{Score: 0.95, Explanation: "The output names the host.", Source: critic.SourceModel, Model: model}, c)
	require.Equal(t, `{"score": 0.95, "explanation": "The output names the host."}`, tokens.String())

	chats := f.srv.Chats()
	require.Len(t, chats, 1)
	require.JSONEq(t, string(critic.CritiqueSchema()), string(chats[0].Format))
	require.Equal(t, "system", chats[0].Messages[0].Role)
	require.Contains(t, chats[0].Messages[0].Content, "You are the critic of ducklm")
	user := chats[0].Messages[1].Content
	require.Contains(t, user, "Task:\nWhat is this machine's hostname?")
	require.Contains(t, user, "Step step-1 (tool, tool shell_exec): Show the host")
	require.Contains(t, user, `Args: {"command":"hostnamectl"}`)
	require.Contains(t, user, "Result: exit code 0, took 1s")
	require.Contains(t, user, "Files changed: notes.txt")
	require.Contains(t, user, "Static hostname: duck")
	require.Contains(t, user, "THE-END", "the tail of a long output is kept")
	require.Contains(t, user, "bytes cut]")
	require.Contains(t, user, "Stderr:\n(empty)")
	require.Less(t, len(user), 6000, "outputs are capped")

	d := critic.Decision(c)
	require.NoError(t, d.Validate())
	require.Equal(t, backend.DecisionNoop, d.Type)
	require.Equal(t, 0.95, d.Confidence)
	require.JSONEq(t, `{"score":0.95,"explanation":"The output names the host.","source":"model","model":"qwen2.5:7b"}`, string(d.Payload))
}

// A real server's grammar fixes the shape of the answer, not its bounds.
func TestModelScoreOutOfRangeIsMendedAndRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		content string
		want    critic.Critique
	}{
		{`{"score": 7, "explanation": "great"}`, critic.Critique{Score: 1, Explanation: "great", Source: critic.SourceModel, Model: model,
			Normalised: []string{"score 7 is outside 0–1: taken as 1"}}},
		{`{"score": -0.5, "explanation": "  "}`, critic.Critique{Score: 0, Explanation: "The critic model gave a score without an explanation.",
			Source: critic.SourceModel, Model: model, Normalised: []string{"score -0.5 is outside 0–1: taken as 0", "the explanation was empty"}}},
	} {
		f := setup(t, ollamatest.Reply{Content: tc.content})
		c, err := f.model.Evaluate(context.Background(), request(backend.ToolResult{}, "duck", ""))
		require.NoError(t, err, tc.content)
		require.Equal(t, tc.want, c)
	}
}

func TestModelRejectsGarbage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ content, want string }{
		{"Looks fine to me!", "the critic model's answer is not valid JSON"},
		{`{"score": 0.5}`, "missing property 'explanation'"},
		{`{"score": 0.5, "explanation": "ok", "retry": true}`, "additional properties 'retry' not allowed"},
	} {
		f := setup(t, ollamatest.Reply{Content: tc.content})
		_, err := f.model.Evaluate(context.Background(), request(backend.ToolResult{}, "duck", ""))
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), tc.content)
		require.Contains(t, err.Error(), tc.want)
	}
}

func TestFallbackOnModelError(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	host := &url.URL{Scheme: "http", Host: l.Addr().String()}
	require.NoError(t, l.Close())
	w := critic.WithFallback{Model: &critic.Model{Client: ollama.New(host, nil)}}

	c := w.Evaluate(context.Background(), request(backend.ToolResult{}, "duck", ""))
	require.Equal(t, critic.SourceHeuristic, c.Source)
	require.Equal(t, 0.9, c.Score)
	require.Contains(t, c.ModelError, "Ollama is not reachable at "+host.String())
	require.Equal(t, "The step succeeded and produced output. The critic model was not used (Ollama is not reachable at "+
		host.String()+" (connection refused); start it with `ollama serve`, or correct the Ollama host in Settings): this is a rule of thumb over the exit status and output, not a judgement of the result.", c.Explanation)

	d := critic.Decision(c)
	require.NoError(t, d.Validate())
	var p map[string]any
	require.NoError(t, json.Unmarshal(d.Payload, &p))
	require.Equal(t, "heuristic", p["source"])
	require.NotEmpty(t, p["model_error"])
}

func TestFallbackOnGarbageAndMissingModel(t *testing.T) {
	t.Parallel()
	f := setup(t, ollamatest.Reply{Content: "I think it worked."})
	w := critic.WithFallback{Model: f.model}
	c := w.Evaluate(context.Background(), request(backend.ToolResult{ExitCode: 1}, "", ""))
	require.Equal(t, critic.SourceHeuristic, c.Source)
	require.Equal(t, 0.3, c.Score)
	require.Equal(t, "the critic model's answer is not valid JSON", c.ModelError)
	require.Contains(t, c.Explanation, "): this is a rule of thumb over the exit status and output, not a judgement of the result.")

	req := request(backend.ToolResult{}, "", "")
	req.Model = "absent:1b"
	c = w.Evaluate(context.Background(), req)
	require.Equal(t, critic.SourceHeuristic, c.Source)
	require.Equal(t, "model absent:1b is not installed in Ollama (ollama pull absent:1b)", c.ModelError)

	calls := len(f.srv.Chats())
	req.Model = ""
	c = w.Evaluate(context.Background(), req)
	require.Equal(t, "no critic model is available", c.ModelError)
	c = critic.WithFallback{}.Evaluate(context.Background(), request(backend.ToolResult{}, "", ""))
	require.Equal(t, "no critic model is available", c.ModelError)
	require.Equal(t, 0.6, c.Score)
	require.Len(t, f.srv.Chats(), calls, "no model, no call")
}

func TestFallbackUsesTheModelWhenItWorks(t *testing.T) {
	t.Parallel()
	f := setup(t, ollamatest.Reply{Content: "```json\n{\"score\": 0.4, \"explanation\": \"Only half the hosts answered.\"}\n```"})
	c := critic.WithFallback{Model: f.model}.Evaluate(context.Background(), request(backend.ToolResult{}, "duck", ""))
	require.Equal(t, critic.SourceModel, c.Source)
	require.Equal(t, 0.4, c.Score)
	require.Empty(t, c.ModelError)
}
