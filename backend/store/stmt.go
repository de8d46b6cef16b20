package store

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// The hot statements of appends (the ledger's and the run row's) are
// prepared once per connection instead of parsed again on every commit:
// sqlite3_prepare was a fifth of a world run's append. database/sql keeps a
// prepared statement per connection it ran on and re-prepares only on a new
// connection.

// stmt returns query prepared on the pool, preparing it on first use.
func (db *DB) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := db.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := db.SQL.PrepareContext(ctx, db.Rebind(query))
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

// txExec runs a prepared query inside tx.
func (db *DB) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	s, err := db.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, s).ExecContext(ctx, args...)
}

// txQueryRow runs a prepared query inside tx.
func (db *DB) txQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	s, err := db.stmt(ctx, query)
	if err != nil {
		return tx.QueryRowContext(ctx, db.Rebind(query), args...) // reports the same error
	}
	return tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
}

// queryRow runs a prepared query on the pool (a dedup lookup a step).
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := db.stmt(ctx, query)
	if err != nil {
		return db.SQL.QueryRowContext(ctx, db.Rebind(query), args...) // reports the same error
	}
	return s.QueryRowContext(ctx, args...)
}

// sqlTx returns the transaction a GORM handle from onTx runs on.
func sqlTx(gtx *gorm.DB) (*sql.Tx, bool) {
	tx, ok := gtx.Statement.ConnPool.(*sql.Tx)
	return tx, ok
}
