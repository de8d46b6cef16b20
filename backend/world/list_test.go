package world_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/world"
)

func TestListWorldsPagesNewestFirstWithRunsAndForks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	named := func(name string) (backend.WorldSpec, backend.WorldRun) {
		spec, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: name, Program: []byte(counter), Seed: 1})
		require.NoError(t, err)
		return spec, run
	}
	root, run := named("Harbour traffic")
	steps(t, f, run.ID, 3)
	cp := latestCheckpoint(t, f, run.ID)
	_, child, childRun, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeSeedChange, SeedPolicy: backend.SeedDerive})
	require.NoError(t, err)
	var others []string
	for _, name := range []string{"alpha", "beta", "gamma", "delta"} {
		w, _ := named(name)
		others = append(others, w.ID)
	}

	// Every world, newest first, two to a page: the pages join up with no
	// world twice or missing, and the count is of all of them.
	var seen []string
	q := backend.WorldQuery{Limit: 2}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 4)
		p, err := f.worlds.ListWorlds(f.ctx, q)
		require.NoError(t, err)
		require.Equal(t, 6, p.Total)
		require.LessOrEqual(t, len(p.Worlds), 2)
		for _, w := range p.Worlds {
			seen = append(seen, w.ID)
		}
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	want := []string{others[3], others[2], others[1], others[0], child.ID, root.ID}
	require.Equal(t, want, seen)

	// A fork says where it came from; its parent counts it and shows its
	// latest run's world time.
	forks, err := f.worlds.ListWorlds(f.ctx, backend.WorldQuery{Parent: root.ID})
	require.NoError(t, err)
	require.Equal(t, 1, forks.Total)
	c := forks.Worlds[0]
	require.Equal(t, child.ID, c.ID)
	require.Equal(t, root.ID, c.Parent)
	require.NotNil(t, c.Fork)
	require.Equal(t, backend.DivergeSeedChange, c.Fork.Divergence)
	require.Equal(t, cp.WorldLocalTime, c.Fork.At)
	require.Equal(t, childRun.ID, c.LatestRun.ID)

	byName, err := f.worlds.ListWorlds(f.ctx, backend.WorldQuery{Text: "harbour"})
	require.NoError(t, err)
	// A fork is named after its parent: both match, the fork first.
	require.Equal(t, []string{child.ID, root.ID}, summaryIDs(byName.Worlds))
	r := byName.Worlds[1]
	require.Equal(t, root.ID, r.ID)
	require.Equal(t, 1, r.Forks)
	require.Equal(t, 1, r.Runs)
	require.Nil(t, r.Fork)
	require.Equal(t, run.ID, r.LatestRun.ID)
	require.Equal(t, int64(3), r.LatestRun.WorldLocalTime)
	require.Equal(t, backend.DomainSimulated, r.Domain)

	// An id finds its world whole, by a piece, or shortened as the window
	// shows it ("wld_…" and the tail).
	for _, text := range []string{root.ID, root.ID[len(root.ID)-8:], "wld_…" + root.ID[len(root.ID)-8:]} {
		p, err := f.worlds.ListWorlds(f.ctx, backend.WorldQuery{Text: text})
		require.NoError(t, err, text)
		require.Equal(t, []string{root.ID}, summaryIDs(p.Worlds), text)
	}
	// LIKE's wildcards in a search are plain characters.
	p, err := f.worlds.ListWorlds(f.ctx, backend.WorldQuery{Text: "%"})
	require.NoError(t, err)
	require.Empty(t, p.Worlds)
	require.Zero(t, p.Total)
	p, err = f.worlds.ListWorlds(f.ctx, backend.WorldQuery{Domain: backend.DomainReal})
	require.NoError(t, err)
	require.Zero(t, p.Total)
}

