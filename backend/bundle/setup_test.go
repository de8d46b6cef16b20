package bundle_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/bundle"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

// fixture is a data directory on a real temp-file database and blob store.
type fixture struct {
	ctx    context.Context
	dir    string
	db     *store.DB
	ledger *store.Ledger
	reg    *store.Worlds
	blobs  *blob.Store
	worlds *world.Service
	local  bundle.Local
}

func setup(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	ledger := store.NewLedger(db)
	reg := store.NewWorlds(db, ledger)
	return &fixture{ctx: ctx, dir: dir, db: db, ledger: ledger, reg: reg, blobs: blobs,
		worlds: world.New(reg, ledger, blobs, starlark.DefaultLimits(), worldproc.Shared()),
		local:  bundle.Local{Store: reg, Events: ledger, Blobs: blobs}}
}

// grid creates a Branching Grid run with steps steps and a forked child.
func (f *fixture) grid(t testing.TB, steps int) (parent, child backend.WorldRun) {
	t.Helper()
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 5})
	require.NoError(t, err)
	_, err = f.worlds.RunSteps(f.ctx, run.ID, world.RunOptions{Steps: steps, CheckpointEvery: 2})
	require.NoError(t, err)
	cps, err := f.reg.ListCheckpoints(f.ctx, run.ID)
	require.NoError(t, err)
	_, _, kid, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cps[1].ID, Divergence: backend.DivergeSeedChange,
		SeedPolicy: backend.SeedDerive})
	require.NoError(t, err)
	_, err = f.worlds.RunSteps(f.ctx, kid.ID, world.RunOptions{Steps: 2})
	require.NoError(t, err)
	return run, kid
}

// export returns the bundle of root.
func (f *fixture) export(t testing.TB, root string, opts bundle.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := bundle.Export(f.ctx, f.local, root, &buf, opts)
	require.NoError(t, err)
	return buf.Bytes()
}
