package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Dialect is what differs between the SQL databases this store runs on:
// SQLite (the embedded default) and PostgreSQL (a team's shared ledger,
// opened by backend/store/postgres). The store's statements are written once with
// ? placeholders and portable SQL; the few places that cannot be portable
// ask the dialect.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// Numbered placeholders ($1, $2…) instead of ?.
	Numbered bool
	// UniqueViolation reports whether err is a violation of the unique
	// constraint on table.column.
	UniqueViolation func(err error, table, column string) bool
	// ForeignKeyViolation reports whether err is a foreign-key violation.
	ForeignKeyViolation func(err error) bool
	// LockLedger serialises the ledger's writers across processes for the
	// rest of a transaction (gap-free seqs and positions in commit order).
	// Nil when the database has one writer at a time anyway (SQLite).
	LockLedger func(ctx context.Context, tx *sql.Tx) error
	// NotifyCommit tells other processes, at the commit of tx, that the
	// ledger grew to position pos. Nil where no other process follows.
	NotifyCommit func(ctx context.Context, tx *sql.Tx, pos int64) error
	// DeferForeignKeys makes the rest of a transaction check foreign keys at
	// commit.
	DeferForeignKeys string
	// CheckForeignKeys checks the deferred foreign keys before the commit and
	// returns a violation as an error, leaving the transaction to roll back
	// (SQLite keeps a transaction open when its COMMIT fails on one, and
	// database/sql then can no longer roll it back).
	CheckForeignKeys func(ctx context.Context, tx *sql.Tx) error
	// Greatest is the two-argument maximum function.
	Greatest string
	// Contains formats a test that haystack contains needle (SQL expressions).
	Contains func(haystack, needle string) string
	// RowID is the column that numbers a table's rows in insertion order.
	RowID string
	// Unindexed wraps a column so that the planner does not pick its index
	// (SQLite's unary +); identity where the planner needs no hint.
	Unindexed func(column string) string
	// TableExists is a query with one placeholder, the table name, that
	// counts tables of that name.
	TableExists string
	// SyncOff and SyncOn turn a connection's durable commits off and back
	// on, around a transaction whose context defers its sync
	// (backend.DeferSync). Empty where SyncOffInTx does it.
	SyncOff, SyncOn string
	// SyncOffInTx makes the rest of a transaction commit without waiting
	// for the disk (for a transaction whose context defers its sync).
	SyncOffInTx string
	// Flush writes, in tx, the least that makes its commit synced: a synced
	// commit makes every commit before it durable (Ledger.Flush). stream
	// names a stream that exists.
	Flush func(ctx context.Context, tx *sql.Tx, stream string) error

	rebound sync.Map // query text → rebound text
}

// SQLiteDialect is the dialect of the embedded SQLite database.
func SQLiteDialect() *Dialect {
	return &Dialect{
		Name: "sqlite",
		UniqueViolation: func(err error, table, column string) bool {
			msg := err.Error()
			return strings.Contains(msg, "UNIQUE constraint failed") && strings.Contains(msg, table+"."+column)
		},
		ForeignKeyViolation: func(err error) bool { return strings.Contains(err.Error(), "FOREIGN KEY") },
		DeferForeignKeys:    "PRAGMA defer_foreign_keys = ON",
		// In WAL mode a NORMAL commit is written to the log unsynced; the
		// next FULL commit's sync of the log makes it durable too.
		SyncOff: "PRAGMA synchronous = NORMAL",
		SyncOn:  "PRAGMA synchronous = FULL",
		// A commit that writes no page does not sync, and a row updated to
		// what it holds writes none. The header's user version (which
		// ducklm does not use), written back as it is, always writes one.
		Flush: func(ctx context.Context, tx *sql.Tx, _ string) error {
			var v int64
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.FormatInt(v, 10))
			return err
		},
		CheckForeignKeys: func(ctx context.Context, tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, "PRAGMA foreign_key_check")
			if err != nil {
				return err
			}
			defer rows.Close()
			if rows.Next() {
				var table, parent string
				var rowid sql.NullInt64
				var fk int
				if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
					return err
				}
				return fmt.Errorf("FOREIGN KEY constraint failed: a row of %s refers to a missing row of %s", table, parent)
			}
			return rows.Err()
		},
		Greatest:    "max",
		Contains:    func(h, n string) string { return "instr(" + h + ", " + n + ") > 0" },
		RowID:       "rowid",
		Unindexed:   func(c string) string { return "+" + c },
		TableExists: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
	}
}

// Rebind returns query with its ? placeholders in the dialect's form. ?N
// (a numbered SQLite parameter) becomes $N; a ? inside a quoted literal is
// left alone.
func (d *Dialect) Rebind(query string) string {
	if !d.Numbered {
		return query
	}
	if q, ok := d.rebound.Load(query); ok {
		return q.(string)
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(query[i+1 : j])
				i = j - 1
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	d.rebound.Store(query, out)
	return out
}

// Dialect returns the dialect of the database.
func (db *DB) Dialect() *Dialect { return db.dialect }

// Rebind returns query with placeholders in the database's form, for
// statements run on db.SQL directly.
func (db *DB) Rebind(query string) string { return db.dialect.Rebind(query) }

// isUniqueViolation reports whether err violates the unique constraint on
// table.column.
func (db *DB) isUniqueViolation(err error, table, column string) bool {
	return err != nil && db.dialect.UniqueViolation(err, table, column)
}

// notifyCommit announces the ledger's new end where the dialect can.
func (db *DB) notifyCommit(ctx context.Context, tx *sql.Tx, pos int64) error {
	if db.dialect.NotifyCommit == nil {
		return nil
	}
	return db.dialect.NotifyCommit(ctx, tx, pos)
}

// lockLedger takes the cross-process ledger lock where the dialect has one.
func (db *DB) lockLedger(ctx context.Context, tx *sql.Tx) error {
	if db.dialect.LockLedger == nil {
		return nil
	}
	return db.dialect.LockLedger(ctx, tx)
}
