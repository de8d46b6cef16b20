package bundles_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	"ducklm/backend/sqlite"
)

// compatFixtureEnv names the folder TestWriteCompatFixture writes to. The
// committed fixture in testdata/v1 was written by the code before task
// checkpoints became deltas (commit 79607ef): whole-state checkpoints, one
// blob per checkpoint. Running it again writes today's format, which is not
// what the compatibility test is for.
const compatFixtureEnv = "DUCKLM_WRITE_COMPAT_FIXTURE"

// compatWorkspace is the task run's workspace in the fixture, recorded in
// its request: the compatibility test recreates it to run forked steps.
const compatWorkspace = "/tmp/ducklm-compat-v1-workspace"

// TestWriteCompatFixture writes a data directory (database and blobs) and
// bundles of a finished task run and a fork of it, for the compatibility
// test to open with later code. It does nothing unless asked.
func TestWriteCompatFixture(t *testing.T) {
	out := os.Getenv(compatFixtureEnv)
	if out == "" {
		t.Skip("set " + compatFixtureEnv + " to a folder to write the compatibility fixture")
	}
	ctx := context.Background()
	home := t.TempDir()
	svc, err := service.Open(ctx, home)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(compatWorkspace, 0o700))

	var nodes []backend.TaskNode
	for i := 0; i < 6; i++ {
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("notes/%d.txt", i), "content": fmt.Sprintf("note %d\n", i)})
		n := backend.TaskNode{ID: fmt.Sprintf("w%d", i), Kind: backend.KindToolStep, Tool: "file_write", Args: args, DependsOn: []string{}}
		if i > 0 {
			n.DependsOn = []string{fmt.Sprintf("w%d", i-1)}
		}
		nodes = append(nodes, n)
	}
	task, err := svc.Runtime.Submit(ctx, runtime.TaskRequest{Task: "write six notes", ApprovalMode: runtime.AutoSandboxed,
		Plan: &backend.TaskGraph{Nodes: nodes}, Workspace: compatWorkspace})
	require.NoError(t, err)
	waitDone(t, svc, task.ID)

	// A fork at the checkpoint after the third step, with one more step.
	reg := sqlite.NewWorlds(svc.DB, svc.Ledger)
	cps, err := reg.ListCheckpoints(ctx, task.ID)
	require.NoError(t, err)
	require.Greater(t, len(cps), 3)
	edited := append(append([]backend.TaskNode{}, nodes[:3]...),
		backend.TaskNode{ID: "extra", Kind: backend.KindToolStep, Tool: "file_read", Args: json.RawMessage(`{"path":"notes/2.txt"}`), DependsOn: []string{"w2"}})
	delta, _ := json.Marshal(map[string]any{"nodes": edited})
	_, _, child, err := svc.Runtime.Fork(ctx, runtime.ForkRequest{CheckpointID: cps[2].ID, Delta: delta, Name: "fork of v1"})
	require.NoError(t, err)
	waitDone(t, svc, child.ID)

	key, err := bundle.LoadOrCreateKey(svc.Dir)
	require.NoError(t, err)
	local := bundle.Local{Store: reg, Events: svc.Ledger, Blobs: svc.Blobs}
	require.NoError(t, os.MkdirAll(out, 0o755))
	for name, root := range map[string]string{"task.ducklm": task.WorldID, "fork.ducklm": child.WorldID} {
		f, err := os.Create(filepath.Join(out, name))
		require.NoError(t, err)
		_, err = bundle.Export(ctx, local, root, f, bundle.ExportOptions{Ancestry: true, Key: &key})
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	ids, _ := json.MarshalIndent(map[string]string{"taskRun": task.ID, "forkRun": child.ID, "checkpoint": cps[2].ID}, "", "  ")
	require.NoError(t, os.WriteFile(filepath.Join(out, "ids.json"), ids, 0o644))
	require.NoError(t, svc.Close())

	// The data directory as the user has it: the database and its blobs.
	data := filepath.Join(out, "data")
	require.NoError(t, copyFile(filepath.Join(home, "ducklm.db"), filepath.Join(data, "ducklm.db")))
	require.NoError(t, filepath.Walk(filepath.Join(home, "blobs", "sha256"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		return copyFile(p, filepath.Join(data, rel))
	}))
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
