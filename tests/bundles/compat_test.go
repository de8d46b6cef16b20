package bundles_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
	"ducklm/backend/store"
)

// The fixture in testdata/v1 was written by the code before task
// checkpoints became deltas: whole-state checkpoints, one blob per
// checkpoint — a data directory (database and blobs), bundles of a finished
// task run and of a fork of it, and their ids. Its writer ran once and was
// removed, since it could only write today's format (it is in the history:
// git log --diff-filter=D -- tests/bundles/compat_fixture_test.go).

// compatWorkspace is the task run's workspace in the fixture, recorded in
// its request: the compatibility test recreates it to run forked steps.
const compatWorkspace = "/tmp/ducklm-compat-v1-workspace"

// compatIDs are the ids the fixture's writer recorded.
type compatIDs struct {
	TaskRun    string `json:"taskRun"`
	ForkRun    string `json:"forkRun"`
	Checkpoint string `json:"checkpoint"`
}

func readCompatIDs(t *testing.T) compatIDs {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "v1", "ids.json"))
	require.NoError(t, err)
	var ids compatIDs
	require.NoError(t, json.Unmarshal(data, &ids))
	return ids
}

// checkV1Runs checks what the old code recorded reads back the same: the
// six-step run and its fork are complete with every step done once, and a
// new fork of the old run from one of its whole-state checkpoints runs to
// completion, keeping the steps done before it.
func checkV1Runs(t *testing.T, svc *service.Service, ids compatIDs) {
	t.Helper()
	ctx := context.Background()
	st, _, err := svc.Runtime.Load(ctx, ids.TaskRun)
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, st.Status)
	require.Len(t, st.Order(), 6)
	for _, id := range st.Order() {
		require.Equal(t, runtime.StepDone, st.Steps[id].State, id)
		require.Equal(t, 1, st.Steps[id].Attempts, id)
	}
	fk, _, err := svc.Runtime.Load(ctx, ids.ForkRun)
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, fk.Status)
	require.Equal(t, []string{"w0", "w1", "w2", "extra"}, fk.Order())
	for _, id := range fk.Order() {
		require.Equal(t, runtime.StepDone, fk.Steps[id].State, id)
	}
	require.Equal(t, st.Steps["w1"].Result.Step, fk.Steps["w1"].Result.Step, "a done step is kept by the fork, not run again")

	// The timeline reads the whole history, the fork's through its parent.
	hist, err := svc.Worlds.History(ctx, ids.ForkRun)
	require.NoError(t, err)
	require.NotEmpty(t, hist)

	// A new fork from an old checkpoint: the state there is exact.
	require.NoError(t, os.MkdirAll(compatWorkspace, 0o700))
	t.Cleanup(func() { os.RemoveAll(compatWorkspace) })
	_, _, child, err := svc.Runtime.Fork(ctx, runtime.ForkRequest{CheckpointID: ids.Checkpoint, Delta: json.RawMessage(`{}`)})
	require.NoError(t, err)
	waitDone(t, svc, child.ID)
	cs, _, err := svc.Runtime.Load(ctx, child.ID)
	require.NoError(t, err)
	require.Equal(t, st.Order(), cs.Order())
	events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: child.ID})
	require.NoError(t, err)
	cp, err := store.NewWorlds(svc.DB, svc.Ledger).GetCheckpoint(ctx, ids.Checkpoint)
	require.NoError(t, err)
	before, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: ids.TaskRun, ToSeq: cp.LedgerSeq})
	require.NoError(t, err)
	done := count(before, runtime.EvStepFinished)
	require.Positive(t, done)
	require.Equal(t, 6-done, count(events, runtime.EvStepStarted), "the fork runs only the steps not done at its checkpoint")
}

func count(events []backend.Event, typ string) int {
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// TestOpensV1DataDirectory opens a data directory written before task
// checkpoints became deltas of the ledger.
func TestOpensV1DataDirectory(t *testing.T) {
	ids := readCompatIDs(t)
	home := t.TempDir()
	src := filepath.Join("testdata", "v1", "data")
	require.NoError(t, filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		return copyFile(p, filepath.Join(home, rel))
	}))
	svc, err := service.Open(context.Background(), home)
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	checkV1Runs(t, svc, ids)
}

// TestImportsV1Bundles verifies and imports bundles exported before task
// checkpoints became deltas, into a fresh data directory.
func TestImportsV1Bundles(t *testing.T) {
	ids := readCompatIDs(t)
	ctx := context.Background()
	tg := newTarget(t)
	opts := bundle.ImportOptions{AllowUnsigned: true} // signed by the fixture writer's key, unknown here
	for _, name := range []string{"task.ducklm", "fork.ducklm"} {
		path := filepath.Join("testdata", "v1", name)
		_, err := bundle.VerifyFile(ctx, tg.local, path, opts.VerifyOptions)
		require.NoError(t, err, name)
		res, err := tg.importFile(t, path, opts)
		require.NoError(t, err, name)
		require.True(t, res.Signed)
	}
	reg := store.NewWorlds(tg.svc.DB, tg.svc.Ledger)
	cps, err := reg.ListCheckpoints(ctx, ids.TaskRun)
	require.NoError(t, err)
	require.NotEmpty(t, cps)
	checkV1Runs(t, tg.svc, ids)
}

func waitDone(t *testing.T, svc *service.Service, runID string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _, err := svc.Runtime.Load(ctx, runID)
		require.NoError(t, err)
		if st.Status.Terminal() {
			require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
			break
		}
		require.True(t, time.Now().Before(deadline), "run %s is still %s", runID, st.Status)
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, svc.Runtime.Wait(ctx, runID))
}

func copyFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
