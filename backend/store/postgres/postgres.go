package postgres

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	gormpg "gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"ducklm/backend"
	"ducklm/backend/store"
	"ducklm/migrations"
)

// ledgerLockKey names the advisory lock every ledger write holds until its
// transaction ends ("ducklm" in ASCII).
const ledgerLockKey int64 = 0x6475636b6c6d

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact returns the URL without its password, for messages and the window.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the PostgreSQL database"
	}
	return u.Redacted()
}

// Dialect returns PostgreSQL's dialect of the store.
func Dialect() *store.Dialect {
	return &store.Dialect{
		Name:     "postgres",
		Numbered: true,
		UniqueViolation: func(err error, table, column string) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == table+"_"+column+"_key"
		},
		ForeignKeyViolation: func(err error) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == "23503"
		},
		LockLedger: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", ledgerLockKey)
			return err
		},
		NotifyCommit: func(ctx context.Context, tx *sql.Tx, pos int64) error {
			_, err := tx.ExecContext(ctx, "SELECT pg_notify('"+Channel+"', $1)", strconv.FormatInt(pos, 10))
			return err
		},
		DeferForeignKeys: "SET CONSTRAINTS ALL DEFERRED",
		// An asynchronous commit: the server's next synced commit (its log
		// is flushed in order) makes it durable.
		SyncOffInTx: "SET LOCAL synchronous_commit = off",
		// Every update writes a row version to the log, so its commit
		// waits for the log's flush, which covers the commits before it.
		Flush: func(ctx context.Context, tx *sql.Tx, stream string) error {
			_, err := tx.ExecContext(ctx, "UPDATE streams SET head_seq = head_seq WHERE id = $1", stream)
			return err
		},
		CheckForeignKeys: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "SET CONSTRAINTS ALL IMMEDIATE")
			return err
		},
		Greatest:    "greatest",
		Contains:    func(h, n string) string { return "strpos(" + h + ", " + n + ") > 0" },
		RowID:       "rowid",
		Unindexed:   func(c string) string { return c },
		TableExists: "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?",
	}
}

// Open connects to the PostgreSQL database at rawURL and brings its schema
// up to date. A database a newer ducklm migrated is refused untouched.
func Open(ctx context.Context, rawURL string) (*store.DB, error) {
	if !IsURL(rawURL) {
		return nil, backend.Errorf(backend.EINVALID, "%q is not a PostgreSQL address; it starts with postgres://", Redact(rawURL))
	}
	name := Redact(rawURL)
	if _, err := pgconn.ParseConfig(rawURL); err != nil {
		return nil, backend.Errorf(backend.EINVALID, "%s is not a PostgreSQL address ducklm can read", name)
	}
	sqlDB, err := sql.Open("pgx", rawURL)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINVALID, "%s is not a PostgreSQL address ducklm can read", name)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		sqlDB.Close()
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot reach PostgreSQL at %s: %s. Check that the server runs and accepts this user", name, pgMessage(err))
	}
	sqlDB.SetMaxOpenConns(16)
	sqlDB.SetMaxIdleConns(4)
	sqlDB.SetConnMaxIdleTime(30 * time.Second)
	d := Dialect()
	if err := migrate(ctx, sqlDB, d, name); err != nil {
		sqlDB.Close()
		return nil, err
	}
	gdb, err := gorm.Open(gormpg.New(gormpg.Config{Conn: sqlDB}), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
	})
	if err != nil {
		sqlDB.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot open %s", name)
	}
	return store.Attach(gdb, sqlDB, d, name), nil
}

// Ping checks that rawURL names a PostgreSQL server ducklm can log in to, and
// says which schema version it holds (0 for a database ducklm never used).
func Ping(ctx context.Context, rawURL string) (int64, error) {
	if !IsURL(rawURL) {
		return 0, backend.Errorf(backend.EINVALID, "%q is not a PostgreSQL address; it starts with postgres://", Redact(rawURL))
	}
	name := Redact(rawURL)
	sqlDB, err := sql.Open("pgx", rawURL)
	if err != nil {
		return 0, backend.Wrap(err, backend.EINVALID, "%s is not a PostgreSQL address ducklm can read", name)
	}
	defer sqlDB.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		return 0, backend.Wrap(err, backend.EUNAVAILABLE, "cannot reach PostgreSQL at %s: %s", name, pgMessage(err))
	}
	return store.StoredVersion(ctx, sqlDB, Dialect())
}

func migrate(ctx context.Context, sqlDB *sql.DB, d *store.Dialect, name string) error {
	have, err := store.StoredVersion(ctx, sqlDB, d)
	if err != nil {
		return err
	}
	latest := store.LatestSchemaVersion()
	if have > latest {
		return store.NewerSchema(name, have, latest)
	}
	if have == latest {
		return nil
	}
	// Several processes of a team may start on a new database at once: the
	// session lock lets one migrate while the others wait.
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot load the schema migrations")
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.Postgres, goose.WithSessionLocker(locker))
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot load the schema migrations")
	}
	if _, err := p.Up(ctx); err != nil {
		var partial *goose.PartialError
		if errors.As(err, &partial) && partial.Failed != nil {
			return backend.Wrap(err, backend.EINTERNAL, "schema migration %d of %s failed (the database keeps the previous schema)", partial.Failed.Source.Version, name)
		}
		return backend.Wrap(err, backend.EINTERNAL, "schema migration of %s failed", name)
	}
	return nil
}

// pgMessage is the server's or the connection's own sentence, without the
// driver's prefix.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return ce.Unwrap().Error()
	}
	return err.Error()
}

// The pgx driver is registered by its stdlib package.
var _ = stdlib.GetDefaultDriver
