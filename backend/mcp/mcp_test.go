package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/mcp"
	"ducklm/backend/service"
	"ducklm/backend/settings"
)

// bundle is one test's data directory, its facade, an MCP server on them
// and a client connected to it in memory.
type bundle struct {
	svc      *service.Service
	api      *api.API
	server   *mcp.Server
	client   *sdk.ClientSession
	progress chan *sdk.ProgressNotificationParams
}

func setup(t *testing.T) *bundle {
	t.Helper()
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1") // nothing listens: no model
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	svc, err := service.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	_, err = svc.StartRuntime(ctx)
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := api.New(svc, nil, log)
	api.Configure(a, func() context.Context { return ctx }, nil)
	srv, err := mcp.New(mcp.Options{API: a, Service: svc, Transport: mcp.TransportStdio, Log: log})
	require.NoError(t, err)

	b := &bundle{svc: svc, api: a, server: srv, progress: make(chan *sdk.ProgressNotificationParams, 1000)}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	client := sdk.NewClient(&sdk.Implementation{Name: "ducklm-test", Version: "0.1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			select {
			case b.progress <- r.Params:
			default:
			}
		}})
	b.client, err = client.Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { b.client.Close() })
	return b
}

// call calls a tool that must succeed and decodes its structured answer.
func (b *bundle) call(t *testing.T, name string, args any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := b.client.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s answered an error: %s", name, text(res))
	if out != nil {
		raw, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, out), string(raw))
	}
	return res
}

// fail calls a tool that must answer a tool error, and returns its sentence.
func (b *bundle) fail(t *testing.T, name string, args any) string {
	t.Helper()
	res, err := b.client.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.True(t, res.IsError, "%s should fail, answered %s", name, text(res))
	return text(res)
}

func text(r *sdk.CallToolResult) string {
	var s []string
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			s = append(s, t.Text)
		}
	}
	return strings.Join(s, "\n")
}

// calls reads the mcp.call records of the server's stream.
func (b *bundle) calls(t *testing.T) []mcp.Call {
	t.Helper()
	events, err := b.svc.Ledger.Query(context.Background(), backend.EventQuery{Stream: b.server.Stream()})
	require.NoError(t, err)
	out := make([]mcp.Call, 0, len(events))
	for _, e := range events {
		require.Equal(t, mcp.EventCall, e.Type)
		require.Equal(t, backend.ExternalReal, e.Reality)
		var c mcp.Call
		require.NoError(t, json.Unmarshal(e.Payload, &c))
		out = append(out, c)
	}
	return out
}

func TestTheToolsListedAreDucklmsAndNoneApproves(t *testing.T) {
	b := setup(t)
	res, err := b.client.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		require.NotEmpty(t, tool.Description, tool.Name)
		require.NotNil(t, tool.OutputSchema, tool.Name)
		// The TypeScript SDK takes a property's schema only as an object
		// (not the schema true an untyped Go field infers).
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		raw, err := json.Marshal(tool.OutputSchema)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &schema))
		for name, p := range schema.Properties {
			require.True(t, strings.HasPrefix(string(p), "{"), "%s's output property %s has the schema %s", tool.Name, name, p)
		}
		for _, word := range []string{"approve", "deny", "answer_approval"} {
			require.NotContains(t, tool.Name, word, "no tool answers an approval")
		}
		if tool.Name == mcp.ToolSubmitTask || tool.Name == mcp.ToolRunStatus {
			require.Contains(t, tool.Description, "can never approve, deny or edit a step", tool.Name)
		}
	}
	require.ElementsMatch(t, []string{"submit_task", "run_status", "run_events", "run_answer", "list_runs", "create_world", "run_world",
		"fork_world", "diff_runs", "world_detail", "list_worlds", "deliberate", "export_bundle"}, names)
	tmpl, err := b.client.ListResourceTemplates(context.Background(), nil)
	require.NoError(t, err)
	var uris []string
	for _, r := range tmpl.ResourceTemplates {
		uris = append(uris, r.URITemplate)
	}
	require.ElementsMatch(t, []string{"ducklm://run/{id}", "ducklm://world/{id}"}, uris)
	require.Contains(t, b.client.InitializeResult().Instructions, "no tool approves or denies")
}

