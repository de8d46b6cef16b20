package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"ducklm/backend"
)

// RecordInstallation notes that installation id (host, for people) opened
// this database at now: its first row, or its last-seen time. It is not a
// ledger write and takes no ledger lock.
func (db *DB) RecordInstallation(ctx context.Context, id, host string, now time.Time) error {
	_, err := db.SQL.ExecContext(ctx, db.Rebind(`INSERT INTO installations (id, host, first_seen_at, last_seen_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET host = excluded.host, last_seen_at = excluded.last_seen_at`),
		id, host, millis(now), millis(now))
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot record installation %s on the database", id)
	}
	return nil
}

// InstallationKnown reports whether installation id has ever opened this
// database.
func (db *DB) InstallationKnown(ctx context.Context, id string) (bool, error) {
	var one int
	err := db.SQL.QueryRowContext(ctx, db.Rebind(`SELECT 1 FROM installations WHERE id = ?`), id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read the installations on the database")
	}
	return true, nil
}
