package realmodel_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/coder"
	"ducklm/backend/critic"
	"ducklm/backend/ollama"
	"ducklm/backend/planner"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
	"ducklm/backend/tool"
	"ducklm/tests/realmodel"
)

// The real model reviews a run's results: the review's prompt and format
// (citations, references to earlier results) go to the real server, which
// holds the tiny model to them, and the run ends within its bounds with an
// answer or a sentence, never on a schema bound, never asking the same
// thing twice with the same options.
func TestTheRealModelReviewsTheResults(t *testing.T) {
	s := open(t)
	oc := ollama.New(srv.URL(), nil)
	mode := tool.RequireSandbox
	if !s.svc.Sandboxed() {
		mode = tool.AllowUnsandboxed
	}
	rt := runtime.New(runtime.Deps{
		Store: store.NewWorlds(s.svc.DB, s.svc.Ledger), Events: s.svc.Ledger, Blobs: s.svc.Blobs, Tools: s.svc.Tools,
		Planner: &firstPlanScripted{real: planner.LLM{Client: oc}, steps: []backend.TaskNode{
			shellStep("step-1", "echo a group of ducks on water is a raft"),
		}}, Offline: planner.Offline{},
		Critic: critic.WithFallback{Model: &critic.Model{Client: oc}}, Coder: coder.Model{Client: oc}, Models: s.svc,
		Sandboxed: s.svc.Sandboxed, WorkRoot: filepath.Join(t.TempDir(), "workspaces"),
		ScriptTool: func(language, source string) backend.Tool { return tool.NewScript(language, source, mode) },
	})
	t.Cleanup(rt.Close)
	run, err := rt.Submit(context.Background(), runtime.TaskRequest{Task: "what is a group of ducks on water called?",
		ApprovalMode: runtime.AutoSandboxed, Models: models(realmodel.Tiny), MaxReviews: 2})
	require.NoError(t, err)
	var st *runtime.RunState
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		st, _, err = rt.Load(context.Background(), run.ID)
		require.NoError(t, err)
		if st.Status.Terminal() {
			break
		}
		as, err := rt.Approvals(context.Background(), run.ID)
		require.NoError(t, err)
		for _, a := range as {
			_ = rt.Answer(context.Background(), run.ID, runtime.Answer{RequestID: a.RequestID, Approve: true, By: "test"})
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Contains(t, []backend.RunStatus{backend.RunCompleted, backend.RunFailed}, st.Status, "the run ended within 90 s: %s", st.StatusReason)
	require.GreaterOrEqual(t, len(st.Reviews), 1, "the results were reviewed")
	require.LessOrEqual(t, len(st.Reviews), 2, "within the review bound")
	var reviewed int
	seen := map[string]bool{}
	for _, a := range st.Planning {
		key := fmt.Sprintf("%d/%d/%v", a.Revision, a.Review, a.Options)
		require.False(t, seen[key], "a round asked twice with the same options %v", a.Options)
		seen[key] = true
		if a.Review > 0 {
			reviewed++
			require.Equal(t, realmodel.Tiny, strings.TrimSuffix(a.Model, ":latest"), "the real model reviewed")
			require.NotEmpty(t, a.Answer, "the real server answered the review's format")
		}
	}
	require.Positive(t, reviewed)
	switch st.Status {
	case backend.RunCompleted:
		require.NotNil(t, st.Answer)
		require.NotEmpty(t, st.Answer.Cites)
	case backend.RunFailed:
		sentence(t, st.StatusReason)
		require.NotContains(t, st.StatusReason, "maximum:")
		require.NotContains(t, st.StatusReason, "minimum:")
	}
	t.Logf("%d reviews, %d review answers; the run %s: %s", len(st.Reviews), reviewed, st.Status, st.StatusReason)
}
