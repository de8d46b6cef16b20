package cli_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
	"ducklm/backend/service"
	"ducklm/backend/store/postgres"
	"ducklm/backend/store/postgres/pgtest"
)

// On a team's database, `ducklm cancel` of a run another process drives
// records a request that process acts on: it says so, and does not say the
// run is cancelled while it still runs. Once no process drives it, the
// cancel ends it at once. (The first cancel waits the ~10 s Cancel gives a
// driving process to act.)
func TestCancelOfARunDrivenElsewhereSaysItIsRequested(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv(service.DatabaseURLEnv, url)
	taskHome(t)
	args := []string{"run", "$ echo never", "--approve", "ask"}
	r := ducklmIn(t, "", args...)
	requireCode(t, r, cli.ExitOK, args...)
	runID := startedRun(t, r)

	// A's process drives the run (it holds the run's lock) but is slow to
	// act, or gone without the server noticing yet.
	locks := postgres.NewRunLocks(url)
	defer locks.Close()
	release, held, err := locks.Claim(context.Background(), runID, nil)
	require.NoError(t, err)
	require.True(t, held)

	home(t) // another installation, on the same database
	r = ducklm(t, "cancel", runID)
	requireCode(t, r, cli.ExitOK, "cancel", runID)
	host, _ := os.Hostname()
	require.Equal(t, "run "+runID+": cancel requested; ducklm on "+host+", which drives it, cancels it when it acts on the request\n", r.stdout)
	runs := runsJSON(t)
	require.Len(t, runs, 1)
	require.False(t, runs[0].Run.Status.Terminal(), "the run is not cancelled yet")

	release()
	r = ducklm(t, "cancel", runID)
	requireCode(t, r, cli.ExitOK, "cancel", runID)
	require.Equal(t, "run "+runID+" cancelled\n", r.stdout)
	require.True(t, runsJSON(t)[0].Run.Status.Terminal())
}
