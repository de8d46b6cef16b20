package bundles_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/world"
)

// The Branching Grid and a finished task run arrive identical: events (ids,
// seqs, payloads, clocks, reality, recorded times), run records,
// checkpoints with their digests, fork records, lineage, histories, and
// replay verification of the simulated runs.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tg := newTarget(t)
	trust, err := bundle.LoadTrust(src.dir + "/home")
	require.NoError(t, err)
	opts := bundle.ImportOptions{VerifyOptions: bundle.VerifyOptions{Trust: trust}}

	// The child with its ancestry first, then the world with all its
	// descendants: the second import skips what the first brought.
	res, err := tg.importFile(t, src.childBundle, opts)
	require.NoError(t, err)
	require.True(t, res.Known)
	require.Equal(t, "this installation's own key", res.Trust)
	require.EqualValues(t, 2, res.Added.Worlds)
	require.EqualValues(t, 2, res.Added.Runs)
	require.EqualValues(t, 1, res.Added.Forks)
	require.EqualValues(t, len(src.state[src.parentRun].Events)+len(src.state[src.childA].Events), res.Added.Events)

	res, err = tg.importFile(t, src.worldBundle, opts)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Added.Worlds, "only child B is new")
	require.EqualValues(t, 1, res.Added.Runs)
	require.EqualValues(t, 1, res.Added.Forks)
	require.EqualValues(t, len(src.state[src.childB].Events), res.Added.Events)
	require.EqualValues(t, 3, res.Counts.Worlds)

	// A task run's spec names no program (its request is its first event,
	// task.received): its bundle carries no program blob and verifies.
	require.Empty(t, src.state[src.taskRun].Spec.Program.Digest)
	_, err = bundle.VerifyFile(ctx, tg.local, src.task, opts.VerifyOptions)
	require.NoError(t, err)
	res, err = tg.importFile(t, src.task, opts)
	require.NoError(t, err)
	require.EqualValues(t, len(src.state[src.taskRun].Events), res.Added.Events)
	require.Positive(t, res.Added.Blobs)

	for _, id := range []string{src.parentRun, src.childA, src.childB, src.taskRun} {
		got, err := readRun(ctx, tg.reg, tg.svc.Ledger, id)
		require.NoError(t, err)
		want := src.state[id]
		require.Equal(t, want.Spec, got.Spec, id)
		require.Equal(t, want.Run, got.Run, id)
		require.Equal(t, want.Fork, got.Fork, id)
		require.Equal(t, want.Checkpoints, got.Checkpoints, id)
		require.Equal(t, len(want.Events), len(got.Events), id)
		for i := range want.Events {
			require.Equal(t, want.Events[i], got.Events[i], "%s seq %d", id, i+1)
			require.Equal(t, string(want.Events[i].Payload), string(got.Events[i].Payload))
		}
		h, err := tg.svc.Worlds.History(ctx, id)
		require.NoError(t, err)
		require.Equal(t, len(src.histories[id]), len(h))
		for i := range h {
			require.Equal(t, src.histories[id][i].ID, h[i].ID)
		}
	}
	for _, cp := range src.state[src.childA].Checkpoints {
		data, err := tg.svc.Blobs.Get(ctx, cp.Blob)
		require.NoError(t, err, "checkpoint %s's state arrived", cp.ID)
		require.EqualValues(t, cp.Blob.Size, len(data))
	}

	// Lineage: the same worlds and fork edges (the target has no others
	// but the task's world).
	dag, err := tg.svc.Worlds.Lineage(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, src.lineage.Edges, dag.Edges)
	nodes := func(l world.Lineage) map[string]backend.WorldSpec {
		out := map[string]backend.WorldSpec{}
		for _, n := range l.Nodes {
			out[n.World.ID] = n.World
		}
		return out
	}
	require.Equal(t, nodes(src.lineage), nodes(dag))

	// The simulated runs re-execute to their record here too.
	for _, id := range []string{src.parentRun, src.childA, src.childB} {
		rep, err := tg.svc.Worlds.Verify(ctx, id)
		require.NoError(t, err)
		require.True(t, rep.OK, "%s: %+v", id, rep.Divergence)
		require.Positive(t, rep.Checkpoints)
	}
	// The task run loads from its imported checkpoint to the same state.
	st, _, err := tg.svc.Runtime.Load(ctx, src.taskRun)
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, st.Status)
	require.Equal(t, src.taskState.Steps["write"].State, st.Steps["write"].State)
	require.Equal(t, string(src.taskState.Steps["read"].Result.Output), string(st.Steps["read"].Result.Output))

	// Importing again changes nothing.
	before := dbState(t, tg.svc)
	for _, f := range []string{src.childBundle, src.worldBundle, src.task} {
		res, err := tg.importFile(t, f, opts)
		require.NoError(t, err)
		require.True(t, res.AlreadyPresent(), "%s: %+v", f, res.Added)
	}
	require.Equal(t, before, dbState(t, tg.svc))
}

// A run that moved on where it was exported brings its new events and
// progress to a target that imported it before.
func TestReimportExtendsARun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, err := service.Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer from.Close()
	_, run, err := from.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 3})
	require.NoError(t, err)
	_, err = from.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 4})
	require.NoError(t, err)
	key, err := bundle.LoadOrCreateKey(from.Dir)
	require.NoError(t, err)
	local := bundle.Local{Store: store.NewWorlds(from.DB, from.Ledger), Events: from.Ledger, Blobs: from.Blobs}
	export := func(name string) string {
		path := t.TempDir() + "/" + name
		f, err := os.Create(path)
		require.NoError(t, err)
		defer f.Close()
		_, err = bundle.Export(ctx, local, run.ID, f, bundle.ExportOptions{Key: &key})
		require.NoError(t, err)
		return path
	}
	first := export("first.ducklm")
	_, err = from.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 5})
	require.NoError(t, err)
	second := export("second.ducklm")

	tg := newTarget(t)
	opts := bundle.ImportOptions{AllowUnsigned: true}
	_, err = tg.importFile(t, first, opts)
	require.NoError(t, err)
	res, err := tg.importFile(t, second, opts)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Updated)
	require.Positive(t, res.Added.Events)
	got, err := readRun(ctx, tg.reg, tg.svc.Ledger, run.ID)
	require.NoError(t, err)
	want, err := readRun(ctx, local.Store.(*store.Worlds), from.Ledger, run.ID)
	require.NoError(t, err)
	require.Equal(t, want, got)
	rep, err := tg.svc.Worlds.Verify(ctx, run.ID)
	require.NoError(t, err)
	require.True(t, rep.OK)

	// The older bundle is now a prefix: already present.
	res, err = tg.importFile(t, first, opts)
	require.NoError(t, err)
	require.True(t, res.AlreadyPresent())
}
