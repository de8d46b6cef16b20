package world_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/world"
)

func TestLineageAncestorsDescendantsCommonAncestor(t *testing.T) {
	t.Parallel()
	f := setup(t)
	root, run := create(t, f, 1)
	steps(t, f, run.ID, 2)
	cp := latestCheckpoint(t, f, run.ID)
	_, a, aRun, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch})
	require.NoError(t, err)
	_, b, _, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeSeedChange, SeedPolicy: backend.SeedDerive})
	require.NoError(t, err)
	steps(t, f, aRun.ID, 1)
	acp := latestCheckpoint(t, f, aRun.ID)
	_, aa, _, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: acp.ID, Divergence: backend.DivergeStatePatch})
	require.NoError(t, err)
	other, _ := create(t, f, 9)

	anc, err := f.worlds.Ancestors(f.ctx, aa.ID)
	require.NoError(t, err)
	require.Equal(t, []string{a.ID, root.ID}, ids(anc))

	desc, err := f.worlds.Descendants(f.ctx, root.ID)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{a.ID, b.ID, aa.ID}, ids(desc))

	common, err := f.worlds.CommonAncestor(f.ctx, aa.ID, b.ID)
	require.NoError(t, err)
	require.Equal(t, root.ID, common.ID)
	common, err = f.worlds.CommonAncestor(f.ctx, aa.ID, a.ID)
	require.NoError(t, err)
	require.Equal(t, a.ID, common.ID)
	_, err = f.worlds.CommonAncestor(f.ctx, aa.ID, other.ID)
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))

	dag, err := f.worlds.Lineage(f.ctx)
	require.NoError(t, err)
	require.Len(t, dag.Nodes, 5)
	require.Len(t, dag.Edges, 3)
	for _, e := range dag.Edges {
		require.NotEmpty(t, e.Fork.Divergence)
	}
}

func TestLineageCycleIsRefused(t *testing.T) {
	t.Parallel()
	a := backend.WorldSpec{ID: backend.NewID(backend.KindWorld)}
	b := backend.WorldSpec{ID: backend.NewID(backend.KindWorld), ParentWorldID: a.ID}
	c := backend.WorldSpec{ID: backend.NewID(backend.KindWorld), ParentWorldID: b.ID}
	require.NoError(t, world.CheckAcyclic([]backend.WorldSpec{a, b, c}))
	a.ParentWorldID = c.ID
	err := world.CheckAcyclic([]backend.WorldSpec{a, b, c})
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "cycle")
	self := backend.WorldSpec{ID: backend.NewID(backend.KindWorld)}
	self.ParentWorldID = self.ID
	require.Error(t, world.CheckAcyclic([]backend.WorldSpec{self}))
}

func TestVerifyReexecutesThroughForks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run := create(t, f, 77)
	steps(t, f, run.ID, 6)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	_, _, child, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeSeedChange, SeedPolicy: backend.SeedDerive})
	require.NoError(t, err)
	_, err = f.worlds.RunSteps(f.ctx, child.ID, world.RunOptions{Steps: 10, CheckpointEvery: 3})
	require.NoError(t, err)

	rep, err := f.worlds.Verify(f.ctx, child.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
	require.Equal(t, 16, rep.Steps)
	require.GreaterOrEqual(t, rep.Checkpoints, 6)

	// A forged step record is the first divergence reported.
	forged, err := f.ledger.Append(f.ctx, child.ID, backend.ExpectAny, backend.Event{
		Type: world.EventStep, Reality: backend.WorldLocal,
		Payload: json.RawMessage(`{"action":null,"stateDigest":"sha256:0000","emitted":0,"done":false}`),
	})
	require.NoError(t, err)
	rep, err = f.worlds.Verify(f.ctx, child.ID)
	require.NoError(t, err)
	require.False(t, rep.OK)
	require.Equal(t, forged[0].Seq, rep.Divergence.Seq)
	require.Equal(t, "sha256:0000", rep.Divergence.Expected)
}

// Restoring any checkpoint and stepping on yields exactly what the original
// run yielded from there, for random seeds and checkpoint positions.
func TestCheckpointRestoreIsExactProperty(t *testing.T) {
	t.Parallel()
	f := setup(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 8; trial++ {
		_, run := create(t, f, rng.Int64N(1<<40))
		k, tail := 1+rng.IntN(8), 1+rng.IntN(8)
		steps(t, f, run.ID, k)
		cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
		require.NoError(t, err)
		var want []string
		for i := 0; i < tail; i++ {
			out, err := f.worlds.Step(f.ctx, run.ID, nil)
			require.NoError(t, err)
			want = append(want, string(out.State))
		}
		_, _, child, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch})
		require.NoError(t, err)
		for i := 0; i < tail; i++ {
			out, err := f.reopen().Step(f.ctx, child.ID, nil)
			require.NoError(t, err)
			require.Equal(t, want[i], string(out.State), "trial %d step %d after checkpoint at %d", trial, i, k)
		}
	}
}

