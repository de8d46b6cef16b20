package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/service"
	"ducklm/backend/settings"
)

// TestAPlanCallingRealServersCompletes: a run through the runtime whose
// plan calls server-everything's echo (marked safe, so ask_risky runs it
// unasked) and then server-filesystem's write_file in the run's workspace
// (not marked safe: the run asks, and the card names server, tool, exact
// arguments and the server's readOnlyHint); approved, the run completes
// and the file is in the workspace, written from inside the sandbox.
func TestAPlanCallingRealServersCompletes(t *testing.T) {
	everything, filesystem := realServers(t)
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1") // no model: the plan is the user's
	dir, ws := t.TempDir(), t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "everything", Command: everything, Safe: []string{"echo"}}))
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fs", Command: filesystem, Args: []string{"/"}, Workspace: true}))
	svc, err := service.Open(context.Background(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	a := api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))

	note := filepath.Join(ws, "note.txt")
	writeArgs := `{"path":"` + note + `","content":"written by an MCP server"}`
	plan := `{"nodes":[{"id":"hello","kind":"tool","tool":"mcp__everything__echo","args":{"message":"hello from ducklm"}},` +
		`{"id":"write","kind":"tool","tool":"mcp__fs__write_file","args":` + writeArgs + `,"depends_on":["hello"]}]}`
	run, err := a.SubmitTask(api.TaskInput{Task: "greet and write a note", Plan: plan, ApprovalMode: "ask_risky", Workspace: ws})
	require.NoError(t, err)

	var d api.RunDetail
	require.Eventually(t, func() bool {
		d, err = a.RunDetail(run.ID)
		require.NoError(t, err)
		return len(d.Approvals) > 0 || d.Run.Status.Terminal()
	}, time.Minute, 50*time.Millisecond)
	require.Len(t, d.Approvals, 1, "status %s", d.Run.Status)
	ap := d.Approvals[0]
	require.Equal(t, "write", ap.Step, "echo was marked safe, so only write_file asks")
	require.Equal(t, "mcp__fs__write_file", ap.Tool)
	require.Equal(t, "mcp_call", ap.Rule)
	require.JSONEq(t, writeArgs, string(ap.Args))
	require.NotNil(t, ap.MCP)
	require.Equal(t, backend.MCPTool{Server: "fs", Tool: "write_file"}, *ap.MCP)
	require.Equal(t, backend.ConfinedSandbox, ap.Confinement)
	require.NoFileExists(t, note, "nothing is written before the approval")

	require.NoError(t, a.Answer(api.AnswerInput{RunID: run.ID, RequestID: ap.RequestID, Approve: true}))
	require.Eventually(t, func() bool {
		d, err = a.RunDetail(run.ID)
		require.NoError(t, err)
		return d.Run.Status.Terminal()
	}, time.Minute, 50*time.Millisecond)
	require.Equal(t, backend.RunCompleted, d.Run.Status, "error: %s", d.State.Error)
	require.Contains(t, d.State.Steps["hello"].Result.StdoutTail, "hello from ducklm")
	got, err := os.ReadFile(note)
	require.NoError(t, err)
	require.Equal(t, "written by an MCP server", string(got))

	// The approval request on the ledger keeps the server's hint.
	var out struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	}
	require.NoError(t, json.Unmarshal(d.State.Steps["write"].Result.Output, &out))
	require.Equal(t, "fs", out.Server)
}

// TestAnMCPStepsImageIsShownFromItsBlob: server-everything's tiny image,
// from a run, is served to the run view by StepImage with its MIME type;
// an image the step does not have is a sentence.
func TestAnMCPStepsImageIsShownFromItsBlob(t *testing.T) {
	everything, _ := realServers(t)
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	dir, ws := t.TempDir(), t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "everything", Command: everything, Safe: []string{"get-tiny-image"}}))
	svc, err := service.Open(context.Background(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	a := api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	run, err := a.SubmitTask(api.TaskInput{Task: "show an image", Workspace: ws, ApprovalMode: "ask_risky",
		Plan: `{"nodes":[{"id":"img","kind":"tool","tool":"mcp__everything__get-tiny-image","args":{}}]}`})
	require.NoError(t, err)
	var d api.RunDetail
	require.Eventually(t, func() bool {
		d, err = a.RunDetail(run.ID)
		require.NoError(t, err)
		return d.Run.Status.Terminal()
	}, time.Minute, 50*time.Millisecond)
	require.Equal(t, backend.RunCompleted, d.Run.Status, "error: %s", d.State.Error)
	img, err := a.StepImage(run.ID, "img", 0)
	require.NoError(t, err)
	require.Equal(t, "image/png", img.MediaType)
	require.Equal(t, "\x89PNG", string(img.Data[:4]))
	_, err = a.StepImage(run.ID, "img", 1)
	require.EqualError(t, err, `step "img" of run `+run.ID+` has no image 1`)
}
