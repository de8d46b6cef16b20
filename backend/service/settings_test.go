package service_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
	"ducklm/backend/settings"
	"ducklm/backend/world"
)

const deadHost = "127.0.0.1:1" // nothing listens

// respond answers every planner chat with a direct response, so a text task
// completes as soon as a planner model answers.
func respond(req api.ChatRequest) ollamatest.Reply {
	return ollamatest.Reply{Content: `{"decision":"respond","reason":"a greeting needs no step","confidence":0.9,"response":"hello from the new host"}`}
}

func openService(t *testing.T, env string) *service.Service {
	t.Helper()
	t.Setenv("OLLAMA_HOST", env)
	svc, err := service.Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	return svc
}

func waitRun(t *testing.T, svc *service.Service, runID string, done func(*runtime.RunState) bool) *runtime.RunState {
	t.Helper()
	var st *runtime.RunState
	require.Eventually(t, func() bool {
		s, _, err := svc.Runtime.Load(context.Background(), runID)
		if err != nil {
			return false
		}
		st = s
		return done(s)
	}, 20*time.Second, 20*time.Millisecond)
	return st
}

// A run paused because no model answered resumes on the host the user
// saves, at once (not at the paused-run watcher's next poll), and its
// planner's chat reaches that host.
func TestSavedHostAppliesLive(t *testing.T) {
	ctx := t.Context()
	svc := openService(t, deadHost)
	_, err := svc.StartRuntime(ctx)
	require.NoError(t, err)

	run, err := svc.Runtime.Submit(ctx, runtime.TaskRequest{Task: "say hello"})
	require.NoError(t, err)
	waitRun(t, svc, run.ID, func(s *runtime.RunState) bool { return s.Status == backend.RunPaused })

	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"qwen2.5:7b"}})
	srv.OnChat(respond)
	host := srv.URL().String()
	applied, err := svc.SaveSettings(settings.Settings{OllamaHost: " " + host + " "})
	require.NoError(t, err)
	require.Equal(t, host, applied)
	require.Equal(t, host, svc.Ollama.Host())

	start := time.Now()
	st := waitRun(t, svc, run.ID, func(s *runtime.RunState) bool { return s.Status == backend.RunCompleted })
	require.Less(t, time.Since(start), 10*time.Second, "the paused run resumed without waiting for the next poll")
	require.Equal(t, "hello from the new host", st.Response)
	require.NotEmpty(t, srv.Chats(), "the planner's chat went to the saved host")

	names, err := svc.ModelNames(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"qwen2.5:7b"}, names, "the model list is the new host's, not a cached answer of the old one")

	stored, err := settings.Load(svc.Dir)
	require.NoError(t, err)
	require.Equal(t, host, stored.OllamaHost, "the host is stored trimmed")
}

// Clearing the host goes back to OLLAMA_HOST, live too.
func TestClearedHostFallsBackToTheEnvironment(t *testing.T) {
	env := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"env-model:1b"}})
	svc := openService(t, env.URL().String())
	_, err := svc.SaveSettings(settings.Settings{OllamaHost: deadHost})
	require.NoError(t, err)
	_, err = svc.ModelNames(t.Context())
	require.ErrorContains(t, err, "not reachable at http://127.0.0.1:1")

	applied, err := svc.SaveSettings(settings.Settings{})
	require.NoError(t, err)
	require.Equal(t, env.URL().String(), applied)
	names, err := svc.ModelNames(t.Context())
	require.NoError(t, err)
	require.Equal(t, []string{"env-model:1b"}, names)
}

func TestRefusedSettingsChangeNothing(t *testing.T) {
	svc := openService(t, deadHost)
	before := svc.Ollama.Host()
	_, err := svc.SaveSettings(settings.Settings{OllamaHost: "ftp://box"})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.True(t, strings.HasPrefix(backend.ErrorMessage(err), `"ftp://box" is not an Ollama host`), backend.ErrorMessage(err))
	require.Equal(t, before, svc.Ollama.Host())
	s, err := svc.Settings()
	require.NoError(t, err)
	require.Empty(t, s.OllamaHost)
}

// Saving hosts while runs list models, the memory embeds and the UI reads
// the host: for the race detector.
func TestSaveSettingsUnderConcurrentUse(t *testing.T) {
	a := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"alpha:1b", "nomic-embed-text"}})
	b := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"beta:1b", "nomic-embed-text"}})
	svc := openService(t, a.URL().String())
	ctx := t.Context()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 10 {
				host := a.URL().String()
				if (i+j)%2 == 1 {
					host = b.URL().String()
				}
				_, err := svc.SaveSettings(settings.Settings{OllamaHost: host})
				require.NoError(t, err)
			}
		})
		wg.Go(func() {
			for range 10 {
				_, _ = svc.ModelNames(ctx)
				_, _ = svc.Ollama.Embed(ctx, "nomic-embed-text", []string{"x"})
				_ = svc.Ollama.Host()
			}
		})
	}
	wg.Wait()
	s, err := svc.Settings()
	require.NoError(t, err)
	require.Equal(t, s.OllamaHost, svc.Ollama.Host(), "the host in use is the one stored last")
}

// TestWorldMemoryLimitIsASettingAppliedAtOnce: world programs run under the
// setting's memory limit (512 MiB unless set), and saving a new one holds
// from the next call, without a restart.
func TestWorldMemoryLimitIsASettingAppliedAtOnce(t *testing.T) {
	svc := openService(t, deadHost)
	ctx := t.Context()
	require.Equal(t, int64(512<<20), svc.Worlds.Limits().MaxMemoryBytes)
	require.Equal(t, int64(512<<20), svc.Bundles().WorldLimits.MaxMemoryBytes, "a bundle's replay runs under the same limits")
	require.NotNil(t, svc.Bundles().Programs, "and in the same worker processes")
	// 100 MiB of string: fine under 512 MiB, too much under 64.
	program := []byte("def init(seed):\n    return {}\ndef step(s, a, r):\n    x = \"x\" * (100 * 1024 * 1024)\n    return {\"len\": len(x)}\ndef observe(s, r):\n    return s\n")
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "big", Program: program, Seed: 1})
	require.NoError(t, err)
	_, err = svc.Worlds.Step(ctx, run.ID, nil)
	require.NoError(t, err)

	_, err = svc.SaveSettings(settings.Settings{WorldMemoryMiB: 64})
	require.NoError(t, err)
	require.Equal(t, int64(64<<20), svc.Worlds.Limits().MaxMemoryBytes)
	_, err = svc.Worlds.Step(ctx, run.ID, nil)
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err), "error: %v", err)
	require.Contains(t, backend.ErrorMessage(err), "memory limit of 64 MiB")
}
