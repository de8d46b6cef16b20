package runtime_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// damageBlob overwrites a stored blob's bytes, as a disk fault would.
func (f *fixture) damageBlob(t *testing.T, ref backend.BlobRef) {
	t.Helper()
	h := strings.TrimPrefix(ref.Digest, "sha256:")
	path := filepath.Join(f.dir, "blobs", "sha256", h[:2], h[2:4], h)
	require.FileExists(t, path)
	require.NoError(t, os.Chmod(path, 0o600))
	require.NoError(t, os.WriteFile(path, []byte(`{"damaged":`), 0o600))
}

func TestDamagedLatestCheckpointFallsBackRecordsAWarningAndResumes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "wait", ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("a", "echo one"), shell("b", "echo two", "a"))})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	before, _, err := f.rt.Load(f.ctx, run.ID)
	require.NoError(t, err)

	stored, err := f.store.GetRun(f.ctx, run.ID)
	require.NoError(t, err)
	require.NotEmpty(t, stored.LatestCheckpointID)
	latest, err := f.store.GetCheckpoint(f.ctx, stored.LatestCheckpointID)
	require.NoError(t, err)
	f.rt.Close()
	f.damageBlob(t, latest.Blob)

	f.restart(t)
	st, _, err := f.rt.Load(f.ctx, run.ID)
	require.NoError(t, err, "a damaged latest checkpoint is skipped, not fatal")
	require.Equal(t, before.Seq, st.Seq)
	require.Equal(t, before.Status, st.Status)
	require.Len(t, st.PendingApprovals(), 1, "the fold of the ledger gives the same state")

	resumed, err := f.rt.ResumeAll(f.ctx)
	require.NoError(t, err)
	require.Contains(t, resumed, run.ID)
	f.approveAll(t, run.ID)
	st = f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	var warnings []string
	for _, e := range f.events(t, run.ID) {
		if e.Type == runtime.EvWarning {
			warnings = append(warnings, string(e.Payload))
		}
	}
	require.Len(t, warnings, 1, "the skip is recorded once, as the run resumes")
	require.Contains(t, warnings[0], "checkpoint "+latest.ID+" is damaged")

	// The run's checkpoints after the resume are readable again.
	f.restart(t)
	_, _, err = f.rt.Load(f.ctx, run.ID)
	require.NoError(t, err)
}

func TestForkWithEveryCheckpointDamagedIsRefusedNotLoadedFromItsParent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "two files", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(
			step("a", "file_write", `{"path":"a.txt","content":"A"}`),
			step("b", "file_write", `{"path":"b.txt","content":"B"}`, "a"),
		)})
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed).Status)
	cps, err := f.store.ListCheckpoints(f.ctx, run.ID)
	require.NoError(t, err)
	edited := `{"nodes":[{"id":"a","kind":"tool","tool":"file_write","args":{"path":"a.txt","content":"A2"},"depends_on":[]}]}`
	_, _, child, err := f.rt.Fork(f.ctx, runtime.ForkRequest{CheckpointID: cps[0].ID, Delta: []byte(edited)})
	require.NoError(t, err)
	require.Equal(t, backend.RunCompleted, f.waitStatus(t, child.ID, backend.RunCompleted, backend.RunFailed).Status)
	f.rt.Close()

	// A fork's checkpoints share the base its start wrote (a few events
	// later than the parent's): damaging it leaves no readable checkpoint,
	// and the parent's, with the plan before the edit, is not the fork.
	own, err := f.store.ListCheckpoints(f.ctx, child.ID)
	require.NoError(t, err)
	for _, cp := range own {
		require.Equal(t, own[0].Blob, cp.Blob)
	}
	f.damageBlob(t, own[0].Blob)
	f.restart(t)
	_, _, err = f.rt.Load(f.ctx, child.ID)
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "it is a fork and its checkpoints, its starting one included, are damaged")
	_, _, err = f.rt.Load(f.ctx, run.ID)
	require.NoError(t, err, "the parent is untouched")
}

// TestDamagedCheckpointOfAFinishedRunIsLoggedOnce: a finished run is never
// taken up again to write a fresh checkpoint, so its damaged latest one is
// skipped at every Load; the log says so once, not at every read.
func TestDamagedCheckpointOfAFinishedRunIsLoggedOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "done", ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("a", "echo one"))})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	f.approveAll(t, run.ID)
	done := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, done.Status, done.StatusReason)
	stored, err := f.store.GetRun(f.ctx, run.ID)
	require.NoError(t, err)
	latest, err := f.store.GetCheckpoint(f.ctx, stored.LatestCheckpointID)
	require.NoError(t, err)
	f.rt.Close()
	f.damageBlob(t, latest.Blob)

	var mu sync.Mutex
	var logged []string
	f.deps.Log = func(msg string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, msg)
	}
	f.restart(t)
	for range 3 {
		st, _, err := f.rt.Load(f.ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, done.Seq, st.Seq)
		require.Equal(t, backend.RunCompleted, st.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"damaged checkpoint"}, logged, "logged once, not at every Load")
}
