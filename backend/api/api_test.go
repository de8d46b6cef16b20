package api_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/service"
	"ducklm/backend/settings"
)

func setup(t *testing.T) *api.API {
	t.Helper()
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1") // nothing listens: no model
	svc, err := service.Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	return api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func TestStartFailureIsEveryCallsSentence(t *testing.T) {
	a := api.New(nil, backend.Errorf(backend.ECONFLICT, "the data directory was written by a newer ducklm"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	_, err := a.Overview()
	require.EqualError(t, err, "the data directory was written by a newer ducklm")
	_, err = a.Runs()
	require.Error(t, err)
	checks, err := a.Checks()
	require.NoError(t, err, "the checks still run: they say how to fix things")
	require.NotEmpty(t, checks)
}

func TestSettingsFillTheTaskForm(t *testing.T) {
	a := setup(t)
	view, err := a.GetSettings()
	require.NoError(t, err)
	require.Empty(t, view.Settings.ApprovalMode)

	saved, err := a.SaveSettings(settings.Settings{ApprovalMode: "ask_every", Models: map[string]string{"planner": "qwen2.5:7b"}, OllamaHost: "127.0.0.1:2"})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:2", saved.OllamaHost, "the new host is in use at once")
	_, err = a.SaveSettings(settings.Settings{Theme: "neon"})
	require.Error(t, err)

	run, err := a.SubmitTask(api.TaskInput{Plan: `{"nodes":[{"id":"a","kind":"tool","tool":"file_read","args":{"path":"x"}}]}`})
	require.NoError(t, err)
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := a.RunDetail(run.ID)
		require.NoError(t, err)
		if len(d.Approvals) > 0 || time.Now().After(deadline) {
			require.Equal(t, "ask_every", string(d.State.Request.ApprovalMode), "the default approval mode comes from the settings")
			require.Equal(t, "qwen2.5:7b", d.State.Request.Models["planner"])
			require.Len(t, d.Approvals, 1, "ask_every asks even for a read")
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBadInputIsASentence(t *testing.T) {
	a := setup(t)
	_, err := a.SubmitTask(api.TaskInput{Plan: `{"nodes":[{"id":"a","kind":"tool","tool":"teleport"}]}`})
	require.ErrorContains(t, err, "teleport")
	check, err := a.ValidatePlan(`{"nodes":[{"id":"a","kind":"tool","tool":"shell_exec","args":{}}, {"id":"a","kind":"tool","tool":"file_read","args":{"path":"x"}}]}`)
	require.NoError(t, err)
	require.False(t, check.Valid)
	require.GreaterOrEqual(t, len(check.Problems), 2)
	_, err = a.RunDetail("run_nope")
	require.Error(t, err)
	var target interface{ Unwrap() error }
	require.False(t, errors.As(err, &target), "the UI gets a plain sentence, not a wrapped Go error")
	_, err = a.Fork(api.ForkInput{CheckpointID: backend.NewID(backend.KindCheckpoint), Divergence: "state_patch", Delta: "{bad"})
	require.ErrorContains(t, err, "not valid JSON")
	info, err := a.Models()
	require.NoError(t, err)
	require.False(t, info.Reachable)
	require.Contains(t, info.Error, "not reachable")
}

func TestSubmitRefusesBadWorkspacesAndInputsBeforeARunExists(t *testing.T) {
	a, svc := setupSvc(t)
	plan := `{"nodes":[{"id":"a","kind":"tool","tool":"file_read","args":{"path":"x"}}]}`
	missing := filepath.Join(t.TempDir(), "new", "folder")
	for _, c := range []struct {
		in   api.TaskInput
		want string
	}{
		{api.TaskInput{Task: "$ touch x", Workspace: "/etc"}, "the system's /etc folder"},
		{api.TaskInput{Task: "$ touch x", Workspace: svc.Dir}, "ducklm's data directory"},
		{api.TaskInput{Task: "$ touch x", Workspace: missing}, "the workspace folder " + missing + " does not exist"},
		{api.TaskInput{Task: "$ touch x", TimeoutSeconds: -5}, "from 1 to 86400, not -5"},
		{api.TaskInput{Task: "$ touch x", MaxSteps: -1}, "the step limit must be positive, not -1"},
		{api.TaskInput{Plan: manyReads(60)}, "the plan has 60 steps, more than the run's limit of 50"},
		{api.TaskInput{Plan: `{"nodes":[{"id":"a","kind":"tool","tool":"file_read","args":{"path":"x"},"depends_on":["a"]}]}`}, "a"},
	} {
		_, err := a.SubmitTask(c.in)
		require.ErrorContains(t, err, c.want, "%+v", c.in)
	}
	runs, err := a.Runs()
	require.NoError(t, err)
	require.Empty(t, runs)
	require.NoDirExists(t, missing)

	run, err := a.SubmitTask(api.TaskInput{Plan: plan, Workspace: missing, CreateWorkspace: true})
	require.NoError(t, err)
	require.DirExists(t, missing)
	d, err := a.RunDetail(run.ID)
	require.NoError(t, err)
	require.Equal(t, missing, d.State.Request.Workspace)
}

// manyReads is a valid plan of n independent file reads.
func manyReads(n int) string {
	nodes := make([]string, n)
	for i := range nodes {
		nodes[i] = fmt.Sprintf(`{"id":"r%d","kind":"tool","tool":"file_read","args":{"path":"x"}}`, i)
	}
	return `{"nodes":[` + strings.Join(nodes, ",") + `]}`
}

func TestARunAtOneOfItsCheckpointsIsItsStateThen(t *testing.T) {
	a := setup(t)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "x"), []byte("hello"), 0o600))
	plan := `{"nodes":[{"id":"a","kind":"tool","tool":"file_read","args":{"path":"x"}},{"id":"b","kind":"tool","tool":"file_read","args":{"path":"x"},"depends_on":["a"]}]}`
	run, err := a.SubmitTask(api.TaskInput{Plan: plan, Workspace: ws, ApprovalMode: "auto_sandboxed"})
	require.NoError(t, err)
	deadline := time.Now().Add(20 * time.Second)
	var d api.RunDetail
	for {
		d, err = a.RunDetail(run.ID)
		require.NoError(t, err)
		if d.State.Status.Terminal() || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, backend.RunCompleted, d.State.Status, d.State.StatusReason)
	w, err := a.WorldDetail(run.ID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(w.Checkpoints), 3)
	// In the order they were taken: the first has the plan accepted and no step run.
	cps := slices.SortedFunc(slices.Values(w.Checkpoints), func(x, y backend.Checkpoint) int { return cmp.Compare(x.LedgerSeq, y.LedgerSeq) })
	then, err := a.RunAtCheckpoint(cps[0].ID)
	require.NoError(t, err)
	require.Equal(t, run.ID, then.RunID)
	require.Equal(t, d.State.Graph, then.Graph, "the plan it had then")
	require.Equal(t, "pending", then.Steps["a"].State, "no step had run at that checkpoint")
	last, err := a.RunAtCheckpoint(cps[len(cps)-1].ID)
	require.NoError(t, err)
	require.Equal(t, "done", last.Steps["b"].State)

	missing := backend.NewID(backend.KindCheckpoint)
	_, err = a.RunAtCheckpoint(missing)
	require.EqualError(t, err, "there is no checkpoint "+missing)
	_, err = a.RunAtCheckpoint("ckp_nope")
	require.ErrorContains(t, err, `"ckp_nope" is not a valid checkpoint id`)
}
