package bundles_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/bundle"
	"ducklm/backend/postgres/pgtest"
	"ducklm/backend/service"
	"ducklm/backend/sqlite"
)

// exportAt writes root's bundle from svc at a fixed time with key, and
// returns its bytes.
func exportAt(t *testing.T, svc *service.Service, root string, opts bundle.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	local := bundle.Local{Store: sqlite.NewWorlds(svc.DB, svc.Ledger), Events: svc.Ledger, Blobs: svc.Blobs}
	opts.Now = func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }
	_, err := bundle.Export(context.Background(), local, root, &buf, opts)
	require.NoError(t, err)
	return buf.Bytes()
}

func importBytes(t *testing.T, svc *service.Service, data []byte) bundle.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.ducklm")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	local := bundle.Local{Store: sqlite.NewWorlds(svc.DB, svc.Ledger), Events: svc.Ledger, Blobs: svc.Blobs}
	res, err := bundle.ImportFile(context.Background(), local, svc.Ledger, path, bundle.ImportOptions{AllowUnsigned: true})
	require.NoError(t, err)
	return res
}

// A bundle exported from a SQLite installation imports into a PostgreSQL
// one and back, and every re-export is byte-identical: the same facts,
// records and blobs, in the same order, on both databases.
func TestBundlesMoveBetweenSQLiteAndPostgresByteIdentical(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, err := service.Open(ctx, filepath.Join(src.dir, "home"))
	require.NoError(t, err)
	key, err := bundle.LoadOrCreateKey(from.Dir)
	require.NoError(t, err)
	roots := []struct {
		id   string
		opts bundle.ExportOptions
	}{
		{src.parentWorld, bundle.ExportOptions{Descendants: true, Key: &key}},
		{src.childA, bundle.ExportOptions{Ancestry: true, Key: &key}},
		{src.taskRun, bundle.ExportOptions{Key: &key}},
	}
	var original [][]byte
	for _, r := range roots {
		original = append(original, exportAt(t, from, r.id, r.opts))
	}
	require.NoError(t, from.Close())

	pg, err := service.OpenWith(ctx, t.TempDir(), service.Options{DatabaseURL: pgtest.URL(t)})
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	for i := range roots {
		res := importBytes(t, pg, original[i])
		require.False(t, i == 0 && res.AlreadyPresent(), "the first bundle adds what it holds")
	}
	back := newTarget(t) // SQLite again
	for i, r := range roots {
		onPostgres := exportAt(t, pg, r.id, r.opts)
		require.Equal(t, original[i], onPostgres, "re-exported from PostgreSQL: %s", r.id)
		importBytes(t, back.svc, onPostgres)
	}
	for i, r := range roots {
		require.Equal(t, original[i], exportAt(t, back.svc, r.id, r.opts), "re-exported from SQLite after PostgreSQL: %s", r.id)
	}
	// What the runs hold reads the same on PostgreSQL.
	for id, want := range src.state {
		got, err := readRun(ctx, sqlite.NewWorlds(pg.DB, pg.Ledger), pg.Ledger, id)
		require.NoError(t, err)
		require.Equal(t, want, got, "run %s on PostgreSQL", id)
	}
}
