// Package sqlite stores ducklm's durable state in one SQLite file through
// GORM and modernc.org/sqlite's driver (github.com/libtnb/sqlite is the GORM
// dialector on it): the event ledger, and the registries later issues add. It owns the connection settings (WAL, synchronous=FULL,
// foreign keys, busy timeout) and applies the numbered migrations embedded in
// ducklm/migrations at open. It never runs AutoMigrate and holds no policy:
// it stores and reads what the runtime tells it to.
//
// Hot paths (appending and reading events) use database/sql on the same
// connection pool as GORM, because one GORM Create per row caps far below
// what a durable event ledger needs.
package sqlite
