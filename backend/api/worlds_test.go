package api_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/api"
	"ducklm/backend/settings"
	"ducklm/backend/starlark"
)

// TestWorldDetailShowsTheLimitsItsProgramRunsUnder: a simulated world's
// detail carries the limits of its program's calls, the memory limit as the
// settings choose it.
func TestWorldDetailShowsTheLimitsItsProgramRunsUnder(t *testing.T) {
	a, svc := setupSvc(t)
	w, err := a.CreateWorld(api.WorldInput{Example: "branching_grid", Seed: 7})
	require.NoError(t, err)
	d, err := a.WorldDetail(w.Run.ID)
	require.NoError(t, err)
	require.NotNil(t, d.Limits)
	require.Equal(t, starlark.Limits{MaxSteps: 1_000_000, MaxStateBytes: 8 << 20, MaxMemoryBytes: 512 << 20}, *d.Limits)

	_, err = svc.SaveSettings(settings.Settings{WorldMemoryMiB: 1024})
	require.NoError(t, err)
	d, err = a.WorldDetail(w.Run.ID)
	require.NoError(t, err)
	require.Equal(t, int64(1024<<20), d.Limits.MaxMemoryBytes)
}
