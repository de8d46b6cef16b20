package store_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"ducklm/backend/store"
	"ducklm/backend/store/postgres"
	"ducklm/migrations"
)

// indexed says whether the fixture's database has the named index.
func indexed(t *testing.T, f fixture, name string) bool {
	t.Helper()
	q := "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?"
	if f.url != "" {
		q = "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?"
	}
	var n int
	require.NoError(t, f.db.SQL.QueryRowContext(f.ctx, f.db.Rebind(q), name).Scan(&n))
	return n == 1
}

// migrateDown takes the fixture's database down to version with its
// dialect's migrations.
func migrateDown(t *testing.T, f fixture, version int64) {
	t.Helper()
	dialect, fsys := goose.DialectSQLite3, fs.FS(migrations.FS)
	if f.url != "" {
		dialect, fsys = goose.DialectPostgres, migrations.Postgres
	}
	p, err := goose.NewProvider(dialect, f.db.SQL, fsys)
	require.NoError(t, err)
	_, err = p.DownTo(f.ctx, version)
	require.NoError(t, err)
	v, err := f.db.SchemaVersion(f.ctx)
	require.NoError(t, err)
	require.Equal(t, version, v)
}

// reopen opens the fixture's database again, as this ducklm does at start,
// which brings it up to date.
func reopen(t *testing.T, f fixture) {
	t.Helper()
	var again *store.DB
	var err error
	if f.url != "" {
		again, err = postgres.Open(context.Background(), f.url)
	} else {
		again, err = store.Open(context.Background(), f.path)
	}
	require.NoError(t, err)
	t.Cleanup(func() { again.Close() })
	v, err := f.db.SchemaVersion(f.ctx)
	require.NoError(t, err)
	require.Equal(t, store.LatestSchemaVersion(), v)
}

// Events are not indexed by type: every read that filters by type names
// its stream and ranges over (stream_id, seq). A database made before
// loses the index when it opens, and migrating down brings it back.
func TestEventsAreNotIndexedByType(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		require.False(t, indexed(t, f, "events_type_pos"))
		migrateDown(t, f, 7)
		require.True(t, indexed(t, f, "events_type_pos"), "down recreates the index")
		reopen(t, f)
		require.False(t, indexed(t, f, "events_type_pos"))
	})
}

// Runs are not indexed by (status, updated_at): no read filters or orders
// runs by either, and every step's commit updates updated_at. A database
// made before loses the index when it opens, and migrating down brings it
// back.
func TestRunsAreNotIndexedByStatus(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		require.False(t, indexed(t, f, "world_runs_status"))
		require.True(t, indexed(t, f, "world_runs_world"), "the runs' other index stays")
		migrateDown(t, f, 8)
		require.True(t, indexed(t, f, "world_runs_status"), "down recreates the index")
		require.False(t, indexed(t, f, "events_type_pos"), "down to 8 keeps 8's drop")
		reopen(t, f)
		require.False(t, indexed(t, f, "world_runs_status"))
	})
}
