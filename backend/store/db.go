package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/libtnb/sqlite"
	"github.com/pressly/goose/v3"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"ducklm/backend"
	"ducklm/migrations"
)

// DB is an open ducklm database.
type DB struct {
	// Gorm is the GORM handle for registries and ad-hoc queries.
	Gorm *gorm.DB
	// SQL is the database/sql pool GORM sits on, for hot paths.
	SQL *sql.DB
	// Path is the database file.
	Path string

	// writeMu serialises writers of this process: SQLite has one writer at a
	// time, and waiting on a Go mutex is cheaper and fairer than busy retries.
	writeMu sync.Mutex

	// stmts caches prepared statements by query text (stmt.go).
	stmts sync.Map

	dialect *Dialect
}

// DSN returns the connection string ducklm uses for path: WAL, fsync on every
// commit, foreign keys, a busy timeout for other processes, and IMMEDIATE
// transactions so a writer never fails half-way on a lock upgrade.
func DSN(path string) string {
	q := url.Values{}
	for _, p := range []string{
		"journal_mode(WAL)",
		"synchronous(FULL)",
		"foreign_keys(1)",
		"busy_timeout(10000)",
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

// Attach returns the store on a pool of another dialect that its opener
// (backend/store/postgres) has connected and migrated. name says where the
// database is, without secrets.
func Attach(gdb *gorm.DB, sqlDB *sql.DB, d *Dialect, name string) *DB {
	return &DB{Gorm: gdb, SQL: sqlDB, Path: name, dialect: d}
}

// Close closes the database.
func (db *DB) Close() error {
	db.stmts.Range(func(_, s any) bool {
		s.(*sql.Stmt).Close()
		return true
	})
	return db.SQL.Close()
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

// LatestSchemaVersion returns the newest migration version this build knows.
func LatestSchemaVersion() int64 {
	entries, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return 0
	}
	var latest int64
	for _, e := range entries {
		n, err := strconv.ParseInt(strings.SplitN(e, "_", 2)[0], 10, 64)
		if err == nil && n > latest {
			latest = n
		}
	}
	return latest
}

// SchemaVersion returns the version the database's schema is at.
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	return StoredVersion(ctx, db.SQL, db.dialect)
}

// StoredVersion reads goose's version table without creating it (0 when the
// database is new).
func StoredVersion(ctx context.Context, sqlDB *sql.DB, d *Dialect) (int64, error) {
	var exists int
	err := sqlDB.QueryRowContext(ctx, d.Rebind(d.TableExists), "goose_db_version").Scan(&exists)
	if err != nil {
		return 0, backend.Wrap(err, backend.EINTERNAL, "cannot read the schema version")
	}
	if exists == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	err = sqlDB.QueryRowContext(ctx,
		"SELECT max(version_id) FROM goose_db_version WHERE is_applied").Scan(&v)
	if err != nil {
		return 0, backend.Wrap(err, backend.EINTERNAL, "cannot read the schema version")
	}
	return v.Int64, nil
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

// NewerSchema is the refusal of a database a newer ducklm wrote.
func NewerSchema(where string, have, latest int64) error {
	return backend.Errorf(backend.ECONFLICT,
		"the data in %s was written by a newer ducklm (schema %d; this build knows up to %d): "+
			"upgrade ducklm, or point DUCKLM_HOME at another folder", where, have, latest)
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

// onTx returns a GORM handle that runs on tx, so GORM writes join a
// transaction the ledger started. Setting Context makes Session clone the
// statement (as gorm's own Transaction does), so the shared handle keeps its pool.
func (db *DB) onTx(tx *sql.Tx) *gorm.DB {
	g := db.Gorm.Session(&gorm.Session{NewDB: true, SkipDefaultTransaction: true, Context: context.Background()})
	g.Statement.ConnPool = tx
	return g
}

// write runs fn in one write transaction, serialised with the ledger's appends.
func (db *DB) write(ctx context.Context, fn func(gtx *gorm.DB) error) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot start a transaction")
	}
	defer tx.Rollback()
	if err := fn(db.onTx(tx)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot commit")
	}
	return nil
}
