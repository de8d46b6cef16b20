package store_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm/schema"

	"ducklm/backend"
	"ducklm/backend/store"
	"ducklm/backend/store/postgres"
	"ducklm/migrations"
)

func TestOpenMigratesToLatest(t *testing.T) {
	t.Parallel()
	f := setup(t)
	v, err := f.db.SchemaVersion(f.ctx)
	require.NoError(t, err)
	require.Equal(t, store.LatestSchemaVersion(), v)
	require.Positive(t, v)

	var mode, fk string
	var sync int
	require.NoError(t, f.db.SQL.QueryRow("PRAGMA journal_mode").Scan(&mode))
	require.NoError(t, f.db.SQL.QueryRow("PRAGMA synchronous").Scan(&sync))
	require.NoError(t, f.db.SQL.QueryRow("PRAGMA foreign_keys").Scan(&fk))
	require.Equal(t, "wal", mode)
	require.Equal(t, 2, sync, "synchronous=FULL")
	require.Equal(t, "1", fk)

	// Opening again is a no-op.
	require.NoError(t, f.db.Close())
	db, err := store.Open(f.ctx, f.path)
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.db.SQL.Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)", store.LatestSchemaVersion()+5)
	require.NoError(t, err)
	require.NoError(t, f.db.Close())
	before, err := os.ReadFile(f.path)
	require.NoError(t, err)

	_, err = store.Open(context.Background(), f.path)
	require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "newer ducklm")

	after, err := os.ReadFile(f.path)
	require.NoError(t, err)
	require.Equal(t, before, after, "a newer database is left untouched")
}

func TestOpenRefusesGarbage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ducklm.db")
	require.NoError(t, os.WriteFile(path, []byte("this is not a database, just some text that is long enough"), 0o600))
	_, err := store.Open(context.Background(), path)
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
}

// The schema lives in migrations/; the GORM models must describe it exactly,
// on both databases.
func TestModelsMatchMigratedSchema(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		// Each database's own account of its tables.
		q := "SELECT name, \"notnull\" FROM pragma_table_info(?)"
		if f.url != "" {
			q = "SELECT column_name, is_nullable = 'NO' FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?"
		}
		for _, model := range store.Models() {
			s, err := schema.Parse(model, &sync.Map{}, schema.NamingStrategy{})
			require.NoError(t, err)
			rows, err := f.db.SQL.Query(f.db.Rebind(q), s.Table)
			require.NoError(t, err, s.Table)
			var inDB, inModel []string
			nullable := map[string]bool{}
			for rows.Next() {
				var name string
				var notNull bool
				require.NoError(t, rows.Scan(&name, &notNull))
				if name == "rowid" && s.Table == "memories" {
					continue // PostgreSQL's stand-in for SQLite's implicit rowid
				}
				inDB = append(inDB, name)
				nullable[name] = !notNull
			}
			require.NoError(t, rows.Err())
			require.NotEmpty(t, inDB, "table %s exists", s.Table)
			for _, field := range s.Fields {
				if field.DBName == "" {
					continue
				}
				inModel = append(inModel, field.DBName)
				if !field.PrimaryKey {
					require.Equal(t, !field.NotNull, nullable[field.DBName], "%s.%s nullability", s.Table, field.DBName)
				}
			}
			sort.Strings(inDB)
			sort.Strings(inModel)
			require.Equal(t, inDB, inModel, "columns of %s", s.Table)
		}
		v, err := f.db.SchemaVersion(f.ctx)
		require.NoError(t, err)
		require.Equal(t, store.LatestSchemaVersion(), v)
	})
}

// Both databases have the same schema versions, one file each.
func TestMigrationsAgreeAcrossDialects(t *testing.T) {
	t.Parallel()
	versions := func(fsys fs.FS) []string {
		names, err := fs.Glob(fsys, "*.sql")
		require.NoError(t, err)
		var out []string
		for _, n := range names {
			out = append(out, strings.SplitN(n, "_", 2)[0])
		}
		return out
	}
	require.Equal(t, versions(migrations.FS), versions(migrations.Postgres))
	require.Len(t, versions(migrations.FS), int(store.LatestSchemaVersion()))
}

// A second process opening a PostgreSQL database a newer ducklm migrated is
// refused, and nothing is changed.
func TestPostgresRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	f := setupPostgres(t)
	require.NoError(t, f.exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, true)", store.LatestSchemaVersion()+5))
	_, err := postgres.Open(f.ctx, f.url)
	require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "newer ducklm")
	require.NotContains(t, backend.ErrorMessage(err), "password")
}

// A server that is not there is a sentence with the address, without its password.
func TestPostgresUnreachableIsASentence(t *testing.T) {
	t.Parallel()
	_, err := postgres.Open(context.Background(), "postgres://ducklm:secret@127.0.0.1:1/ducklm?connect_timeout=2")
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "cannot reach PostgreSQL at postgres://ducklm:xxxxx@127.0.0.1:1/ducklm")
	require.NotContains(t, backend.ErrorMessage(err), "secret")
	_, err = postgres.Open(context.Background(), "mysql://x")
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}
