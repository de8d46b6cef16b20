package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/sqlite"
)

type fixture struct {
	ctx    context.Context
	db     *sqlite.DB
	ledger *sqlite.Ledger
	path   string
}

func setup(t *testing.T) fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ducklm.db")
	db, err := sqlite.Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return fixture{ctx: context.Background(), db: db, ledger: sqlite.NewLedger(db), path: path}
}