// A task an MCP client submits runs as the window's would, waits for the
// person's approval (which the client sees but cannot give), and answers
// once the person approved; every call is on the ledger with the client's
// name and the run it touched.
func TestASubmittedTaskWaitsForThePersonAndEveryCallIsRecorded(t *testing.T) {
	b := setup(t)
	ws := t.TempDir()
	plan := map[string]any{"nodes": []any{map[string]any{"id": "write", "kind": "tool", "tool": "file_write",
		"args": map[string]any{"path": "note.txt", "content": "from an MCP client\n"}}}}
	var sub mcp.Submitted
	b.call(t, "submit_task", map[string]any{"task": "write a note", "plan": plan, "workspace": ws}, &sub)
	require.NoError(t, backend.CheckID(sub.RunID, backend.KindRun))
	require.Equal(t, "ask_risky", sub.ApprovalMode, "the person's setting (unset: ask_risky)")
	require.Contains(t, sub.Note, "can never approve")

	var st mcp.RunStatus
	// The request is recorded before the run parks on it: wait for both.
	require.Eventually(t, func() bool {
		b.call(t, "run_status", map[string]any{"runId": sub.RunID}, &st)
		return len(st.Waiting) > 0 && st.Status == "awaiting_approval"
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, "file_write", st.Waiting[0].Tool)
	require.Contains(t, st.Note, "waits for the person")
	require.False(t, st.Done)
	_, err := os.Stat(filepath.Join(ws, "note.txt"))
	require.True(t, os.IsNotExist(err), "nothing written before the person approved")

	var ans mcp.RunAnswer
	res := b.call(t, "run_answer", map[string]any{"runId": sub.RunID}, &ans)
	require.Nil(t, ans.Answer)
	require.Contains(t, text(res), "has not answered yet")

	// The person approves at the window.
	require.NoError(t, b.api.Answer(api.AnswerInput{RunID: sub.RunID, RequestID: st.Waiting[0].RequestID, Approve: true}))
	require.Eventually(t, func() bool {
		b.call(t, "run_status", map[string]any{"runId": sub.RunID}, &st)
		return st.Done
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, "completed", st.Status, st.Error)
	require.Equal(t, 1, st.StepsDone)
	data, err := os.ReadFile(filepath.Join(ws, "note.txt"))
	require.NoError(t, err)
	require.Equal(t, "from an MCP client\n", string(data))

	var page mcp.EventsPage
	b.call(t, "run_events", map[string]any{"runId": sub.RunID, "limit": 2}, &page)
	require.Len(t, page.Events, 2)
	require.Equal(t, int64(0), page.Offset)
	require.Equal(t, int64(2), page.Next)
	require.Greater(t, page.Total, int64(3))
	first := page.Events[0].Type
	b.call(t, "run_events", map[string]any{"runId": sub.RunID, "offset": page.Total - 1}, &page)
	require.Len(t, page.Events, 1)
	require.Zero(t, page.Next, "the last page")
	require.NotEqual(t, first, "")

	var runs mcp.RunList
	b.call(t, "list_runs", map[string]any{}, &runs)
	require.Len(t, runs.Runs, 1)
	require.Equal(t, sub.RunID, runs.Runs[0].RunID)
	require.Equal(t, "write a note", runs.Runs[0].Task)

	// A resource reads as run_status does.
	rr, err := b.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "ducklm://run/" + sub.RunID})
	require.NoError(t, err)
	require.Contains(t, rr.Contents[0].Text, `"status": "completed"`)

	calls := b.calls(t)
	require.GreaterOrEqual(t, len(calls), 7)
	require.Equal(t, "submit_task", calls[0].Tool)
	require.Equal(t, "ducklm-test", calls[0].Client)
	require.Equal(t, "0.1", calls[0].ClientVersion)
	require.Equal(t, "stdio", calls[0].Transport)
	require.True(t, calls[0].OK)
	require.Contains(t, string(calls[0].Arguments), "write a note")
	require.Contains(t, calls[0].IDs, sub.RunID, "the run it made")
	last := calls[len(calls)-1]
	require.Equal(t, "resources/read", last.Method)
	require.Equal(t, "ducklm://run/"+sub.RunID, last.URI)
	events, err := b.svc.Ledger.Query(context.Background(), backend.EventQuery{Stream: b.server.Stream(), Limit: 1})
	require.NoError(t, err)
	require.Equal(t, sub.RunID, events[0].CorrelationID, "the record points to the run")
}

// A client may ask approvals stricter than the person's setting, never
// looser; a failed call is recorded with its sentence.
func TestAClientCannotLowerTheApprovalMode(t *testing.T) {
	b := setup(t)
	_, err := b.api.SaveSettings(settings.Settings{ApprovalMode: "ask_risky"})
	require.NoError(t, err)
	msg := b.fail(t, "submit_task", map[string]any{"task": "$ echo hi", "approvalMode": "auto_sandboxed"})
	require.Contains(t, msg, "asks less than the person's setting (ask_risky)")
	var sub mcp.Submitted
	b.call(t, "submit_task", map[string]any{"task": "$ echo hi", "approvalMode": "ask_every"}, &sub)
	require.Equal(t, "ask_every", sub.ApprovalMode)
	require.Contains(t, b.fail(t, "run_status", map[string]any{"runId": "wld_nope"}), "not a valid")

	calls := b.calls(t)
	require.Len(t, calls, 3)
	require.False(t, calls[0].OK)
	require.Contains(t, calls[0].Error, "asks less than")
	require.True(t, calls[1].OK)
	require.False(t, calls[2].OK)
}

