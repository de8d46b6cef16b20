package api_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/api"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
	"ducklm/backend/store/postgres/pgtest"
)

func fileDigest(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// TestATeamInstallationCopiesItsLocalRunsAndWorldsThroughBundles: after the
// switch to a team's PostgreSQL, the Database field says where the local
// data is and what it holds; "Copy my local runs and worlds" brings each
// local lineage over as a bundle through the import path (a second copy
// adds nothing), and the local file is byte for byte as it was.
func TestATeamInstallationCopiesItsLocalRunsAndWorldsThroughBundles(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	t.Setenv(service.DatabaseURLEnv, "")
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()

	// On this machine's database: a forked world and a task waiting for its approval.
	svc, err := service.Open(ctx, dir)
	require.NoError(t, err)
	a := api.New(svc, nil, log)
	view, err := a.GetDatabase()
	require.NoError(t, err)
	require.Nil(t, view.Local, "on the local database there is no other local data")
	_, err = a.CopyLocalToTeam("")
	require.EqualError(t, err, "ducklm uses this machine's database "+filepath.Join(dir, "ducklm.db")+" now; there is no team database to copy it to")
	parent, child := grid(t, a)
	run, err := a.SubmitTask(api.TaskInput{ApprovalMode: "ask_every", Workspace: t.TempDir(),
		Plan: `{"nodes":[{"id":"a","kind":"tool","tool":"file_read","args":{"path":"x"}}]}`})
	require.NoError(t, err)
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := a.RunDetail(run.ID)
		require.NoError(t, err)
		if len(d.Approvals) > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the task never asked for its approval")
		time.Sleep(20 * time.Millisecond)
	}
	teamURL := pgtest.URL(t)
	_, err = a.SaveDatabase(api.DatabaseInput{Address: teamURL})
	require.NoError(t, err)
	require.NoError(t, svc.Close())
	local := filepath.Join(dir, "ducklm.db")
	before := fileDigest(t, local)

	// The next start: the team's database, empty.
	svc, err = service.Open(ctx, dir)
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	require.True(t, svc.Shared())
	a = api.New(svc, nil, log)
	view, err = a.GetDatabase()
	require.NoError(t, err)
	require.Equal(t, &api.LocalDataView{Path: local, Exists: true, TaskRuns: 1, SimulatedWorlds: 2, Roots: 2, Unfinished: 1}, view.Local)
	runs, err := a.Runs()
	require.NoError(t, err)
	require.Empty(t, runs)

	// The waiting task run stays local, saying why; the worlds come over.
	copied, err := a.CopyLocalToTeam("copy-1")
	require.NoError(t, err)
	require.Len(t, copied.Lineages, 2)
	require.Equal(t, parent.World.ID, copied.Lineages[0].Root)
	require.True(t, copied.Lineages[0].Import.Imported, copied.Lineages[0].Import.Problem)
	require.True(t, copied.Lineages[0].Import.Report.Trusted, "signed by this installation's own key")
	require.Equal(t, "Not copied: this task run is still awaiting approval, and only finished runs are copied (a moving one would go on running in two places). "+
		"Switch back to this machine's database, let it finish or cancel it there, then copy again.", copied.Lineages[1].Problem)
	require.False(t, copied.Lineages[1].Import.Imported)
	require.EqualValues(t, 2, copied.Added.Worlds)
	require.EqualValues(t, 1, copied.Added.Forks)
	require.Regexp(t, `^Copied 1 of 2 lineages from `+regexp.QuoteMeta(local)+` \(left as it was\); the others say why below\. Added here: 2 worlds, 2 runs, 1 fork, \d+ checkpoints, \d+ events in 2 streams, \d+ blobs\.$`, copied.Message)
	d, err := a.WorldDetail(child.Run.ID)
	require.NoError(t, err)
	require.Equal(t, parent.World.ID, d.World.ParentWorldID)
	runs, err = a.Runs()
	require.NoError(t, err)
	require.Empty(t, runs)
	require.Equal(t, before, fileDigest(t, local), "the local database is left as it was")

	// Back on the local database, the run is approved and finishes; on the
	// team's again, a second copy brings it and adds nothing else.
	back, err := a.SaveDatabase(api.DatabaseInput{}) // Switch back
	require.NoError(t, err)
	require.Equal(t, "this machine's SQLite database in "+dir, back.Database.NextStart)
	require.NoError(t, svc.Close())
	svc, err = service.Open(ctx, dir)
	require.NoError(t, err)
	a = api.New(svc, nil, log)
	require.False(t, svc.Shared())
	require.NoError(t, a.CancelRun(run.ID))
	waitStatus(t, a, run.ID)
	_, err = a.SaveDatabase(api.DatabaseInput{Address: teamURL})
	require.NoError(t, err)
	require.NoError(t, svc.Close())
	svc, err = service.Open(ctx, dir)
	require.NoError(t, err)
	a = api.New(svc, nil, log)
	again, err := a.CopyLocalToTeam("")
	require.NoError(t, err)
	require.True(t, again.Lineages[0].Import.AlreadyPresent)
	require.True(t, again.Lineages[1].Import.Imported, again.Lineages[1].Problem)
	require.EqualValues(t, 1, again.Added.Worlds)
	runs, err = a.Runs()
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(runs, func(r runtime.RunSummary) bool { return r.Run.ID == run.ID }), "the finished task run is in the team's Runs list")
	third, err := a.CopyLocalToTeam("")
	require.NoError(t, err)
	require.Equal(t, "Everything in "+local+" was already in the team database (2 lineages): nothing added.", third.Message)
}

