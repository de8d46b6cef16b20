package realmodel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/coder"
	"ducklm/backend/critic"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/planner"
	"ducklm/backend/router"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
	"ducklm/backend/tool"
	"ducklm/tests/realmodel"
)

var urlInTask = regexp.MustCompile(`https?://[^\s"]+`)

// TestATaskWithAURLIsPlannedToWebFetch runs a natural-language task that
// names a URL through the whole loop: the planner's request (prompt and
// format, as ducklm builds them) goes to a scripted fake that plans the URL
// it finds in the task as one web_fetch step, as a planning model should;
// the router asks for the loopback host; the approved step fetches the page
// from a loopback server and the real model's critic scores the text.
func TestATaskWithAURLIsPlannedToWebFetch(t *testing.T) {
	s := open(t)
	var hits atomic.Int64
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Duck 2.4 release notes</title></head><body><nav>Home | Log in</nav><article>
<p>Duck 2.4 reads web pages for a task, within time, size and redirect limits, and keeps the raw body as a blob.</p>
<p>Pages that need JavaScript are rendered by a sandboxed browser with a throw-away profile.</p>
<p>Only hosts the user approved are ever contacted; private addresses need their own approval.</p></article></body></html>`)
	}))
	t.Cleanup(page.Close)

	fake := ollamatest.New(ollamatest.Options{Models: []string{realmodel.Tiny}})
	t.Cleanup(fake.Close)
	var asked atomic.Value    // the planner's request
	var reviewed atomic.Value // the review's request
	fake.OnChat(func(req api.ChatRequest) ollamatest.Reply {
		if last := req.Messages[len(req.Messages)-1].Content; strings.Contains(last, "The plan for this task has run.") {
			// As a planning model reading the results should: answer from
			// the page, citing the step that read it.
			reviewed.Store(req)
			answer, _ := json.Marshal(map[string]any{"decision": "respond", "reason": "the page says it", "confidence": 0.9,
				"response": "Duck 2.4 reads web pages within time, size and redirect limits.", "cites": []string{"step-1"}})
			return ollamatest.Reply{Content: string(answer)}
		}
		asked.Store(req)
		url := urlInTask.FindString(req.Messages[len(req.Messages)-1].Content)
		answer, _ := json.Marshal(map[string]any{"decision": "plan", "reason": "the task names a URL", "confidence": 0.9,
			"plan": map[string]any{"nodes": []map[string]any{{"id": "step-1", "kind": "tool", "tool": "web_fetch",
				"args": map[string]string{"url": url}, "depends_on": []string{}, "title": "read the page"}}}})
		return ollamatest.Reply{Content: string(answer)}
	})

	oc := ollama.New(srv.URL(), nil)
	rt := runtime.New(runtime.Deps{
		Store: store.NewWorlds(s.svc.DB, s.svc.Ledger), Events: s.svc.Ledger, Blobs: s.svc.Blobs, Tools: s.svc.Tools,
		Planner: planner.LLM{Client: ollama.New(fake.URL(), nil)}, Offline: planner.Offline{},
		Critic: critic.WithFallback{Model: &critic.Model{Client: oc}}, Coder: coder.Model{Client: oc},
		Models: s.svc, Sandboxed: s.svc.Sandboxed,
		WorkRoot: filepath.Join(t.TempDir(), "workspaces"),
		ScriptTool: func(language, source string) backend.Tool {
			return tool.NewScript(language, source, tool.RequireSandbox)
		},
	})
	t.Cleanup(rt.Close)

	task := "summarise the release notes at " + page.URL + "/notes.html"
	run, err := rt.Submit(context.Background(), runtime.TaskRequest{Task: task, ApprovalMode: runtime.AskRisky, Models: models(realmodel.Tiny)})
	require.NoError(t, err)
	var st *runtime.RunState
	var approvals []runtime.Approval
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		st, _, err = rt.Load(context.Background(), run.ID)
		require.NoError(t, err)
		if approvals, err = rt.Approvals(context.Background(), run.ID); err == nil && len(approvals) > 0 || st.Status.Terminal() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Len(t, approvals, 1, "the web step waits for its host's approval (status %s: %s)", st.Status, st.StatusReason)
	a := approvals[0]
	require.Equal(t, "web_fetch", a.Tool)
	require.Equal(t, router.RuleWebPrivate, a.Rule)
	require.NotNil(t, a.Web)
	require.Equal(t, page.URL+"/notes.html", a.Web.URL)
	require.Zero(t, hits.Load())

	// The planner was asked as ducklm asks a model: its prompt says how a
	// URL is read and its format allows web_fetch with a url.
	req := asked.Load().(api.ChatRequest)
	require.Contains(t, req.Messages[0].Content, "reads it with web_fetch")
	require.Contains(t, string(req.Format), `"web_fetch"`)
	require.Contains(t, req.Messages[len(req.Messages)-1].Content, task)

	require.NoError(t, rt.Answer(context.Background(), run.ID, runtime.Answer{RequestID: a.RequestID, Approve: true, By: "test"}))
	for time.Now().Before(deadline) {
		st, _, err = rt.Load(context.Background(), run.ID)
		require.NoError(t, err)
		if st.Status.Terminal() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	got := st.Steps["step-1"]
	require.Contains(t, got.Result.StdoutTail, "Duck 2.4 reads web pages for a task")
	require.NotContains(t, got.Result.StdoutTail, "Log in")
	require.Equal(t, int64(1), hits.Load())
	require.NotNil(t, got.Critique, "the real model's critic scored the page")
	require.Equal(t, []string{"127.0.0.1"}, got.Hosts)
	t.Logf("critic %s scored %.2f: %s", got.Critique.Source, got.Critique.Score, strings.TrimSpace(got.Critique.Explanation))

	// The run read its result and answered, citing the step: the review
	// was shown the page's text, and its format asks for the citations.
	rev, ok := reviewed.Load().(api.ChatRequest)
	require.True(t, ok, "the results were reviewed")
	require.Contains(t, rev.Messages[len(rev.Messages)-1].Content, "Duck 2.4 reads web pages for a task")
	require.Contains(t, string(rev.Format), `"cites"`)
	require.NotNil(t, st.Answer)
	require.Equal(t, "Duck 2.4 reads web pages within time, size and redirect limits.", st.Answer.Text)
	require.Equal(t, []string{"step-1"}, st.Answer.Cites)
}
