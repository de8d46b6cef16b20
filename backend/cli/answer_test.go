package cli_test

import (
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend/ollama/ollamatest"
)

// A task a model plans ends with its answer: `ducklm run` prints it last,
// with the steps it rests on, and `ducklm runs` shows its first line.
func TestRunPrintsTheAnswerLast(t *testing.T) {
	home(t)
	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"qwen2.5:7b"}})
	srv.OnChat(func(req api.ChatRequest) ollamatest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.HasPrefix(req.Messages[0].Content, "You are the critic"):
			return ollamatest.Reply{Content: `{"score": 0.9, "explanation": "It printed the count."}`}
		case strings.Contains(last, "The plan for this task has run."):
			return ollamatest.Reply{Content: `{"decision": "respond", "reason": "step-1 printed it", "confidence": 0.9,
				"response": "There are 3 ducks.\nThey were counted by step-1.", "cites": ["step-1"]}`}
		}
		return ollamatest.Reply{Content: `{"decision": "plan", "reason": "count them", "confidence": 0.9, "plan": {"nodes": [
			{"id": "step-1", "kind": "tool", "tool": "shell_exec", "args": {"command": "echo 3"}, "depends_on": []}]}}`}
	})
	t.Setenv("OLLAMA_HOST", srv.URL().String())
	r := ducklmIn(t, "y\n", "run", "How many ducks are there?", "--approve", "auto")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasSuffix(r.stdout, "answer: There are 3 ducks.\nThey were counted by step-1.\n  rests on step-1\n"), r.stdout)
	require.Contains(t, r.stderr, "completed: qwen2.5:7b answered the task from the results of step-1 (review 1).")

	r = ok(t, "runs")
	require.Contains(t, r.stdout, "ANSWER")
	require.Contains(t, r.stdout, "There are 3 ducks.")
	require.NotContains(t, r.stdout, "They were counted", "the list shows the first line")

	r = ducklm(t, "run", "x", "--max-reviews", "-1")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--max-reviews must be a positive number of review rounds, not -1")
}
