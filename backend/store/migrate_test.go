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

// typeIndexed says whether the events table has the (type, pos) index.
func typeIndexed(t *testing.T, f fixture) bool {
	t.Helper()
	q := "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'events_type_pos'"
	if f.url != "" {
		q = "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'events_type_pos'"
	}
	var n int
	require.NoError(t, f.db.SQL.QueryRowContext(f.ctx, q).Scan(&n))
	return n == 1
}

// Events are not indexed by type: every read that filters by type names
// its stream and ranges over (stream_id, seq). A database made before
// loses the index when it opens, and migrating down brings it back.
func TestEventsAreNotIndexedByType(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		require.False(t, typeIndexed(t, f))

		dialect, fsys := goose.DialectSQLite3, fs.FS(migrations.FS)
		if f.url != "" {
			dialect, fsys = goose.DialectPostgres, migrations.Postgres
		}
		p, err := goose.NewProvider(dialect, f.db.SQL, fsys)
		require.NoError(t, err)
		_, err = p.DownTo(f.ctx, 7)
		require.NoError(t, err)
		require.True(t, typeIndexed(t, f), "down recreates the index")
		v, err := f.db.SchemaVersion(f.ctx)
		require.NoError(t, err)
		require.EqualValues(t, 7, v)

		// Opened by this ducklm, the database is brought up to date.
		var again *store.DB
		if f.url != "" {
			again, err = postgres.Open(context.Background(), f.url)
		} else {
			again, err = store.Open(context.Background(), f.path)
		}
		require.NoError(t, err)
		defer again.Close()
		require.False(t, typeIndexed(t, f))
		v, err = f.db.SchemaVersion(f.ctx)
		require.NoError(t, err)
		require.Equal(t, store.LatestSchemaVersion(), v)
	})
}
