package api_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ollamaapi "github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/ollama/ollamatest"
)

// The installation's wiring runs the script the coder model wrote: the
// whole path from a coder step through the model, the approval of the
// script and the script tool, as the window drives it.
func TestCoderStepRunsTheModelsScriptThroughTheService(t *testing.T) {
	srv := ollamatest.New(ollamatest.Options{Models: []string{"qwen2.5-coder:7b", "qwen2.5:7b"}})
	t.Cleanup(srv.Close)
	script := "printf 'written by the coder' > coded.txt; echo coder-says-$((6 * 7))"
	srv.OnChat(func(req ollamaapi.ChatRequest) ollamatest.Reply {
		if len(req.Messages) > 0 && strings.Contains(req.Messages[0].Content, "You are the coder") {
			answer, _ := json.Marshal(map[string]string{"language": "sh", "script": script, "explanation": "writes the file"})
			return ollamatest.Reply{Content: string(answer)}
		}
		return ollamatest.Reply{Content: `{"score": 0.9, "explanation": "fine"}`}
	})
	a, _ := memorySetup(t, srv.URL().Host)
	ws := t.TempDir()
	run, err := a.SubmitTask(api.TaskInput{Workspace: ws, ApprovalMode: "auto_sandboxed",
		Plan: `{"nodes":[{"id":"c1","kind":"coder","args":{"goal":"write coded.txt","language":"sh"}}]}`})
	require.NoError(t, err)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		d, err := a.RunDetail(run.ID)
		require.NoError(t, err)
		for _, ap := range d.Approvals {
			require.NoError(t, a.Answer(api.AnswerInput{RunID: run.ID, RequestID: ap.RequestID, Approve: true}))
		}
		if d.Run.Status.Terminal() {
			require.Equal(t, backend.RunCompleted, d.Run.Status, d.State.StatusReason)
			rec := d.State.Steps["c1"]
			require.NotNil(t, rec.Script)
			require.Equal(t, script, rec.Script.Source)
			require.Equal(t, "coder-says-42\n", rec.Result.StdoutTail)
			data, err := os.ReadFile(filepath.Join(ws, "coded.txt"))
			require.NoError(t, err)
			require.Equal(t, "written by the coder", string(data))
			return
		}
		time.Sleep(30 * time.Millisecond)
	}
	t.Fatal("the coder step did not finish")
}