// Worlds: create, run, fork, compare, read; a simulated run reads as a
// resource too.
func TestWorldsAreCreatedRunForkedAndCompared(t *testing.T) {
	b := setup(t)
	var w mcp.WorldRef
	b.call(t, "create_world", map[string]any{"example": "branching_grid", "seed": 7}, &w)
	require.NoError(t, backend.CheckID(w.WorldID, backend.KindWorld))
	var stepped mcp.Stepped
	b.call(t, "run_world", map[string]any{"runId": w.RunID, "steps": 3}, &stepped)
	require.Equal(t, int64(3), stepped.Time)
	require.NotNil(t, stepped.State)
	require.Contains(t, b.fail(t, "run_world", map[string]any{"runId": w.RunID, "steps": 1_000_000}), "at most 10000 steps")

	var f mcp.Forked
	b.call(t, "fork_world", map[string]any{"runId": w.RunID, "divergence": "seed_change", "seedPolicy": "fresh", "name": "other seed"}, &f)
	require.NotEqual(t, w.WorldID, f.WorldID)
	require.Equal(t, w.RunID, f.ParentRunID)
	b.call(t, "run_world", map[string]any{"runId": f.RunID, "steps": 2}, nil)
	b.call(t, "run_world", map[string]any{"runId": w.RunID, "steps": 2}, nil)

	var d mcp.Diff
	b.call(t, "diff_runs", map[string]any{"runA": w.RunID, "runB": f.RunID}, &d)
	diff := d.Diff.(map[string]any)
	require.Greater(t, diff["sharedEvents"], float64(0))

	var detail mcp.WorldDetail
	b.call(t, "world_detail", map[string]any{"id": f.WorldID}, &detail)
	require.Equal(t, f.RunID, detail.RunID)
	require.NotNil(t, detail.Detail.(map[string]any)["fork"])

	var list mcp.WorldList
	b.call(t, "list_worlds", map[string]any{}, &list)
	require.Len(t, list.Worlds, 2)

	rr, err := b.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "ducklm://world/" + w.WorldID})
	require.NoError(t, err)
	require.Contains(t, rr.Contents[0].Text, w.RunID)
	rr, err = b.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "ducklm://run/" + f.RunID})
	require.NoError(t, err)
	require.Contains(t, rr.Contents[0].Text, f.WorldID)
	_, err = b.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "ducklm://world/" + backend.NewID(backend.KindWorld)})
	require.ErrorContains(t, err, "not found")
	_, err = b.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "ducklm://run/" + backend.NewID(backend.KindRun)})
	require.ErrorContains(t, err, "not found")

	path := filepath.Join(t.TempDir(), "grid.ducklm")
	var ex mcp.Exported
	b.call(t, "export_bundle", map[string]any{"root": f.RunID, "scope": "ancestry", "path": path}, &ex)
	require.Equal(t, path, ex.File)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), ex.Bytes)
	require.Contains(t, b.fail(t, "export_bundle", map[string]any{"root": f.RunID, "path": "relative.ducklm"}), "not a full path")

	var ids []string
	for _, c := range b.calls(t) {
		ids = append(ids, c.IDs...)
	}
	require.Contains(t, ids, f.WorldID)
	require.Contains(t, ids, path)
}

// A deliberation reports progress to a client that asked for it, and
// stops when the client cancels the call.
func TestDeliberationReportsProgressAndStopsWhenTheClientCancels(t *testing.T) {
	b := setup(t)
	var w mcp.WorldRef
	b.call(t, "create_world", map[string]any{"example": "branching_grid"}, &w)

	// A short one runs to its end.
	var res mcp.Deliberated
	b.call(t, "deliberate", map[string]any{"runId": w.RunID, "strategy": "beam", "width": 2, "depth": 3, "budget": 30, "apply": true}, &res)
	require.Len(t, res.Chosen, 1)
	require.Empty(t, res.Cancelled)

	// A long one: progress, then the client's cancel stops it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &sdk.CallToolParams{Name: "deliberate", Arguments: map[string]any{"runId": w.RunID, "strategy": "mcts", "depth": 20, "budget": 100000, "seeds": 16}}
	params.SetProgressToken("delib-1")
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := b.client.CallTool(ctx, params)
		done <- err
	}()
	select {
	case p := <-b.progress:
		require.Equal(t, "delib-1", p.ProgressToken)
		require.Greater(t, p.Progress, float64(0))
		require.Contains(t, p.Message, "branches")
	case <-time.After(30 * time.Second):
		t.Fatal("no progress notification")
	}
	cancel()
	require.Error(t, <-done)
	// The server's handler returns once the search stopped: its record
	// is written then.
	var last mcp.Call
	require.Eventually(t, func() bool {
		calls := b.calls(t)
		last = calls[len(calls)-1]
		return len(calls) == 3
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, "deliberate", last.Tool)
	require.Less(t, time.Since(start), 60*time.Second)
}
