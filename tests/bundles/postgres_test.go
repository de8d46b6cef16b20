package bundles_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	"ducklm/backend/store/postgres/pgtest"
)

// exportAt writes root's bundle from svc at a fixed time with key, and
// returns its bytes.
func exportAt(t *testing.T, svc *service.Service, root string, opts bundle.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	local := bundle.Local{Store: store.NewWorlds(svc.DB, svc.Ledger), Events: svc.Ledger, Blobs: svc.Blobs}
	opts.Now = func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }
	_, err := bundle.Export(context.Background(), local, root, &buf, opts)
	require.NoError(t, err)
	return buf.Bytes()
}

func importBytes(t *testing.T, svc *service.Service, data []byte) bundle.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.ducklm")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	local := bundle.Local{Store: store.NewWorlds(svc.DB, svc.Ledger), Events: svc.Ledger, Blobs: svc.Blobs}
	res, err := bundle.ImportFile(context.Background(), local, svc.Ledger, path, bundle.ImportOptions{AllowUnsigned: true})
	require.NoError(t, err)
	return res
}

// A bundle exported from a SQLite installation imports into a PostgreSQL
// one and back, and every re-export is byte-identical: the same facts,
// records and blobs, in the same order, on both databases.
func TestBundlesMoveBetweenSQLiteAndPostgresByteIdentical(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, err := service.Open(ctx, filepath.Join(src.dir, "home"))
	require.NoError(t, err)
	key, err := bundle.LoadOrCreateKey(from.Dir)
	require.NoError(t, err)
	roots := []struct {
		id   string
		opts bundle.ExportOptions
	}{
		{src.parentWorld, bundle.ExportOptions{Descendants: true, Key: &key}},
		{src.childA, bundle.ExportOptions{Ancestry: true, Key: &key}},
		{src.taskRun, bundle.ExportOptions{Key: &key}},
	}
	var original [][]byte
	for _, r := range roots {
		original = append(original, exportAt(t, from, r.id, r.opts))
	}
	require.NoError(t, from.Close())

	pg, err := service.OpenWith(ctx, t.TempDir(), service.Options{DatabaseURL: pgtest.URL(t)})
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	for i := range roots {
		res := importBytes(t, pg, original[i])
		require.False(t, i == 0 && res.AlreadyPresent(), "the first bundle adds what it holds")
	}
	back := newTarget(t) // SQLite again
	for i, r := range roots {
		onPostgres := exportAt(t, pg, r.id, r.opts)
		require.Equal(t, original[i], onPostgres, "re-exported from PostgreSQL: %s", r.id)
		importBytes(t, back.svc, onPostgres)
	}
	for i, r := range roots {
		require.Equal(t, original[i], exportAt(t, back.svc, r.id, r.opts), "re-exported from SQLite after PostgreSQL: %s", r.id)
	}
	// What the runs hold reads the same on PostgreSQL.
	for id, want := range src.state {
		got, err := readRun(ctx, store.NewWorlds(pg.DB, pg.Ledger), pg.Ledger, id)
		require.NoError(t, err)
		require.Equal(t, want, got, "run %s on PostgreSQL", id)
	}
}