// waitStatus waits until run has ended.
func waitStatus(t *testing.T, a *api.API, run string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := a.RunDetail(run)
		require.NoError(t, err)
		if d.Run.Status.Terminal() {
			return
		}
		require.True(t, time.Now().Before(deadline), "run %s did not end: %s", run, d.Run.Status)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestATeamInstallationWithoutLocalDataSaysSo: a data directory that never
// had a local database says there is none, and copying says nothing to copy.
func TestATeamInstallationWithoutLocalDataSaysSo(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	t.Setenv(service.DatabaseURLEnv, pgtest.URL(t))
	dir := t.TempDir()
	svc, err := service.Open(context.Background(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	a := api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	view, err := a.GetDatabase()
	require.NoError(t, err)
	require.Equal(t, &api.LocalDataView{Path: filepath.Join(dir, "ducklm.db")}, view.Local)
	_, err = a.CopyLocalToTeam("")
	require.EqualError(t, err, "there is no database "+filepath.Join(dir, "ducklm.db"))
	_, err = os.Stat(filepath.Join(dir, "ducklm.db"))
	require.ErrorIs(t, err, os.ErrNotExist, "reading it created nothing")
}

// TestRestartIsTheWindowsAndTheBrowserIsToldWhatToDo: the desktop window
// restarts through what app/ gives the facade; a browser's page cannot,
// and says what the person does instead.
func TestRestartIsTheWindowsAndTheBrowserIsToldWhatToDo(t *testing.T) {
	a := setup(t)
	require.False(t, a.CanRestart())
	view, err := a.GetDatabase()
	require.NoError(t, err)
	require.False(t, view.CanRestart)
	require.EqualError(t, a.RestartApp(), "ducklm serve cannot restart itself from this page: stop it where it runs (Ctrl+C) and start `ducklm serve` again, then open the new address it prints (its token changes at each start)")

	restarted := 0
	api.SetRestart(a, func() error { restarted++; return nil })
	view, err = a.GetDatabase()
	require.NoError(t, err)
	require.True(t, view.CanRestart)
	require.NoError(t, a.RestartApp())
	require.Equal(t, 1, restarted)

	api.SetRestart(a, func() error { return errors.New("no executable") })
	require.EqualError(t, a.RestartApp(), "ducklm could not restart (no executable); quit it and start it again")
}
