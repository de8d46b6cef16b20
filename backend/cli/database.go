package cli

import (
	"os"
	"strings"

	"ducklm/backend"
	"ducklm/backend/service"
	"ducklm/backend/store/postgres"
)

// TakeDatabaseFlag removes a leading --database-url URL (or
// --database-url=URL) from args and puts it in $DUCKLM_DATABASE_URL, so the
// window and every command open the shared PostgreSQL database instead of
// the data directory's SQLite file. A URL that is not postgres:// is an
// EINVALID error.
func TakeDatabaseFlag(args []string) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	var url string
	switch {
	case args[0] == "--database-url":
		if len(args) < 2 {
			return nil, backend.Errorf(backend.EINVALID, "--database-url needs an address: --database-url postgres://user@host/db")
		}
		url, args = args[1], args[2:]
	case strings.HasPrefix(args[0], "--database-url="):
		url, args = strings.TrimPrefix(args[0], "--database-url="), args[1:]
	default:
		if u := os.Getenv(service.DatabaseURLEnv); u != "" && !postgres.IsURL(u) {
			return nil, backend.Errorf(backend.EINVALID, "%s=%q is not a PostgreSQL address; it starts with postgres://", service.DatabaseURLEnv, postgres.Redact(u))
		}
		return args, nil
	}
	if !postgres.IsURL(url) {
		return nil, backend.Errorf(backend.EINVALID, "--database-url %q is not a PostgreSQL address; it starts with postgres://", postgres.Redact(url))
	}
	os.Setenv(service.DatabaseURLEnv, url)
	return args, nil
}
