package world_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/store"
	"ducklm/backend/world"
)

// TestOneDefinitionOfABranch holds the two readers of a deliberation branch
// to one definition (backend.BranchRound): the lineage (its outline, which
// the window draws, and `ducklm world ls`) and the store's paged world list,
// whose SQL leaves branches out (WithoutBranches) and counts a world's
// branch children. They used to differ on a world whose latest run serves no
// round but an earlier one does.
func TestOneDefinitionOfABranch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	worlds := store.NewWorlds(f.db, f.ledger)

	require.EqualValues(t, 0, backend.BranchRound())
	require.EqualValues(t, 0, backend.BranchRound(0, 0))
	require.EqualValues(t, 3, backend.BranchRound(0, 3, 2))
	require.Equal(t, backend.BranchRound(backend.BranchRound(2, 0), 3), backend.BranchRound(2, 0, 3), "folding one run at a time")

	root, run := create(t, f, 7)
	steps(t, f, run.ID, 2)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	branch, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: cp.ID, Actions: acts(`{"add": 1}`), ParentTime: 2, DeliberationIndex: 2})
	require.NoError(t, err)
	deeper, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: branch.Checkpoint.ID, Actions: acts(`null`), ParentTime: 2, DeliberationIndex: 2})
	require.NoError(t, err)
	_, byHand, _, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: branch.Checkpoint.ID, Divergence: backend.DivergeParameterChange, Delta: []byte(`{}`)})
	require.NoError(t, err)
	// A branch whose world later gained a run that serves no round: still
	// a branch of round 3.
	rerun, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: cp.ID, Actions: acts(`{"add": 2}`), ParentTime: 2, DeliberationIndex: 3})
	require.NoError(t, err)
	later := time.Now().Add(time.Hour)
	require.NoError(t, worlds.CreateRun(f.ctx, backend.WorldRun{ID: backend.NewID(backend.KindRun), WorldID: rerun.Run.WorldID,
		Status: backend.RunRunning, CreatedAt: later, UpdatedAt: later}))
	// A world that was no branch until a later run served round 4.
	other, _ := create(t, f, 8)
	require.NoError(t, worlds.CreateRun(f.ctx, backend.WorldRun{ID: backend.NewID(backend.KindRun), WorldID: other.ID,
		Status: backend.RunRunning, DeliberationIndex: 4, CreatedAt: later, UpdatedAt: later}))

	want := map[string]int64{root.ID: 0, branch.Run.WorldID: 2, deeper.Run.WorldID: 2, byHand.ID: 0, rerun.Run.WorldID: 3, other.ID: 4}

	// The lineage and its outline.
	l, err := f.worlds.Lineage(f.ctx)
	require.NoError(t, err)
	got := map[string]int64{}
	for _, n := range l.Nodes {
		got[n.World.ID] = n.Round()
	}
	require.Equal(t, want, got)
	o, err := f.worlds.LineageOutline(f.ctx)
	require.NoError(t, err)
	clear(got)
	for _, w := range o.Worlds {
		got[w.ID] = w.Round
	}
	require.Equal(t, want, got)

	// The store's list: the same worlds left out, the same branches counted.
	page, err := worlds.ListWorlds(f.ctx, backend.WorldQuery{WithoutBranches: true})
	require.NoError(t, err)
	var listed []string
	for _, w := range page.Worlds {
		listed = append(listed, w.ID)
	}
	var notBranches []string
	branches := 0
	children := map[string]int{}
	for _, n := range l.Nodes {
		if n.Round() == 0 {
			notBranches = append(notBranches, n.World.ID)
		} else {
			branches++
			children[n.World.ParentWorldID]++
		}
	}
	require.ElementsMatch(t, notBranches, listed)
	require.Equal(t, len(notBranches), page.Total)
	require.Equal(t, branches, page.Branches)
	all, err := worlds.ListWorlds(f.ctx, backend.WorldQuery{})
	require.NoError(t, err)
	require.Len(t, all.Worlds, len(want))
	for _, w := range all.Worlds {
		require.Equal(t, children[w.ID], w.Branches, "the branch children of %s", w.ID)
	}
}
