package realmodel_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
	"ducklm/tests/realmodel"
)

// srv is the real Ollama server every test of this package talks to; the
// tests run one after another (one of them kills it).
var srv *realmodel.Server

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ducklm-realmodel-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	srv, err = realmodel.Start(ctx, dir)
	cancel()
	if err != nil {
		// A real server is this suite's one prerequisite: without it the
		// suite fails, in CI and out of it, instead of passing unseen.
		fmt.Fprintln(os.Stderr, "the real-model suite needs a real Ollama server:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code != 0 {
		log := srv.Log()
		if len(log) > 6000 {
			log = log[len(log)-6000:]
		}
		fmt.Fprintf(os.Stderr, "--- the Ollama server's log (tail) ---\n%s\n", log)
	}
	srv.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// stack is a ducklm data directory opened as the window opens it, pointed
// at the real server.
type stack struct {
	svc *service.Service
	api *api.API
	ctx context.Context
}

func open(t *testing.T) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// What the runtime logs (a refused write, a driver stopped) shows with
	// a failing test.
	logs := &testLog{t: t}
	t.Cleanup(func() { logs.ended.Store(true) })
	svc, err := service.OpenWith(ctx, t.TempDir(), service.Options{OllamaHost: srv.URL().String(),
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	require.NoError(t, err)
	_, err = svc.StartRuntime(ctx)
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		require.NoError(t, svc.Close())
	})
	return &stack{svc: svc, api: api.New(svc, nil, slog.New(slog.DiscardHandler)), ctx: ctx}
}

// models is every role on one of the tiny models.
func models(planner string) map[string]string {
	return map[string]string{"planner": planner, "coder": realmodel.Tiny, "critic": realmodel.Tiny}
}

func (s *stack) submit(t *testing.T, task, planner string) string {
	t.Helper()
	run, err := s.api.SubmitTask(api.TaskInput{Task: task, ApprovalMode: string(runtime.AutoSandboxed), Models: models(planner)})
	require.NoError(t, err)
	return run.ID
}

// waitFor polls a run until its status is one of want, or fails the test
// with the run's last state after timeout.
func (s *stack) waitFor(t *testing.T, runID string, timeout time.Duration, want ...backend.RunStatus) *runtime.RunState {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last *runtime.RunState
	for time.Now().Before(deadline) {
		d, err := s.api.RunDetail(runID)
		require.NoError(t, err)
		last = d.State
		if slices.Contains(want, last.Status) {
			return last
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Failf(t, "the run did not reach the status in time", "want %v within %s; last status %s (%s), %d planning attempts",
		want, timeout, last.Status, last.StatusReason, len(last.Planning))
	return nil
}

// sentence checks a reason a person reads: words, ending a sentence.
func sentence(t *testing.T, s string) {
	t.Helper()
	require.NotEmpty(t, strings.TrimSpace(s))
	require.True(t, strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".”"), "a sentence ends with a full stop: %q", s)
}

// approveUntilEnd approves every step the run asks about until it
// completes or fails, all within timeout.
func (s *stack) approveUntilEnd(t *testing.T, runID string, timeout time.Duration) *runtime.RunState {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := s.waitFor(t, runID, time.Until(deadline), backend.RunCompleted, backend.RunFailed, backend.RunAwaitingApproval)
		if st.Status != backend.RunAwaitingApproval {
			return st
		}
		d, err := s.api.RunDetail(runID)
		require.NoError(t, err)
		for _, a := range d.Approvals {
			err := s.svc.Runtime.Answer(s.ctx, runID, runtime.Answer{RequestID: a.RequestID, Approve: true, By: "test"})
			require.True(t, err == nil || backend.ErrorCode(err) == backend.EINVALID, "approve: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testLog writes log lines to the test's log while the test runs.
type testLog struct {
	t     *testing.T
	ended atomic.Bool
}

func (l *testLog) Write(p []byte) (int, error) {
	if !l.ended.Load() {
		l.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
