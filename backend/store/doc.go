// Package store is ducklm's durable state, one set of statements for both
// databases it runs on: the event ledger, the world, run and checkpoint
// registries, memories, installations and the team's workers. What differs
// between the databases is the Dialect (placeholders, the ledger's lock,
// notifications of commits, foreign-key checks); everything else is written
// once.
//
// The embedded default is one SQLite file (sqlite.go: Open), through GORM and
// modernc.org/sqlite's driver (github.com/libtnb/sqlite is the GORM
// dialector on it); its opener owns the connection settings (WAL,
// synchronous=FULL, foreign keys, busy timeout) and applies the numbered
// migrations embedded in ducklm/migrations. A team's shared PostgreSQL is
// opened by backend/store/postgres, which attaches its pool here (Attach).
// The store never runs AutoMigrate and holds no policy: it stores and reads
// what the runtime tells it to.
//
// Hot paths (appending and reading events) use database/sql on the same
// connection pool as GORM, because one GORM Create per row caps far below
// what a durable event ledger needs. On SQLite an event's payload of 128 B
// or more is stored as a zstd frame with ducklm's preset dictionary when
// that is smaller (payload.go); every read decodes it, so nothing above the
// store ever sees a frame.
package store
