package settings_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/settings"
)

func TestLoadSaveRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := settings.Load(dir)
	require.NoError(t, err)
	require.Empty(t, s.OllamaHost)

	want := settings.Settings{OllamaHost: "127.0.0.1:11500", Models: map[string]string{"planner": "qwen2.5:7b"}, ApprovalMode: "ask_every", Theme: "dark"}
	require.NoError(t, settings.Save(dir, want))
	got, err := settings.Load(dir)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestBadSettingsAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, s := range []settings.Settings{
		{Models: map[string]string{"painter": "x"}},
		{ApprovalMode: "yolo"},
		{Theme: "neon"},
		{OllamaHost: "local host"},
	} {
		require.Equal(t, backend.EINVALID, backend.ErrorCode(settings.Save(dir, s)))
	}
	_, err := os.Stat(filepath.Join(dir, "settings.json"))
	require.True(t, os.IsNotExist(err), "nothing is written for refused settings")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte("{nope"), 0o600))
	_, err = settings.Load(dir)
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
}

func TestCheckNamesTheFieldOfEachProblem(t *testing.T) {
	t.Parallel()
	s := settings.Settings{
		OllamaHost:   "ftp://box",
		Models:       map[string]string{"painter": "x", "planner": "qwen 2.5", "critic": "llama3.2:3b"},
		ApprovalMode: "yolo",
		Theme:        "neon",
	}
	got := s.Check()
	require.Equal(t, []settings.Problem{
		{Field: "ollamaHost", Message: `"ftp://box" is not an Ollama host: Ollama speaks http or https, not ftp; type host:port, e.g. 127.0.0.1:11434`},
		{Field: "models.painter", Message: `"painter" is not a model role (planner, coder, critic, embedder)`},
		{Field: "models.planner", Message: `the planner model "qwen 2.5" has a space in it; model names look like qwen2.5:7b`},
		{Field: "approvalMode", Message: `approval mode "yolo" is not ask_every, ask_risky or auto_sandboxed`},
		{Field: "theme", Message: `theme "neon" is not light, dark or system`},
	}, got)
	require.EqualError(t, s.Validate(), got[0].Message, "Validate refuses with the first problem")

	require.Empty(t, settings.Settings{OllamaHost: " 127.0.0.1:11500 ", Models: map[string]string{"planner": ""}}.Check(),
		"an empty model means the router's choice, and spaces around a host are ignored")
}

// TestWorldMemoryLimit: the memory limit of world programs is 512 MiB
// unless set, kept when set within 64 MiB to 64 GiB, refused outside with a
// sentence naming the range.
func TestWorldMemoryLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.Equal(t, int64(512<<20), settings.Settings{}.WorldMemoryBytes())
	require.NoError(t, settings.Save(dir, settings.Settings{WorldMemoryMiB: 2048}))
	got, err := settings.Load(dir)
	require.NoError(t, err)
	require.Equal(t, int64(2048), got.WorldMemoryMiB)
	require.Equal(t, int64(2<<30), got.WorldMemoryBytes())
	for _, bad := range []int64{-1, 63, 65537} {
		p := settings.Settings{WorldMemoryMiB: bad}.Check()
		require.Len(t, p, 1)
		require.Equal(t, "worldMemoryMiB", p[0].Field)
		require.Contains(t, p[0].Message, "choose from 64 to 65536 MiB")
		require.Equal(t, backend.EINVALID, backend.ErrorCode(settings.Save(dir, settings.Settings{WorldMemoryMiB: bad})))
	}
	got, err = settings.Load(dir)
	require.NoError(t, err)
	require.Equal(t, int64(2048), got.WorldMemoryMiB, "a refused limit changed nothing")
}

func TestAllowedHostsAreCheckedAndStoredNormalised(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := settings.Settings{AllowedHosts: []string{"docs.example.org", "https://example.com/x"}}
	p := bad.Check()
	require.Len(t, p, 1)
	require.Equal(t, "allowedHosts", p[0].Field)
	require.Contains(t, p[0].Message, "write only the host")
	require.Error(t, settings.Save(dir, bad))

	require.NoError(t, settings.Save(dir, settings.Settings{AllowedHosts: []string{" Docs.Example.org. ", "*.duck.test", "docs.example.org"}}))
	got, err := settings.Load(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"docs.example.org", "*.duck.test"}, got.AllowedHosts)
}

// Where portable task steps run is workers (the default, also "") or here;
// anything else is refused with a sentence and changes nothing.
func TestTaskStepsAreWorkersOrHere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, settings.Save(dir, settings.Settings{TaskSteps: settings.TaskStepsHere}))
	got, err := settings.Load(dir)
	require.NoError(t, err)
	require.Equal(t, "here", got.TaskSteps)
	p := settings.Settings{TaskSteps: "elsewhere"}.Check()
	require.Equal(t, []settings.Problem{{Field: "taskSteps",
		Message: `task steps run "elsewhere": choose workers (the team's, when one is alive) or here`}}, p)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(settings.Save(dir, settings.Settings{TaskSteps: "elsewhere"})))
	got, err = settings.Load(dir)
	require.NoError(t, err)
	require.Equal(t, "here", got.TaskSteps, "a refused choice changed nothing")
	require.Empty(t, settings.Settings{TaskSteps: settings.TaskStepsOnWorkers}.Check())
}

// The run loop's settings: review rounds from 1 to 20 and a critic
// threshold in (0, 1], 0 for ducklm's defaults; anything else is refused
// with a sentence and changes nothing stored.
func TestRunLoopSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, settings.Save(dir, settings.Settings{MaxReviews: 2, CriticThreshold: 0.7}))
	got, err := settings.Load(dir)
	require.NoError(t, err)
	require.Equal(t, 2, got.MaxReviews)
	require.Equal(t, 0.7, got.CriticThreshold)
	for _, bad := range []settings.Settings{{MaxReviews: -1}, {MaxReviews: 21}, {CriticThreshold: -0.1}, {CriticThreshold: 1.5}} {
		p := bad.Check()
		require.Len(t, p, 1)
		require.Contains(t, []string{"maxReviews", "criticThreshold"}, p[0].Field)
		require.Contains(t, p[0].Message, "leave it empty for")
		require.Equal(t, backend.EINVALID, backend.ErrorCode(settings.Save(dir, bad)))
	}
	got, err = settings.Load(dir)
	require.NoError(t, err)
	require.Equal(t, 2, got.MaxReviews, "a refused setting changed nothing")
}
