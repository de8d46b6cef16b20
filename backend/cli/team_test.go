package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/cli"
	"ducklm/backend/service"
	"ducklm/backend/store/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// On a team's database, `ducklm approve` on another installation answers a
// run this one drives and says that the run waits for its owner; the owner
// drives it on when it resumes it.
func TestApproveFromAnotherInstallationSaysWhoDrivesTheRun(t *testing.T) {
	t.Setenv(service.DatabaseURLEnv, pgtest.URL(t))
	dirA := taskHome(t)
	args := []string{"run", "$ echo driven-by-a > a.txt", "--approve", "ask"}
	r := ducklmIn(t, "", args...)
	requireCode(t, r, cli.ExitOK, args...)
	runID := startedRun(t, r)
	m := approveHint.FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)

	dirB := home(t) // another installation, on the same database
	require.NotEqual(t, dirA, dirB)
	r = ducklmIn(t, "", "approve", m[1])
	requireCode(t, r, cli.ExitOK, "approve", m[1])
	host, _ := os.Hostname()
	require.Contains(t, r.stderr, "step step-1 of run "+runID+" approved. This run is driven by ducklm on "+host+"; it goes on when that installation is running.")
	runs := runsJSON(t)
	require.Len(t, runs, 1)
	require.False(t, runs[0].Run.Status.Terminal(), "B does not drive A's run")
	require.Zero(t, runs[0].StepsDone)
	r = ducklm(t, "resume", runID)
	requireCode(t, r, cli.ExitUsage, "resume", runID)
	require.Contains(t, r.stderr, "is driven by ducklm on "+host+"; resume it there")

	t.Setenv("DUCKLM_HOME", dirA)
	r = ducklmIn(t, "", "resume", runID)
	requireCode(t, r, cli.ExitOK, "resume", runID)
	runs = runsJSON(t)
	require.Equal(t, backend.RunCompleted, runs[0].Run.Status)
	data, err := os.ReadFile(filepath.Join(dirA, "workspaces", runID, "a.txt"))
	require.NoError(t, err, "the step ran in A's workspace")
	require.Equal(t, "driven-by-a\n", string(data))
}
