package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/store"
	"ducklm/backend/store/postgres"
	"ducklm/backend/store/postgres/pgtest"
)

// TestMain stops the throw-away PostgreSQL the storage suite started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

type fixture struct {
	ctx    context.Context
	db     *store.DB
	ledger *store.Ledger
	path   string // the SQLite file; "" on PostgreSQL
	url    string // the PostgreSQL database; "" on SQLite
}

// exec runs a statement written with ? placeholders on the fixture's database.
func (f fixture) exec(query string, args ...any) error {
	_, err := f.db.SQL.ExecContext(f.ctx, f.db.Rebind(query), args...)
	return err
}

// setup opens a new SQLite database (for what only SQLite has: its file,
// its pragmas).
func setup(t *testing.T) fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ducklm.db")
	db, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return fixture{ctx: context.Background(), db: db, ledger: store.NewLedger(db), path: path}
}

// setupPostgres opens a new database on the throw-away PostgreSQL.
func setupPostgres(t *testing.T) fixture {
	t.Helper()
	url := pgtest.URL(t)
	db, err := postgres.Open(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return fixture{ctx: context.Background(), db: db, ledger: store.NewLedger(db), url: url}
}

// eachStore runs one behavioural test against every implementation of the
// store: the storage suite is written once and passes on both databases.
func eachStore(t *testing.T, test func(t *testing.T, f fixture)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		test(t, setup(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		test(t, setupPostgres(t))
	})
}
