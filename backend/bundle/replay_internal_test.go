package bundle

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/blob"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

// A bundle too big to hold is replayed a page at a time from the file,
// each stream read once: the result is the same as when it is held.
func TestReplayReadsLongStreamsFromTheFileAPageAtATime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	ledger := store.NewLedger(db)
	reg := store.NewWorlds(db, ledger)
	worlds := world.New(reg, ledger, blobs, starlark.DefaultLimits(), worldproc.Shared())
	_, run, err := worlds.Create(ctx, world.NewWorld{Name: "counter", Seed: 3, Program: []byte(
		"def init(seed):\n    return {\"n\": 0}\ndef step(s, a, r):\n    return {\"n\": s[\"n\"] + 1}, [{\"t\": s[\"n\"]}]\ndef observe(s, r):\n    return s\n")})
	require.NoError(t, err)
	_, err = worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 2500, CheckpointEvery: 1000})
	require.NoError(t, err)
	local := Local{Store: reg, Events: ledger, Blobs: blobs}
	path := filepath.Join(t.TempDir(), "long.ducklm")
	_, err = ExportFile(ctx, local, run.ID, path, FileOptions{})
	require.NoError(t, err)

	held, err := VerifyFile(ctx, Local{}, path, VerifyOptions{})
	require.NoError(t, err)
	require.True(t, held.Checks.Replay)
	require.Equal(t, 1, held.Replayed)

	saved := preloadBytes
	preloadBytes = 0
	t.Cleanup(func() { preloadBytes = saved })
	paged, err := VerifyFile(ctx, Local{}, path, VerifyOptions{})
	require.NoError(t, err)
	require.True(t, paged.Checks.Replay)
	require.Equal(t, 1, paged.Replayed)
	// world.Verify reads 4,096 events a page: this stream takes two.
	require.Greater(t, paged.Counts.Events, int64(4096))
}
