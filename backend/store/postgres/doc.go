// Package postgres opens ducklm's store on PostgreSQL, for a team that
// shares one ledger: the same GORM models and statements as the embedded
// SQLite database (backend/store), with PostgreSQL's dialect, its own
// migrations (migrations/postgres, version for version the same schema) and
// what many processes writing at once need: appends serialised across
// processes by a transaction-scoped advisory lock, so every stream's seqs and
// the ledger's positions stay gap-free and in commit order.
//
// It owns the connection (pgx through database/sql), applies migrations
// under goose's session lock (several processes may start at once) and
// refuses a database a newer ducklm migrated. It holds no policy, and it
// never runs AutoMigrate.
package postgres
