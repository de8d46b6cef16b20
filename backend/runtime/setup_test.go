package runtime_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/bwrap"
	"ducklm/backend/critic"
	"ducklm/backend/ollama"
	"ducklm/backend/planner"
	"ducklm/backend/runtime"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/tool"
	"ducklm/backend/web"
)

// fixture is a runtime on a real temp-file database, real blob store and
// real tools; only the model is a fake that speaks Ollama's protocol.
type fixture struct {
	ctx    context.Context
	dir    string
	db     *store.DB
	ledger *store.Ledger
	store  *store.Worlds
	blobs  *blob.Store
	tools  *tool.Registry
	gate   *gateTool
	hang   *hangTool
	// hangRead is a hang whose calls are safe to repeat (backend.Repeatable).
	hangRead *readHangTool
	deps     runtime.Deps
	rt       *runtime.Controller
	// rtMu orders restart's new controller with approveAll's goroutine.
	rtMu sync.Mutex
}

type option func(*runtime.Deps)

func withModel(c *ollama.Client) option {
	return func(d *runtime.Deps) {
		d.Planner = planner.LLM{Client: c}
		d.Models = modelLister{c}
		d.Critic = critic.WithFallback{Model: &critic.Model{Client: c}}
	}
}

func setup(t *testing.T, opts ...option) *fixture {
	t.Helper()
	dir := t.TempDir()
	var ended atomic.Bool // a controller abandoned by a test may still log after it
	db, err := store.Open(context.Background(), filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	ledger := store.NewLedger(db)
	f := &fixture{ctx: context.Background(), dir: dir, db: db, ledger: ledger, blobs: blobs,
		store: store.NewWorlds(db, ledger), gate: newGate(), hang: newHang(), hangRead: &readHangTool{newHang()}}
	f.tools = tool.NewRegistry(&tool.Shell{Sandbox: tool.AllowUnsandboxed}, &tool.FileRead{}, &tool.FileWrite{}, f.gate, f.hang, f.hangRead, noopTool{},
		&tool.WebFetch{Net: &web.Net{}, Blobs: blobs, Sandbox: tool.AllowUnsandboxed})
	_, sandboxed, _ := bwrap.Available()
	f.deps = runtime.Deps{
		Store: f.store, Events: ledger, Blobs: blobs, Tools: f.tools,
		Offline: planner.Offline{}, Critic: critic.WithFallback{},
		Sandboxed: func() bool { return sandboxed }, WorkRoot: filepath.Join(dir, "workspaces"),
		Log: func(msg string, args ...any) {
			if !ended.Load() {
				t.Log(append([]any{msg}, args...)...)
			}
		},
	}
	for _, o := range opts {
		o(&f.deps)
	}
	f.rt = runtime.New(f.deps)
	t.Cleanup(f.rt.Close)
	t.Cleanup(f.hang.release) // no controller stays stuck past the test
	t.Cleanup(f.hangRead.release)
	t.Cleanup(func() { ended.Store(true) })
	return f
}

// restart simulates a new process on the same data: a fresh controller.
func (f *fixture) restart(t *testing.T) {
	f.rt.Close()
	rt := runtime.New(f.deps)
	f.rtMu.Lock()
	f.rt = rt
	f.rtMu.Unlock()
	t.Cleanup(rt.Close)
}

type modelLister struct{ c *ollama.Client }

func (m modelLister) ModelNames(ctx context.Context) ([]string, error) {
	models, err := m.c.Models(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(models))
	for i, mo := range models {
		names[i] = mo.Name
	}
	return names, nil
}

func plan(nodes ...backend.TaskNode) *backend.TaskGraph { return &backend.TaskGraph{Nodes: nodes} }

func shell(id, command string, deps ...string) backend.TaskNode {
	args, _ := json.Marshal(map[string]string{"command": command})
	return backend.TaskNode{ID: id, Kind: backend.KindToolStep, Tool: "shell_exec", Args: args, DependsOn: deps}
}

func step(id, toolName, args string, deps ...string) backend.TaskNode {
	return backend.TaskNode{ID: id, Kind: backend.KindToolStep, Tool: toolName, Args: json.RawMessage(args), DependsOn: deps}
}

// waitStatus waits until the run reaches one of the statuses (for up to
// two minutes: a loaded CI machine without bubblewrap answers 20 approvals
// slowly).
func (f *fixture) waitStatus(t *testing.T, runID string, want ...backend.RunStatus) *runtime.RunState {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, _, err := f.rt.Load(f.ctx, runID)
		require.NoError(t, err)
		for _, w := range want {
			if st.Status == w {
				// Let the driver finish what follows the status (the
				// final checkpoint) before the test reads the ledger.
				require.NoError(t, f.rt.Wait(f.ctx, runID))
				st, _, err = f.rt.Load(f.ctx, runID)
				require.NoError(t, err)
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s (%s), not %v", runID, st.Status, st.StatusReason, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *fixture) events(t *testing.T, runID string) []backend.Event {
	events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: runID})
	require.NoError(t, err)
	return events
}

func types(events []backend.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

func count(events []backend.Event, typ string) int {
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// noopTool does nothing, successfully: the runtime's own overhead.
type noopTool struct{}

func (noopTool) Name() string                { return "noop" }
func (noopTool) Description() string         { return "does nothing" }
func (noopTool) ArgsSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (noopTool) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	return backend.ToolResult{Stdout: []byte("ok\n"), Duration: time.Microsecond}, nil
}

// gateTool blocks each call until the test opens the gate, and counts how
// many calls are inside at once.
type gateTool struct {
	mu      sync.Mutex
	inside  int
	maxSeen int
	open    chan struct{}
	entered chan string
}

func newGate() *gateTool { return &gateTool{open: make(chan struct{}), entered: make(chan string, 16)} }

func (g *gateTool) Name() string                { return "gate" }
func (g *gateTool) Description() string         { return "waits for the test" }
func (g *gateTool) ArgsSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (g *gateTool) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	g.mu.Lock()
	g.inside++
	g.maxSeen = max(g.maxSeen, g.inside)
	g.mu.Unlock()
	g.entered <- call.StepID
	defer func() {
		g.mu.Lock()
		g.inside--
		g.mu.Unlock()
	}()
	select {
	case <-g.open:
		return backend.ToolResult{Stdout: []byte(call.StepID + " passed\n")}, nil
	case <-ctx.Done():
		return backend.ToolResult{}, ctx.Err()
	}
}

// hangTool's first call blocks until the test ends and ignores
// cancellation, like a process killed with its parent: the start is
// recorded, the result never. Later calls pass.
type hangTool struct {
	entered chan string
	done    chan struct{}
	once    sync.Once
	calls   atomic.Int32
}

func newHang() *hangTool { return &hangTool{entered: make(chan string, 4), done: make(chan struct{})} }

func (h *hangTool) release()                    { h.once.Do(func() { close(h.done) }) }
func (h *hangTool) Name() string                { return "hang" }
func (h *hangTool) Description() string         { return "hangs until released" }
func (h *hangTool) ArgsSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (h *hangTool) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	select {
	case h.entered <- call.StepID:
	default:
	}
	if h.calls.Add(1) == 1 {
		<-h.done
		return backend.ToolResult{}, context.Canceled
	}
	return backend.ToolResult{Stdout: []byte("passed\n")}, nil
}