// TestListWorldsCanLeaveOutDeliberationBranches: a search records hundreds
// of branch worlds; a list that asks leaves them out (the lineage shows
// them under their rounds) and says how many it left out, on every page and
// for a search too. A world forked from a branch by hand is a world of its
// own, not a branch.
func TestListWorldsCanLeaveOutDeliberationBranches(t *testing.T) {
	t.Parallel()
	f := setup(t)
	root, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "chooser", Program: []byte(chooser), Seed: 7})
	require.NoError(t, err)
	steps(t, f, run.ID, 2)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	var branches []world.BranchResult
	for _, a := range []string{`{"add": 1}`, `{"add": 2}`} {
		b, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: cp.ID, Actions: acts(a), ParentTime: 2, DeliberationIndex: 1})
		require.NoError(t, err)
		branches = append(branches, b)
	}
	deeper, err := f.worlds.Branch(f.ctx, world.BranchRequest{CheckpointID: branches[0].Checkpoint.ID, Actions: acts(`null`), ParentTime: 2, DeliberationIndex: 1})
	require.NoError(t, err)
	_, kept, _, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: deeper.Checkpoint.ID, Divergence: backend.DivergeSeedChange, SeedPolicy: backend.SeedDerive})
	require.NoError(t, err)

	all, err := f.worlds.ListWorlds(f.ctx, backend.WorldQuery{})
	require.NoError(t, err)
	require.Equal(t, 5, all.Total)
	require.Zero(t, all.Branches, "a list that keeps them leaves none out")

	// Without the branches, a page at a time: the pages join up and each
	// says how many branches it left out.
	var seen []string
	q := backend.WorldQuery{WithoutBranches: true, Limit: 1}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		p, err := f.worlds.ListWorlds(f.ctx, q)
		require.NoError(t, err)
		require.Equal(t, 2, p.Total)
		require.Equal(t, 3, p.Branches)
		seen = append(seen, summaryIDs(p.Worlds)...)
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	require.Equal(t, []string{kept.ID, root.ID}, seen)
	require.Equal(t, 2, all.Worlds[4].Forks, "the root's forks are its two branches")
	require.Equal(t, 2, all.Worlds[4].Branches)

	// A search counts the branches it matched and left out: a branch's id
	// finds nothing listed, and says one branch has it.
	p, err := f.worlds.ListWorlds(f.ctx, backend.WorldQuery{WithoutBranches: true, Text: branches[1].Run.WorldID})
	require.NoError(t, err)
	require.Zero(t, p.Total)
	require.Empty(t, p.Worlds)
	require.Equal(t, 1, p.Branches)
	p, err = f.worlds.ListWorlds(f.ctx, backend.WorldQuery{Text: branches[1].Run.WorldID})
	require.NoError(t, err)
	require.Equal(t, []string{branches[1].Run.WorldID}, summaryIDs(p.Worlds))
	require.EqualValues(t, 1, p.Worlds[0].LatestRun.DeliberationIndex, "a listed branch says its round")
	require.Zero(t, all.Worlds[0].LatestRun.DeliberationIndex, "the hand-made fork serves none")
	// Forks of the root: only the hand-made ones when branches are left out.
	p, err = f.worlds.ListWorlds(f.ctx, backend.WorldQuery{WithoutBranches: true, Parent: root.ID})
	require.NoError(t, err)
	require.Zero(t, p.Total)
	require.Equal(t, 2, p.Branches)
}

func TestListWorldsRefusesBadQueries(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for name, q := range map[string]backend.WorldQuery{
		"limit too big":  {Limit: 501},
		"negative limit": {Limit: -1},
		"domain":         {Domain: "imaginary"},
		"parent":         {Parent: "run_0190f0e3"},
		"cursor":         {After: "yesterday"},
		"cursor id":      {After: "12:run_x"},
	} {
		_, err := f.worlds.ListWorlds(f.ctx, q)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), name)
		require.NotEmpty(t, backend.ErrorMessage(err), name)
	}
}

func summaryIDs(ws []backend.WorldSummary) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.ID
	}
	return out
}