func TestDiffAfterCommonAncestor(t *testing.T) {
	t.Parallel()
	f := setup(t)
	root, run := create(t, f, 4)
	steps(t, f, run.ID, 3)
	cp, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	_, _, a, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{"params": {"inc": 2}}`)})
	require.NoError(t, err)
	_, _, b, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{"params": {"inc": 3, "tag": "b"}}`)})
	require.NoError(t, err)
	steps(t, f, a.ID, 2)
	steps(t, f, b.ID, 1)

	d, err := f.worlds.Diff(f.ctx, a.ID, b.ID)
	require.NoError(t, err)
	require.Equal(t, root.ID, d.CommonWorldID)
	require.Equal(t, cp.LedgerSeq, d.SharedEvents)
	require.Equal(t, 2+2*2, d.EventsATotal) // forked, checkpoint, 2×(step, emitted)
	require.Equal(t, 2+2, d.EventsBTotal)
	paths := map[string]string{}
	for _, c := range d.StateChanges {
		paths[c.Path] = c.Kind
	}
	require.Equal(t, "changed", paths["/params/inc"])
	require.Equal(t, "added", paths["/params/tag"])
	require.Equal(t, "changed", paths["/n"])
}

func TestJSONDiff(t *testing.T) {
	t.Parallel()
	changes, err := world.JSONDiff(json.RawMessage(`{"a":1,"b":[1,2],"c":{"x":"y"},"d/e":1}`), json.RawMessage(`{"a":1,"b":[1,3,4],"c":{},"z":null}`))
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range changes {
		got[c.Path] = c.Kind
	}
	require.Equal(t, map[string]string{"/b/1": "changed", "/b/2": "added", "/c/x": "removed", "/d~1e": "removed", "/z": "added"}, got)
	same, err := world.JSONDiff(json.RawMessage(`{"a":[1]}`), json.RawMessage(`{"a":[1]}`))
	require.NoError(t, err)
	require.Empty(t, same)
}

func ids(specs []backend.WorldSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.ID
	}
	return out
}

func TestLineageOutlineIsTheLineageInBrief(t *testing.T) {
	t.Parallel()
	f := setup(t)
	root, run := create(t, f, 1)
	steps(t, f, run.ID, 2)
	cp := latestCheckpoint(t, f, run.ID)
	fork, child, childRun, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{ "sum": 100 }`)})
	require.NoError(t, err)
	long := `{"sum": ` + strings.Repeat("1", 100) + `}`
	seeded, seededChild, _, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeSeedChange, SeedPolicy: backend.SeedFresh, Delta: json.RawMessage(long)})
	require.NoError(t, err)

	o, err := f.worlds.LineageOutline(f.ctx)
	require.NoError(t, err)
	require.Len(t, o.Worlds, 3)
	byID := map[string]world.OutlineWorld{}
	for _, w := range o.Worlds {
		byID[w.ID] = w
	}
	stored, err := f.worlds.Spec(f.ctx, root.ID)
	require.NoError(t, err)
	require.Equal(t, world.OutlineWorld{ID: root.ID, Name: root.Name, Domain: root.Domain, CreatedAt: stored.CreatedAt, Runs: 1, RunID: run.ID, Status: backend.RunRunning}, byID[root.ID])
	require.Equal(t, root.ID, byID[child.ID].Parent)
	require.Equal(t, childRun.ID, byID[child.ID].RunID)
	// Each fork says what it changed, in brief, and a seed policy other than inherit.
	require.ElementsMatch(t, []world.OutlineFork{
		{ID: fork.ID, From: root.ID, To: child.ID, Divergence: backend.DivergeStatePatch, At: cp.WorldLocalTime, Change: `{"sum":100}`},
		{ID: seeded.ID, From: root.ID, To: seededChild.ID, Divergence: backend.DivergeSeedChange, At: cp.WorldLocalTime, Change: `{"sum":` + strings.Repeat("1", 53) + "…", Seed: backend.SeedFresh},
	}, o.Forks)

	full, err := json.Marshal(must(f.worlds.Lineage(f.ctx)))
	require.NoError(t, err)
	brief, err := json.Marshal(o)
	require.NoError(t, err)
	require.Less(t, len(brief)*2, len(full), "the outline is much smaller than the lineage")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