// readHangTool is a hang that only reads: safe to repeat.
type readHangTool struct{ *hangTool }

func (*readHangTool) Name() string                    { return "hang_read" }
func (*readHangTool) Repeatable(json.RawMessage) bool { return true }

// approveAll answers yes to every approval the run asks for until the test
// ends: the test tools are unknown to the risk policy, so they always ask.
func (f *fixture) approveAll(t *testing.T, runID string) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			f.rtMu.Lock()
			rt := f.rt
			f.rtMu.Unlock()
			as, err := rt.Approvals(f.ctx, runID)
			if err != nil {
				continue
			}
			for _, a := range as {
				_ = rt.Answer(f.ctx, runID, runtime.Answer{RequestID: a.RequestID, Approve: true, By: "test"})
			}
		}
	}()
}

// approveFirst waits for the run's first approval request and approves it.
func (f *fixture) approveFirst(t *testing.T, runID string) {
	t.Helper()
	f.waitStatus(t, runID, backend.RunAwaitingApproval)
	as, err := f.rt.Approvals(f.ctx, runID)
	require.NoError(t, err)
	require.NotEmpty(t, as)
	require.NoError(t, f.rt.Answer(f.ctx, runID, runtime.Answer{RequestID: as[0].RequestID, Approve: true}))
}

func defaultLimits() starlark.Limits { return starlark.DefaultLimits() }
