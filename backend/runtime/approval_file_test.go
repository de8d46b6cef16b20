package runtime_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// The approval card of a file_write shows the change: the request carries
// what the file holds now (or that it does not exist yet), read inside the
// workspace like file_read would.
func TestFileWriteApprovalCarriesTheCurrentFile(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\ntwo\n"), 0o600))
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "edit notes", ApprovalMode: runtime.AskEvery, Workspace: ws,
		Plan: plan(
			step("edit", "file_write", `{"path":"notes.txt","content":"one\nthree\n"}`),
			step("new", "file_write", `{"path":"sub/new.txt","content":"fresh"}`, "edit"),
		)})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	as, err := f.rt.Approvals(f.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.Equal(t, &runtime.CurrentFile{Exists: true, Content: "one\ntwo\n", Bytes: 8}, as[0].Current)
	require.Equal(t, backend.ConfinedWorkspace, as[0].Confinement, "ducklm writes the file itself: no sandbox limits apply")

	require.NoError(t, f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: as[0].RequestID, Approve: true, By: "test"}))
	var next []runtime.Approval
	require.Eventually(t, func() bool {
		next, err = f.rt.Approvals(f.ctx, run.ID)
		return err == nil && len(next) == 1 && next[0].Step == "new"
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, &runtime.CurrentFile{}, next[0].Current, "a file the write creates does not exist yet")

	// Other tools carry nothing.
	other, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "hi", ApprovalMode: runtime.AskEvery, Plan: plan(shell("hi", "echo hi"))})
	require.NoError(t, err)
	f.waitStatus(t, other.ID, backend.RunAwaitingApproval)
	as, err = f.rt.Approvals(f.ctx, other.ID)
	require.NoError(t, err)
	require.Nil(t, as[0].Current)
	require.Equal(t, backend.ConfinedSandbox, as[0].Confinement)
}

// A finished step says where it ran, with the approval card's truth: ducklm
// itself for the file tools (inside the workspace), the sandbox for a shell
// command. Its sandboxed flag alone would call a file write sandboxed.
func TestAFinishedStepSaysWhereItRan(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "write, read, list", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(
			step("write", "file_write", `{"path":"a.txt","content":"A"}`),
			step("read", "file_read", `{"path":"a.txt"}`, "write"),
			shell("list", "ls", "read"),
		)})
	require.NoError(t, err)
	f.approveAll(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, backend.ConfinedWorkspace, st.Steps["write"].Result.Confinement)
	require.Equal(t, backend.ConfinedWorkspace, st.Steps["read"].Result.Confinement)
	require.Equal(t, backend.ConfinedSandbox, st.Steps["list"].Result.Confinement)

	// A step finished before results said where (older data) is told by
	// the catalog, as its approval card was.
	for _, s := range st.Steps {
		s.Result.Confinement = ""
	}
	f.rt.NoteConfinement(st)
	require.Equal(t, backend.ConfinedWorkspace, st.Steps["write"].Result.Confinement)
	require.Equal(t, backend.ConfinedSandbox, st.Steps["list"].Result.Confinement)
}
