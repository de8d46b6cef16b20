// Package migrations holds ducklm's schema as numbered SQL files, embedded in
// the binary and applied in order at start. The schema lives only here: no
// AutoMigrate ever runs on a user's database. The files at the top are
// SQLite's; postgres/ holds the same schema, version for version, written
// for PostgreSQL (a test checks that both list the same versions).
package migrations

import (
	"embed"
	"io/fs"
)

// FS holds the numbered SQLite migration files (NNNNN_name.sql, goose format).
//
//go:embed *.sql
var FS embed.FS

//go:embed postgres/*.sql
var postgresFS embed.FS

// Postgres holds the numbered PostgreSQL migration files, at its root.
var Postgres = mustSub(postgresFS, "postgres")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the directory is embedded above; this cannot fail
	}
	return sub
}
