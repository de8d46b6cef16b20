package realmodel_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/coder"
	"ducklm/backend/critic"
	"ducklm/backend/ollama"
	"ducklm/backend/planner"
	"ducklm/backend/router"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
	"ducklm/backend/tool"
	"ducklm/tests/realmodel"
)

// firstPlanScripted answers the first planning request with a fixed plan,
// as a model that planned well would, and sends every later request (a
// revision, a review) to the real model. The tiny model's own plans are one
// failing step, so this is how a revision with a finished step to keep, or
// a review of results, meets the real server.
type firstPlanScripted struct {
	real  planner.LLM
	steps []backend.TaskNode
	calls atomic.Int32
}

func (p *firstPlanScripted) Plan(ctx context.Context, req planner.Request) (backend.Decision, error) {
	if p.calls.Add(1) > 1 {
		return p.real.Plan(ctx, req)
	}
	g := backend.TaskGraph{Nodes: p.steps}
	return backend.NewDecision(backend.DecisionPlan, planner.PlanPayload{Graph: g, Source: planner.SourceModel, Model: req.Model,
		Call: &planner.Call{Model: req.Model, Attempt: req.Attempt, Answer: "(scripted)"}}, 0.9, "the scripted first plan"), nil
}

// shellStep is a shell_exec step of a scripted plan.
func shellStep(id, command string, deps ...string) backend.TaskNode {
	args, _ := json.Marshal(map[string]string{"command": command})
	return backend.TaskNode{ID: id, Kind: backend.KindToolStep, Tool: "shell_exec", Args: args, DependsOn: append([]string{}, deps...)}
}

func TestRevisionByTheRealModelKeepsTheFinishedSteps(t *testing.T) {
	s := open(t)
	oc := ollama.New(srv.URL(), nil)
	mode := tool.RequireSandbox
	if !s.svc.Sandboxed() {
		mode = tool.AllowUnsandboxed
	}
	p := &firstPlanScripted{real: planner.LLM{Client: oc}, steps: []backend.TaskNode{
		shellStep("step-1", "echo kept > kept.txt; echo kept"),
		shellStep("step-2", "echo broken >&2; exit 3", "step-1"),
	}}
	rt := runtime.New(runtime.Deps{
		Store: store.NewWorlds(s.svc.DB, s.svc.Ledger), Events: s.svc.Ledger, Blobs: s.svc.Blobs, Tools: s.svc.Tools,
		Planner: p, Offline: planner.Offline{}, Critic: critic.WithFallback{Model: &critic.Model{Client: oc}},
		Coder: coder.Model{Client: oc}, Models: s.svc, Sandboxed: s.svc.Sandboxed,
		WorkRoot:   filepath.Join(t.TempDir(), "workspaces"),
		ScriptTool: func(language, source string) backend.Tool { return tool.NewScript(language, source, mode) },
	})
	t.Cleanup(rt.Close)

	run, err := rt.Submit(context.Background(), runtime.TaskRequest{Task: "keep a note, then do the broken thing",
		ApprovalMode: runtime.AutoSandboxed, Models: models(realmodel.Tiny)})
	require.NoError(t, err)
	var st *runtime.RunState
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		st, _, err = rt.Load(context.Background(), run.ID)
		require.NoError(t, err)
		if st.Status == backend.RunCompleted || st.Status == backend.RunFailed {
			break
		}
		as, err := rt.Approvals(context.Background(), run.ID)
		require.NoError(t, err)
		for _, a := range as {
			_ = rt.Answer(context.Background(), run.ID, runtime.Answer{RequestID: a.RequestID, Approve: true, By: "test"})
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Contains(t, []backend.RunStatus{backend.RunCompleted, backend.RunFailed}, st.Status, "the run ended within 60 s: %s", st.StatusReason)

	// The router chose the revision by rule, the real model revised the
	// plan, and the revised graph kept the finished step as it ran.
	require.Len(t, st.Revised, 1)
	require.Equal(t, router.RuleRevise, st.Revised[0].Rule)
	require.Equal(t, []string{"step-1"}, st.Revised[0].Kept)
	require.Equal(t, []string{"step-2"}, st.Revised[0].Failed)
	require.GreaterOrEqual(t, len(st.Planning), 2)
	revision := st.Planning[1]
	require.Equal(t, 1, revision.Revision)
	require.Equal(t, realmodel.Tiny, strings.TrimSuffix(revision.Model, ":latest"))
	require.True(t, revision.Accepted, "the grammar held the real model's revision to the catalog: %s (%s)", revision.Answer, revision.Error)
	require.Equal(t, "step-1", st.Order()[0], "the finished step leads the revised graph")
	kept := st.Steps["step-1"]
	require.Equal(t, runtime.StepDone, kept.State)
	require.Equal(t, "kept\n", kept.Result.StdoutTail)
	require.Equal(t, 1, kept.Attempts, "and did not run again")
	require.NotContains(t, st.Order(), "step-2", "the failed step left the plan")
	if st.Status == backend.RunFailed {
		sentence(t, st.StatusReason)
	}
	t.Logf("revised plan %v; the run %s: %s", st.Order(), st.Status, st.StatusReason)
}
