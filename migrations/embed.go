// Package migrations holds ducklm's schema as numbered SQL files, embedded in
// the binary and applied in order at start. The schema lives only here: no
// AutoMigrate ever runs on a user's database.
package migrations

import "embed"

// FS holds the numbered migration files (NNNNN_name.sql, goose format).
//
//go:embed *.sql
var FS embed.FS
