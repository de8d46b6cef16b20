package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/api"
	"ducklm/backend/service"
	"ducklm/backend/store"
	"ducklm/backend/store/postgres"
	"ducklm/backend/store/postgres/pgtest"
)

// TestMain stops the throw-away PostgreSQL the Database field's tests started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const testPassword = "s3cret-Ünï'code"

func withoutUser(raw string) string {
	u, _ := url.Parse(raw)
	u.User = nil
	return u.String()
}

func TestTestConnectionAnswersWithASentence(t *testing.T) {
	a := setup(t)
	dbURL := pgtest.URL(t)
	pwURL := pgtest.PasswordURL(t, dbURL, testPassword)
	plain, _ := postgres.WithoutPassword(pwURL)

	// An empty database, reached with the password typed apart.
	res, err := a.TestDatabase(api.DatabaseInput{Address: plain, Password: testPassword})
	require.NoError(t, err)
	require.True(t, res.OK, res.Message)
	require.Regexp(t, `^Reachable: PostgreSQL \d+\.\d+ at postgres://ducklm_password@127\.0\.0\.1:\d+/ducklm_test_\d+_\d+\?sslmode=disable\. Its database is empty; ducklm creates its tables \(schema \d+\) when it first starts on it\.$`, res.Message)
	require.NotEmpty(t, res.ServerVersion)
	require.Zero(t, res.SchemaVersion)

	// A database ducklm migrated: this ducklm's schema.
	db, err := postgres.Open(context.Background(), dbURL)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	admin, err := sql.Open("pgx", dbURL)
	require.NoError(t, err)
	defer admin.Close()
	// The superuser migrated: the password role sees its tables once granted
	// (a team's own role owns them).
	_, err = admin.Exec(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ` + pgtest.PasswordRole)
	require.NoError(t, err)
	res, err = a.TestDatabase(api.DatabaseInput{Address: pwURL})
	require.NoError(t, err)
	require.True(t, res.OK, res.Message)
	latest := store.LatestSchemaVersion()
	require.Contains(t, res.Message, fmt.Sprintf(", ducklm schema %d, this ducklm's.", latest))
	require.EqualValues(t, latest, res.SchemaVersion)

	// A wrong password: said as such, and no password in the sentence.
	res, err = a.TestDatabase(api.DatabaseInput{Address: plain, Password: "wrong-" + testPassword})
	require.NoError(t, err)
	require.False(t, res.OK)
	require.Equal(t, "PostgreSQL at "+plain+" refused the password of user ducklm_password; check the password", res.Message)

	// A server nobody answers at.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	dead := fmt.Sprintf("postgres://ducklm@127.0.0.1:%d/ducklm?sslmode=disable", port)
	res, err = a.TestDatabase(api.DatabaseInput{Address: dead, Password: testPassword})
	require.NoError(t, err)
	require.False(t, res.OK)
	require.Equal(t, fmt.Sprintf("PostgreSQL at %s cannot be reached: nothing accepts connections on 127.0.0.1:%d; check the host and port, and that the server runs", dead, port), res.Message)
	// localhost is tried at each of its addresses: still one sentence,
	// not the driver's error once per address.
	deadLocal := fmt.Sprintf("postgres://ducklm@localhost:%d/ducklm", port)
	res, err = a.TestDatabase(api.DatabaseInput{Address: deadLocal, Password: testPassword})
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("PostgreSQL at %s cannot be reached: nothing accepts connections on localhost:%d; check the host and port, and that the server runs", deadLocal, port), res.Message)
	// A host name nobody knows.
	unknown := "postgres://ducklm@no-such-host.invalid:5432/ducklm"
	res, err = a.TestDatabase(api.DatabaseInput{Address: unknown, Password: testPassword})
	require.NoError(t, err)
	require.Equal(t, "PostgreSQL at "+unknown+" cannot be reached: the host name no-such-host.invalid is not known here; check the address", res.Message)

	// A database that does not exist.
	u, _ := url.Parse(dbURL)
	u.Path = "/nowhere"
	res, err = a.TestDatabase(api.DatabaseInput{Address: u.String()})
	require.NoError(t, err)
	require.False(t, res.OK)
	require.Equal(t, "PostgreSQL at "+u.String()+" has no database nowhere; create it first (CREATE DATABASE nowhere OWNER postgres)", res.Message)

	// A newer ducklm's schema: refused with what to do, the database untouched.
	_, err = admin.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, latest+1)
	require.NoError(t, err)
	res, err = a.TestDatabase(api.DatabaseInput{Address: dbURL})
	require.NoError(t, err)
	require.False(t, res.OK)
	require.Contains(t, res.Message, fmt.Sprintf("holds ducklm schema %d, newer than this ducklm's %d: a newer ducklm uses it. Upgrade ducklm", latest+1, latest))
	require.EqualValues(t, latest+1, res.SchemaVersion)

	// Not a PostgreSQL address at all: an error sentence.
	_, err = a.TestDatabase(api.DatabaseInput{Address: "mysql://db/x"})
	require.EqualError(t, err, `"mysql://db/x" is not a PostgreSQL address: it starts with postgres://, e.g. postgres://ducklm@db.example:5432/ducklm (or leave it empty for this machine's SQLite database)`)

	// Empty: this machine's SQLite, nothing to test.
	res, err = a.TestDatabase(api.DatabaseInput{})
	require.NoError(t, err)
	require.True(t, res.OK)
	require.Contains(t, res.Message, "this machine's SQLite database")
}

func TestSavedDatabaseOpensAtTheNextStartAndItsPasswordNeverComesBack(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	t.Setenv(service.DatabaseURLEnv, "")
	dir := t.TempDir()
	dbURL := pgtest.URL(t)
	pwURL := pgtest.PasswordURL(t, dbURL, testPassword)
	plain, _ := postgres.WithoutPassword(pwURL)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()

	svc, err := service.Open(ctx, dir)
	require.NoError(t, err)
	a := api.New(svc, nil, log)
	saved, err := a.SaveDatabase(api.DatabaseInput{Address: plain, Password: testPassword})
	require.NoError(t, err)
	require.Equal(t, "Saved. ducklm opens "+plain+" at its next start; until then this window keeps "+filepath.Join(dir, "ducklm.db")+".", saved.Message)
	require.Equal(t, plain, saved.Database.Address)
	require.True(t, saved.Database.PasswordStored)
	require.False(t, saved.Database.Shared)
	view, err := a.GetDatabase()
	require.NoError(t, err)
	for _, v := range []any{saved, view} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.NotContains(t, string(b), "s3cret", "the password never goes back to a screen")
	}
	fi, err := os.Stat(filepath.Join(dir, "database-url"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	settingsJSON, _ := os.ReadFile(filepath.Join(dir, "settings.json"))
	require.NotContains(t, string(settingsJSON), "s3cret")

	// Saving the address again with the password left empty keeps it.
	_, err = a.SaveDatabase(api.DatabaseInput{Address: plain})
	require.NoError(t, err)
	res, err := a.TestDatabase(api.DatabaseInput{Address: plain})
	require.NoError(t, err)
	require.True(t, res.OK, "the stored password is used when none is typed: %s", res.Message)
	require.NoError(t, svc.Close())

	// The next start opens the team's database, as the password role.
	svc, err = service.Open(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, service.DatabaseFromSettings, svc.Database().Source)
	require.True(t, svc.Shared())
	a = api.New(svc, nil, log)
	view, err = a.GetDatabase()
	require.NoError(t, err)
	require.Equal(t, api.DatabaseView{Address: plain, PasswordStored: true, InUse: plain, Shared: true,
		Local: &api.LocalDataView{Path: filepath.Join(dir, "ducklm.db"), Exists: true}}, view)

	// Back to SQLite: the next start says so.
	saved, err = a.SaveDatabase(api.DatabaseInput{})
	require.NoError(t, err)
	require.Equal(t, "this machine's SQLite database in "+dir, saved.Database.NextStart)
	require.Contains(t, saved.Message, "Saved. ducklm opens this machine's SQLite database in "+dir+" at its next start")
	require.NoError(t, svc.Close())
	_, err = os.Stat(filepath.Join(dir, "database-url"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestTheEnvironmentWinsOverTheDatabaseField(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	dir := t.TempDir()
	dbURL := pgtest.URL(t)
	t.Setenv(service.DatabaseURLEnv, dbURL)
	svc, err := service.Open(context.Background(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	a := api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	view, err := a.GetDatabase()
	require.NoError(t, err)
	require.Equal(t, "DUCKLM_DATABASE_URL", view.Override)
	require.Equal(t, dbURL, view.OverrideAddress)
	require.True(t, view.Shared)
	require.Empty(t, view.NextStart, "the variable chooses the next start too")

	other := withoutUser(dbURL)
	saved, err := a.SaveDatabase(api.DatabaseInput{Address: other})
	require.NoError(t, err)
	require.Equal(t, "Saved, but DUCKLM_DATABASE_URL chooses the database ("+dbURL+"); the saved address applies once it is unset.", saved.Message)
	require.Equal(t, other, saved.Database.Address)
}
