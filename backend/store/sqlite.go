package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/libtnb/sqlite"
	"github.com/pressly/goose/v3"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"ducklm/backend"
	"ducklm/migrations"
)

// The embedded SQLite database: its connection string, its opener and its
// migrations. PostgreSQL's opener is backend/store/postgres.

// DSN returns the connection string ducklm uses for path: WAL, fsync on every
// commit, foreign keys, a busy timeout for other processes, and IMMEDIATE
// transactions so a writer never fails half-way on a lock upgrade. The log
// is copied into the database (a checkpoint: two more syncs) every 10,000
// pages (40 MB) rather than SQLite's 1,000: a task step writes about 25
// pages of log, so a checkpoint every 40 steps added 0.05 syncs to each.
func DSN(path string) string {
	q := url.Values{}
	for _, p := range []string{
		"journal_mode(WAL)",
		"synchronous(FULL)",
		"foreign_keys(1)",
		"busy_timeout(10000)",
		"wal_autocheckpoint(10000)",
	} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path and brings its schema
// up to date. A database written by a newer ducklm is refused untouched.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot create the folder for the database %s", path)
	}
	sqlDB, err := sql.Open(sqlite.DriverName, DSN(path))
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot open the database %s", path)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		if msg := err.Error(); strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") {
			return nil, backend.Wrap(err, backend.ECORRUPT, "%s is not a readable ducklm database", path)
		}
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot open the database %s", path)
	}
	if err := checkReadable(ctx, sqlDB, path); err != nil {
		sqlDB.Close()
		return nil, err
	}
	if err := migrate(ctx, sqlDB, path); err != nil {
		sqlDB.Close()
		return nil, err
	}
	gdb, err := gorm.Open(sqlite.Dialector{DriverName: sqlite.DriverName, Conn: sqlDB}, &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		PrepareStmt:            false,
	})
	if err != nil {
		sqlDB.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot open the database %s", path)
	}
	// Each connection keeps its own page cache (up to 2 MB): connections
	// left idle by a burst of reads close, so an idle app holds little.
	sqlDB.SetConnMaxIdleTime(5 * time.Second)
	return &DB{Gorm: gdb, SQL: sqlDB, Path: path, dialect: SQLiteDialect()}, nil
}

// checkReadable refuses a file that is not a database at all with a
// sentence instead of a driver error. It reads the schema only: a full
// quick_check reads every page, which on a ledger of a million events is
// seconds at every start of the window and of every command. SQLite still
// reports a damaged page when a read reaches it.
func checkReadable(ctx context.Context, sqlDB *sql.DB, path string) error {
	var n int
	if err := sqlDB.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return backend.Wrap(err, backend.ECORRUPT, "%s is not a readable ducklm database", path)
	}
	return nil
}

func migrate(ctx context.Context, sqlDB *sql.DB, path string) error {
	have, err := StoredVersion(ctx, sqlDB, SQLiteDialect())
	if err != nil {
		return err
	}
	latest := LatestSchemaVersion()
	if have > latest {
		return NewerSchema(path, have, latest)
	}
	if have == latest {
		return nil
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, sqlDB, migrations.FS)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot load the schema migrations")
	}
	if _, err := p.Up(ctx); err != nil {
		var partial *goose.PartialError
		if errors.As(err, &partial) && partial.Failed != nil {
			return backend.Wrap(err, backend.EINTERNAL, "schema migration %d failed (the database keeps the previous schema)", partial.Failed.Source.Version)
		}
		return backend.Wrap(err, backend.EINTERNAL, "schema migration of %s failed", path)
	}
	return nil
}

// PeekSchemaVersion reads the schema version of the database at path without
// creating, migrating or locking it (0 when there is no database yet).
func PeekSchemaVersion(ctx context.Context, path string) (int64, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	sqlDB, err := sql.Open(sqlite.DriverName, "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return 0, backend.Wrap(err, backend.EINTERNAL, "cannot open the database %s", path)
	}
	defer sqlDB.Close()
	v, err := StoredVersion(ctx, sqlDB, SQLiteDialect())
	if err != nil {
		return 0, backend.Wrap(err, backend.ECORRUPT, "%s is not a readable ducklm database", path)
	}
	return v, nil
}

// OpenReadOnly opens the database at path for reading only: nothing is
// created, migrated or written (a team's installation reads the SQLite
// file it used before, to copy what it holds). A missing file is
// ENOTFOUND; a schema other than this ducklm's is refused, since reading
// it would need a migration that writes.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, backend.Errorf(backend.ENOTFOUND, "there is no database %s", path)
	}
	have, err := PeekSchemaVersion(ctx, path)
	if err != nil {
		return nil, err
	}
	if latest := LatestSchemaVersion(); have != latest {
		if have > latest {
			return nil, NewerSchema(path, have, latest)
		}
		return nil, backend.Errorf(backend.ECONFLICT,
			"%s holds ducklm schema %d, older than this ducklm's %d: open it once with this ducklm (switch back to it) to bring it up to date, then copy", path, have, latest)
	}
	sqlDB, err := sql.Open(sqlite.DriverName, "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot open the database %s", path)
	}
	if err := checkReadable(ctx, sqlDB, path); err != nil {
		sqlDB.Close()
		return nil, err
	}
	gdb, err := gorm.Open(sqlite.Dialector{DriverName: sqlite.DriverName, Conn: sqlDB}, &gorm.Config{
		Logger: logger.Discard, SkipDefaultTransaction: true})
	if err != nil {
		sqlDB.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot open the database %s", path)
	}
	return &DB{Gorm: gdb, SQL: sqlDB, Path: path, dialect: SQLiteDialect()}, nil
}
