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
