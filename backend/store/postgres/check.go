package postgres

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"ducklm/backend"
	"ducklm/backend/store"
)

// Probe is what a connection test learnt of a PostgreSQL server: its
// version and the ducklm schema its database holds, without changing it.
type Probe struct {
	// ServerVersion is the server's own version string ("15.8 (Debian …)").
	ServerVersion string
	// SchemaVersion is the ducklm schema the database holds, 0 when ducklm
	// never used it; LatestSchemaVersion is this build's.
	SchemaVersion       int64
	LatestSchemaVersion int64
}

// checkTime bounds a connection test: an address nobody answers at is a
// sentence after this long, not a window that waits.
const checkTime = 10 * time.Second

// Check connects to rawURL, reads the server's version and the schema
// version of the database, and changes nothing. Each way it can fail is a
// sentence that names the address without its password and what to do: a
// refused password, a missing database, a server nobody answers at, a
// database a newer ducklm migrated (ECONFLICT, with the Probe filled in).
func Check(ctx context.Context, rawURL string) (Probe, error) {
	p := Probe{LatestSchemaVersion: store.LatestSchemaVersion()}
	if !IsURL(rawURL) {
		return p, backend.Errorf(backend.EINVALID, "%q is not a PostgreSQL address; it starts with postgres://", Redact(rawURL))
	}
	name, _ := WithoutPassword(rawURL)
	cfg, err := pgconn.ParseConfig(rawURL)
	if err != nil {
		return p, backend.Errorf(backend.EINVALID, "%s is not a PostgreSQL address ducklm can read", name)
	}
	sqlDB, err := sql.Open("pgx", rawURL)
	if err != nil {
		return p, backend.Wrap(err, backend.EINVALID, "%s is not a PostgreSQL address ducklm can read", name)
	}
	defer sqlDB.Close()
	ctx, cancel := context.WithTimeout(ctx, checkTime)
	defer cancel()
	if err := sqlDB.QueryRowContext(ctx, "SHOW server_version").Scan(&p.ServerVersion); err != nil {
		return p, connectError(ctx, err, name, cfg)
	}
	if p.SchemaVersion, err = store.StoredVersion(ctx, sqlDB, Dialect()); err != nil {
		return p, backend.Wrap(err, backend.EUNAVAILABLE, "PostgreSQL %s at %s answered, but its schema version could not be read: %s",
			p.ServerVersion, name, pgMessage(err))
	}
	if p.SchemaVersion > p.LatestSchemaVersion {
		return p, backend.Errorf(backend.ECONFLICT,
			"PostgreSQL %s at %s holds ducklm schema %d, newer than this ducklm's %d: a newer ducklm uses it. Upgrade ducklm before pointing it there (ducklm would refuse it, untouched)",
			p.ServerVersion, name, p.SchemaVersion, p.LatestSchemaVersion)
	}
	return p, nil
}

// connectError turns a failed first query into the sentence a person needs.
func connectError(ctx context.Context, err error, name string, cfg *pgconn.Config) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01":
			return backend.Wrap(err, backend.EINVALID, "PostgreSQL at %s refused the password of user %s; check the password", name, cfg.User)
		case "28000":
			return backend.Wrap(err, backend.EINVALID, "PostgreSQL at %s does not let user %s in: %s. Ask its administrator (pg_hba.conf)", name, cfg.User, pe.Message)
		case "3D000":
			return backend.Wrap(err, backend.ENOTFOUND, "PostgreSQL at %s has no database %s; create it first (CREATE DATABASE %s OWNER %s)", name, cfg.Database, cfg.Database, cfg.User)
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return backend.Wrap(err, backend.EUNAVAILABLE, "PostgreSQL at %s did not answer within %s; check the host and port, and that nothing blocks the way", name, checkTime)
	}
	// One sentence, not the driver's error: pgx tries each address of a
	// host (localhost is two) and repeats its dial error for each.
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return backend.Wrap(err, backend.EUNAVAILABLE, "PostgreSQL at %s cannot be reached: the host name %s is not known here; check the address", name, cfg.Host)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return backend.Wrap(err, backend.EUNAVAILABLE, "PostgreSQL at %s cannot be reached: nothing accepts connections on %s; check the host and port, and that the server runs",
			name, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	}
	msg, _, _ := strings.Cut(pgMessage(err), "\n")
	return backend.Wrap(err, backend.EUNAVAILABLE, "PostgreSQL at %s cannot be reached: %s; check that the server runs and accepts connections there", name, msg)
}

// WithoutPassword returns rawURL with its password removed, and the
// password; a URL that cannot be read comes back as it was.
func WithoutPassword(rawURL string) (string, string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL, ""
	}
	pw, _ := u.User.Password()
	u.User = url.User(u.User.Username())
	return u.String(), pw
}

// WithPassword returns rawURL with password as its password (when the
// URL names a user, or else as user postgres's).
func WithPassword(rawURL, password string) string {
	u, err := url.Parse(rawURL)
	if err != nil || password == "" {
		return rawURL
	}
	user := "postgres"
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username()
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}