// A task run imported onto a team's database from an installation that is
// not on it (here: the fixture's SQLite home) is owned by that installation,
// which will never drive anything here. A fork of it is the forking
// installation's: it runs there, in a new workspace of its own, and says
// whom it was taken from; a fork of that fork, made on another installation
// of the team, keeps the owner, who is on the database, and is driven by it.
func TestAForkOfARunImportedOntoATeamDatabaseIsDrivenWhereItIsMade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	open := func() *service.Service {
		svc, err := service.OpenWith(ctx, t.TempDir(), service.Options{DatabaseURL: url})
		require.NoError(t, err)
		t.Cleanup(func() { svc.Close() })
		return svc
	}
	b, c := open(), open()
	data, err := os.ReadFile(src.task)
	require.NoError(t, err)
	importBytes(t, b, data)
	parent, done, err := b.Runtime.Load(ctx, src.taskRun)
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, parent.Status)
	exporter := *parent.Request.Owner
	bInst, err := service.Installation(b.Dir)
	require.NoError(t, err)
	require.NotEqual(t, bInst.ID, exporter.ID)
	require.Contains(t, b.Runtime.DriverNote(ctx, exporter), "imported from ducklm on", "the exporter never opened this database")
	require.Contains(t, b.Runtime.DriverNote(ctx, bInst), "driven by ducklm on")

	edited := json.RawMessage(`{"nodes":[
		{"id":"write","kind":"tool","tool":"file_write","depends_on":[],"args":{"path":"notes/hello.txt","content":"hello <bundles> & \"friends\"\n"}},
		{"id":"read","kind":"tool","tool":"file_read","depends_on":["write"],"args":{"path":"notes/hello.txt"}},
		{"id":"more","kind":"tool","tool":"file_write","depends_on":["read"],"args":{"path":"notes/fork.txt","content":"forked here\n"}}]}`)
	_, _, fork, err := b.Runtime.Fork(ctx, runtime.ForkRequest{CheckpointID: done.LatestCheckpointID, Delta: edited})
	require.NoError(t, err)
	st := completes(t, b, fork.ID)
	require.Equal(t, bInst.ID, st.Request.Owner.ID, "the fork is the forking installation's")
	require.Equal(t, filepath.Join(b.Dir, "workspaces", fork.ID), st.Request.Workspace, "in a new workspace of its own")
	written, err := os.ReadFile(filepath.Join(st.Request.Workspace, "notes", "fork.txt"))
	require.NoError(t, err, "its new step ran here")
	require.Equal(t, "forked here\n", string(written))
	require.Equal(t, runtime.StepDone, st.Steps["write"].State, "the done steps stay done")
	events, err := b.Ledger.Query(ctx, backend.EventQuery{Stream: fork.ID})
	require.NoError(t, err)
	require.Equal(t, runtime.EvForked, events[0].Type)
	var forked struct {
		TakenFrom *runtime.Installation `json:"ownerTakenFrom"`
		Workspace string                `json:"workspace"`
	}
	require.NoError(t, json.Unmarshal(events[0].Payload, &forked))
	require.Equal(t, &exporter, forked.TakenFrom, "run.forked says whom the fork was taken from")
	require.Equal(t, st.Request.Workspace, forked.Workspace)
	seen, _, err := c.Runtime.Load(ctx, fork.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, seen.Status, "the team sees it")
	require.Nil(t, b.Runtime.Elsewhere(seen))
	require.Equal(t, bInst.ID, c.Runtime.Elsewhere(seen).ID, "to the others, it is driven by the installation that forked it")

	// A fork of the fork, made on another installation of the team: its
	// owner is on the database, so it keeps it (it shares the workspace).
	_, doneFork, err := b.Runtime.Load(ctx, fork.ID)
	require.NoError(t, err)
	again := json.RawMessage(`{"nodes":[
		{"id":"write","kind":"tool","tool":"file_write","depends_on":[],"args":{"path":"notes/hello.txt","content":"hello <bundles> & \"friends\"\n"}},
		{"id":"read","kind":"tool","tool":"file_read","depends_on":["write"],"args":{"path":"notes/hello.txt"}},
		{"id":"more","kind":"tool","tool":"file_write","depends_on":["read"],"args":{"path":"notes/fork.txt","content":"forked here\n"}},
		{"id":"last","kind":"tool","tool":"file_read","depends_on":["more"],"args":{"path":"notes/fork.txt"}}]}`)
	_, _, grandchild, err := c.Runtime.Fork(ctx, runtime.ForkRequest{CheckpointID: doneFork.LatestCheckpointID, Delta: again})
	require.NoError(t, err)
	gst := completes(t, b, grandchild.ID)
	require.Equal(t, bInst.ID, gst.Request.Owner.ID)
	require.Equal(t, st.Request.Workspace, gst.Request.Workspace)
	var read struct {
		Content string `json:"content"`
	}
	require.NoError(t, json.Unmarshal(gst.Steps["last"].Result.Output, &read))
	require.Equal(t, "forked here\n", read.Content, "it read the file its parent wrote, in the shared workspace")
}

// completes waits (up to two minutes: a loaded machine) until svc sees the
// run completed, and returns its state.
func completes(t *testing.T, svc *service.Service, runID string) *runtime.RunState {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, _, err := svc.Runtime.Load(context.Background(), runID)
		require.NoError(t, err)
		if st.Status.Terminal() {
			require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s after two minutes (%s)", runID, st.Status, st.StatusReason)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
