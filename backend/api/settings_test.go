package api_test

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	ducklmapi "ducklm/backend/api"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/settings"
)

func TestTestOllamaListsTheModelsOfAHostBeforeItIsSaved(t *testing.T) {
	a := setup(t)
	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"qwen2.5:7b", "nomic-embed-text"}})
	info, err := a.TestOllama(srv.URL().Host) // host:port, as a person types it
	require.NoError(t, err)
	require.True(t, info.Reachable, info.Error)
	require.Equal(t, srv.URL().String(), info.Host)
	require.Equal(t, []string{"qwen2.5:7b", "nomic-embed-text:latest"}, info.Models)

	view, err := a.GetSettings()
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:1", view.OllamaHost, "testing a host does not switch to it")
	require.Equal(t, "http://127.0.0.1:1", view.DefaultHost)

	info, err = a.TestOllama("")
	require.NoError(t, err)
	require.False(t, info.Reachable)
	require.Equal(t, "Ollama is not reachable at http://127.0.0.1:1 (connection refused); start it with `ollama serve`, or correct the Ollama host in Settings", info.Error)

	_, err = a.TestOllama("local host")
	require.EqualError(t, err, `"local host" is not an Ollama host: it has a space in it; type host:port, e.g. 127.0.0.1:11434`)
}

func TestTestOllamaSaysWhenNothingAnswers(t *testing.T) {
	a := setup(t)
	// A listener that accepts and never answers: a wrong address behind a
	// firewall looks the same from here.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	start := time.Now()
	info, err := a.TestOllama(l.Addr().String())
	require.NoError(t, err)
	require.Less(t, time.Since(start), 6*time.Second)
	require.False(t, info.Reachable)
	require.Equal(t, "Ollama at http://"+l.Addr().String()+" did not answer within 3s; check the host, and that Ollama runs there (ollama serve)", info.Error)
}

func TestSavedHostServesTheNextModelCall(t *testing.T) {
	a := setup(t)
	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"llama3.2:3b"}})
	saved, err := a.SaveSettings(settings.Settings{OllamaHost: srv.URL().Host, Theme: "dark",
		Models: map[string]string{"planner": " llama3.2:3b ", "coder": ""}})
	require.NoError(t, err)
	require.Equal(t, srv.URL().String(), saved.OllamaHost)
	require.Equal(t, settings.Settings{OllamaHost: srv.URL().Host, Theme: "dark", Models: map[string]string{"planner": "llama3.2:3b"}}, saved.Settings)

	info, err := a.Models()
	require.NoError(t, err)
	require.True(t, info.Reachable, info.Error)
	require.Equal(t, []string{"llama3.2:3b"}, info.Models)
	require.NotEmpty(t, srv.Requests(), "the call went to the saved host")

	view, err := a.GetSettings()
	require.NoError(t, err)
	require.Equal(t, srv.URL().String(), view.OllamaHost)
	require.Equal(t, "dark", view.Settings.Theme)
}

func TestCheckSettingsNamesEachProblem(t *testing.T) {
	a := setup(t)
	check, err := a.CheckSettings(settings.Settings{OllamaHost: "127.0.0.1:99999", Theme: "neon"})
	require.NoError(t, err)
	require.False(t, check.Valid)
	require.Equal(t, []settings.Problem{
		{Field: "ollamaHost", Message: `"127.0.0.1:99999" is not an Ollama host: the port 99999 is not between 1 and 65535; type host:port, e.g. 127.0.0.1:11434`},
		{Field: "theme", Message: `theme "neon" is not light, dark or system`},
	}, check.Problems)

	check, err = a.CheckSettings(settings.Settings{OllamaHost: "127.0.0.1:11500"})
	require.NoError(t, err)
	require.True(t, check.Valid)
	require.NotNil(t, check.Problems, "an empty list, not null, for the UI")

	_, err = a.SaveSettings(settings.Settings{OllamaHost: "127.0.0.1:99999"})
	require.EqualError(t, err, `"127.0.0.1:99999" is not an Ollama host: the port 99999 is not between 1 and 65535; type host:port, e.g. 127.0.0.1:11434`,
		"Save refuses with the sentence the check gave")
}

// A run's planner reaches the host saved while ducklm runs.
func TestRunAfterSaveSettingsReachesTheNewHost(t *testing.T) {
	a := setup(t)
	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"qwen2.5:7b"}})
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: `{"decision":"respond","reason":"nothing to run","confidence":0.9,"response":"answered by the saved host"}`}
	})
	_, err := a.SaveSettings(settings.Settings{OllamaHost: srv.URL().String()})
	require.NoError(t, err)
	run, err := a.SubmitTask(ducklmapi.TaskInput{Task: "say something"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, err := a.RunDetail(run.ID)
		return err == nil && d.State != nil && d.State.Response == "answered by the saved host"
	}, 20*time.Second, 20*time.Millisecond)
	require.NotEmpty(t, srv.Chats())
}

func TestSettingsCallsAfterAFailedStartAreItsSentence(t *testing.T) {
	a := ducklmapi.New(nil, backend.Errorf(backend.ECONFLICT, "the data directory is in use"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	_, err := a.GetSettings()
	require.EqualError(t, err, "the data directory is in use")
	_, err = a.CheckSettings(settings.Settings{})
	require.EqualError(t, err, "the data directory is in use")
	_, err = a.TestOllama("")
	require.EqualError(t, err, "the data directory is in use")
}
