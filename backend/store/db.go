package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"

	"ducklm/backend"
	"ducklm/migrations"
)

// DB is an open ducklm database.
type DB struct {
	// Gorm is the GORM handle for registries and ad-hoc queries.
	Gorm *gorm.DB
	// SQL is the database/sql pool GORM sits on, for hot paths.
	SQL *sql.DB
	// Path is the database file (SQLite), or where the database is without
	// secrets (PostgreSQL).
	Path string

	// writeMu serialises writers of this process: SQLite has one writer at a
	// time, and waiting on a Go mutex is cheaper and fairer than busy retries.
	writeMu sync.Mutex

	// stmts caches prepared statements by query text (stmt.go).
	stmts sync.Map

	dialect *Dialect

	// synced and deferred count the write transactions this store committed
	// with and without their own sync (Commits); flushed counts the synced
	// ones that were Ledger.Flush's (Flushes).
	synced, deferred, flushed atomic.Int64
	// unsynced counts the deferred commits since the last synced one (all
	// of them commit under writeMu, in order): what Ledger.Flush makes durable.
	unsynced atomic.Int64
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

// NewerSchema is the refusal of a database a newer ducklm wrote.
func NewerSchema(where string, have, latest int64) error {
	return backend.Errorf(backend.ECONFLICT,
		"the data in %s was written by a newer ducklm (schema %d; this build knows up to %d): "+
			"upgrade ducklm, or point DUCKLM_HOME at another folder", where, have, latest)
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
	tx, done, err := db.beginTx(ctx)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot start a transaction")
	}
	defer done()
	defer tx.Rollback()
	if err := fn(db.onTx(tx)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot commit")
	}
	db.committed(ctx)
	return nil
}

// Commits returns how many write transactions this store has committed
// with a durable sync of their own and how many deferred it
// (backend.DeferSync), since it was opened: what a step costs in syncs,
// counted exactly (tests/stepcost). Statements run outside a transaction
// are not counted.
func (db *DB) Commits() (synced, deferred int64) {
	return db.synced.Load(), db.deferred.Load()
}

// Flushes returns how many of the synced commits Commits counts were
// Ledger.Flush's: deferred results no other synced commit covered in time.
func (db *DB) Flushes() int64 { return db.flushed.Load() }

// Unsynced returns how many commits wait for a sync: those that deferred
// theirs since this store's last synced commit (Ledger.Flush syncs them).
func (db *DB) Unsynced() int64 { return db.unsynced.Load() }

// committed counts a committed write transaction.
func (db *DB) committed(ctx context.Context) {
	if backend.SyncDeferred(ctx) {
		db.deferred.Add(1)
		db.unsynced.Add(1)
	} else {
		db.synced.Add(1)
		db.unsynced.Store(0)
	}
}

// beginTx starts a write transaction; done must run after it ends. When
// ctx defers its sync (backend.DeferSync) the transaction commits without
// waiting for the disk: on SQLite on a connection of its own whose
// synchronous setting is lowered for it and restored by done (a
// connection that cannot be restored is discarded, never pooled).
func (db *DB) beginTx(ctx context.Context) (tx *sql.Tx, done func(), err error) {
	d := db.dialect
	if !backend.SyncDeferred(ctx) || (d.SyncOff == "" && d.SyncOffInTx == "") {
		tx, err := db.SQL.BeginTx(ctx, nil)
		return tx, func() {}, err
	}
	if d.SyncOffInTx != "" {
		tx, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		if _, err := tx.ExecContext(ctx, d.SyncOffInTx); err != nil {
			_ = tx.Rollback()
			return nil, nil, err
		}
		return tx, func() {}, nil
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	done = func() {
		if _, err := conn.ExecContext(context.Background(), d.SyncOn); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}
	if _, err := conn.ExecContext(ctx, d.SyncOff); err != nil {
		done()
		return nil, nil, err
	}
	tx, err = conn.BeginTx(ctx, nil)
	if err != nil {
		done()
		return nil, nil, err
	}
	return tx, done, nil
}
