package cli_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/cli"
	"ducklm/backend/service"
	"ducklm/backend/settings"
)

func TestTakeDatabaseFlag(t *testing.T) {
	t.Setenv(service.DatabaseURLEnv, "")
	args, err := cli.TakeDatabaseFlag([]string{"--database-url", "postgres://u@h/db", "runs"})
	require.NoError(t, err)
	require.Equal(t, []string{"runs"}, args)
	require.Equal(t, "postgres://u@h/db", os.Getenv(service.DatabaseURLEnv))

	args, err = cli.TakeDatabaseFlag([]string{"--database-url=postgresql://u@h/other"})
	require.NoError(t, err)
	require.Empty(t, args)
	require.Equal(t, "postgresql://u@h/other", os.Getenv(service.DatabaseURLEnv))

	_, err = cli.TakeDatabaseFlag([]string{"--database-url", "mysql://u:pw@h/db", "runs"})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.NotContains(t, backend.ErrorMessage(err), "pw")
	_, err = cli.TakeDatabaseFlag([]string{"--database-url"})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))

	t.Setenv(service.DatabaseURLEnv, "/tmp/not-a-url")
	_, err = cli.TakeDatabaseFlag([]string{"runs"})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

// A worker and --on-workers need the team's database: without it, one
// sentence and exit 2, before anything is opened.
func TestWorkersNeedTheTeamDatabase(t *testing.T) {
	home(t)
	t.Setenv(service.DatabaseURLEnv, "")
	r := ducklm(t, "worker")
	requireCode(t, r, cli.ExitUsage, "worker")
	require.Contains(t, r.stderr, "DUCKLM_DATABASE_URL")
	r = ducklm(t, "worker", "--slots", "0")
	requireCode(t, r, cli.ExitUsage, "worker", "--slots", "0")
	r = ducklm(t, "world", "deliberate", "run_0123456789abcdef0123456789abcdef", "--on-workers", "4")
	requireCode(t, r, cli.ExitUsage, "world", "deliberate")
	require.Contains(t, r.stderr, "DUCKLM_DATABASE_URL")
	r = ducklm(t, "world", "run", "run_0123456789abcdef0123456789abcdef", "--steps", "10", "--on-workers")
	requireCode(t, r, cli.ExitUsage, "world", "run")
	require.Contains(t, r.stderr, "DUCKLM_DATABASE_URL")
}

// Settings → Database counts for --on-workers as the variable does: with
// the address saved there, world run and world deliberate go to that
// server (here one nobody answers at, named in the sentence) instead of
// saying the team's database is missing.
func TestOnWorkersReadsTheDatabaseChosenInSettings(t *testing.T) {
	dir := home(t)
	t.Setenv(service.DatabaseURLEnv, "")
	require.NoError(t, settings.SaveDatabase(dir, "postgres://ducklm@127.0.0.1:1/ducklm"))
	for _, args := range [][]string{
		{"world", "run", "run_0123456789abcdef0123456789abcdef", "--steps", "10", "--on-workers"},
		{"world", "deliberate", "run_0123456789abcdef0123456789abcdef", "--on-workers", "4"},
	} {
		r := ducklm(t, args...)
		require.NotContains(t, r.stderr, "needs the team's PostgreSQL", args)
		require.Contains(t, r.stderr, "127.0.0.1:1", args)
	}
}
