package tool_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/prereq"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/tool"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

func newWorlds(t *testing.T) (*world.Service, *store.Ledger) {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	ledger := store.NewLedger(db)
	return world.New(store.NewWorlds(db, ledger), ledger, blobs, starlark.DefaultLimits(), worldproc.Shared()), ledger
}

func TestWorldSimReportsAHypothesis(t *testing.T) {
	t.Parallel()
	f := setup(t)
	worlds, ledger := newWorlds(t)
	ws := &tool.WorldSim{Worlds: worlds}
	res, err := ws.Run(context.Background(), f.call(t, "world_sim", map[string]any{"example": "branching_grid", "seed": 7, "steps": 60}))
	require.NoError(t, err)
	require.Zero(t, res.ExitCode)
	var out struct {
		Hypothesis bool            `json:"hypothesis"`
		World      string          `json:"world"`
		Run        string          `json:"run"`
		Done       bool            `json:"done"`
		State      json.RawMessage `json:"state"`
	}
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.True(t, out.Hypothesis)
	require.NoError(t, backend.CheckID(out.World, backend.KindWorld))
	require.True(t, out.Done, "the grid reaches its goal within 60 steps")

	// The simulation's own events are world-local, in the world's stream.
	events, err := ledger.Query(context.Background(), backend.EventQuery{Stream: out.Run})
	require.NoError(t, err)
	require.NotEmpty(t, events)
	for _, e := range events {
		require.Equal(t, backend.WorldLocal, e.Reality)
	}

	// A broken program is a failed step with the program's sentence, not a crash.
	res, err = ws.Run(context.Background(), f.call(t, "world_sim", map[string]any{"program": "def init(:", "steps": 1}))
	require.Error(t, err)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, err = ws.Run(context.Background(), f.call(t, "world_sim", map[string]any{"example": "nope"}))
	require.Error(t, err)
}

func TestWorldSimRefusesAStepWhoseStateIsNotAnObject(t *testing.T) {
	t.Parallel()
	f := setup(t)
	worlds, _ := newWorlds(t)
	ws := &tool.WorldSim{Worlds: worlds}
	program := "def init(seed):\n    return {}\ndef step(s, a, r):\n    return 42\ndef observe(s, r):\n    return s\n"
	res, err := ws.Run(context.Background(), f.call(t, "world_sim", map[string]any{"program": program, "steps": 3}))
	require.NoError(t, err, "the simulation ran; its step failed")
	require.Equal(t, 1, res.ExitCode, "a bare number is not taken as the new state")
	require.Contains(t, string(res.Stderr), "step returned a number as the state; a state is a dict")
	var out struct {
		Steps int64 `json:"steps"`
	}
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.Zero(t, out.Steps, "no step was taken")
}

func TestScriptRunsInTheSandbox(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := tool.NewScript("sh", "echo from-script > made.txt; cat made.txt; cat "+filepath.Join(f.sibling, "secret")+" || true", tool.RequireSandbox)
	res, err := s.Run(context.Background(), f.call(t, "coder", map[string]any{}))
	if backend.ErrorCode(err) == backend.EUNAVAILABLE {
		prereq.Missing(t, "bubblewrap cannot sandbox here")
	}
	require.NoError(t, err)
	require.Zero(t, res.ExitCode)
	require.Contains(t, string(res.Stdout), "from-script")
	require.NotContains(t, string(res.Stdout), "s3cret", "the script sees nothing outside its workspace")
	require.Equal(t, []string{"made.txt"}, res.FilesChanged)
	require.True(t, res.Sandboxed)
}

// TestWorldSimStepOutgrowingItsMemoryFailsTheStep is issue 14's world_sim
// case: a program that doubles a string in step fails the tool step with
// the limit's sentence (the simulation ran; its step failed) instead of
// growing ducklm past gigabytes.
func TestWorldSimStepOutgrowingItsMemoryFailsTheStep(t *testing.T) {
	t.Parallel()
	f := setup(t)
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	ledger := store.NewLedger(db)
	pool := worldproc.New(worldproc.Options{Workers: 1})
	t.Cleanup(func() { pool.Close() })
	limits := starlark.Limits{MaxSteps: 1 << 40, MaxMemoryBytes: 64 << 20}
	ws := &tool.WorldSim{Worlds: world.New(store.NewWorlds(db, ledger), ledger, blobs, limits, pool)}
	program := "def init(seed):\n    return {}\ndef step(s, a, r):\n    x = \"x\"\n    while True:\n        x = x + x\ndef observe(s, r):\n    return s\n"
	res, err := ws.Run(context.Background(), f.call(t, "world_sim", map[string]any{"program": program, "steps": 3}))
	require.NoError(t, err, "the simulation ran; its step failed")
	require.Equal(t, 1, res.ExitCode)
	require.Contains(t, string(res.Stderr), "memory limit of 64 MiB")
	require.Contains(t, string(res.Stderr), "worldMemoryMiB")
}
