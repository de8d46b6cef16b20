package bundle_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/deliberation"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// A run exported with its descendants carries its deliberations: the
// rounds' records (the run's deliberation stream) and every branch, which
// re-execute exactly where they are imported.
func TestBundleCarriesDeliberations(t *testing.T) {
	t.Parallel()
	from := setup(t)
	_, run, err := from.worlds.Create(from.ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 5})
	require.NoError(t, err)
	res, err := deliberation.New(from.worlds, from.ledger).Deliberate(from.ctx, deliberation.Options{RunID: run.ID,
		Strategy: deliberation.MCTS, Depth: 4, Budget: 12, Seeds: 2, Rounds: 2, Apply: true})
	require.NoError(t, err)
	branches := 0
	for _, r := range res.Rounds {
		branches += len(r.Branches)
	}

	path := filepath.Join(t.TempDir(), "d.ducklm")
	require.NoError(t, os.WriteFile(path, from.export(t, run.ID, bundle.ExportOptions{Descendants: true}), 0o600))
	to := setup(t)
	rep, err := bundle.VerifyFile(to.ctx, to.local, path, bundle.VerifyOptions{})
	require.NoError(t, err)
	require.EqualValues(t, 2+branches, rep.Counts.Streams, "the run, its deliberation stream and every branch")
	_, err = bundle.ImportFile(to.ctx, to.local, to.ledger, path, bundle.ImportOptions{AllowUnsigned: true})
	require.NoError(t, err)

	rounds, err := deliberation.New(to.worlds, to.ledger).Rounds(to.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, rounds, 2)
	require.Equal(t, res.Rounds[1].Chosen, rounds[1].Chosen)
	events, err := to.ledger.Query(to.ctx, backend.EventQuery{Stream: deliberation.Stream(run.ID)})
	require.NoError(t, err)
	for _, e := range events {
		require.Equal(t, backend.ExternalReal, e.Reality)
	}
	for _, r := range res.Rounds {
		for _, b := range r.Branches {
			rep, err := to.worlds.Verify(to.ctx, b.RunID)
			require.NoError(t, err)
			require.True(t, rep.OK, "branch %s: %+v", b.WorldID, rep.Divergence)
		}
	}
	// Importing again adds nothing.
	again, err := bundle.ImportFile(to.ctx, to.local, to.ledger, path, bundle.ImportOptions{AllowUnsigned: true})
	require.NoError(t, err)
	require.Zero(t, again.Added.Events)
}
