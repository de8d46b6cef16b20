package runtime_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// dataDirUntouched fails the test if a step left a file in the fixture's
// data directory (the test's plans all write pwned.txt).
func (f *fixture) dataDirUntouched(t *testing.T) {
	t.Helper()
	_, err := os.Stat(filepath.Join(f.dir, "pwned.txt"))
	require.True(t, os.IsNotExist(err), "a step wrote into the data directory")
}

// A workspace swapped for a link to the data directory while its run waits
// for approval: the approved step must not run there.
func TestWorkspaceSwappedForALinkWhileAwaitingApprovalRunsNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	outer := filepath.Join(t.TempDir(), "outer")
	inner := filepath.Join(outer, "inner")
	require.NoError(t, os.MkdirAll(inner, 0o755))

	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "write", Workspace: inner, ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("w", "echo pwned > pwned.txt; ls"))})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	require.NoError(t, os.Rename(inner, inner+".old"))
	require.NoError(t, os.Symlink(f.dir, inner))

	f.approveFirst(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunFailed, st.Status)
	require.Contains(t, st.Steps["w"].Error, "the workspace "+inner+" is no longer the folder this run was given")
	require.Contains(t, st.Steps["w"].Error, "nothing ran")
	f.dataDirUntouched(t)
	_, err = os.Stat(filepath.Join(inner+".old", "pwned.txt"))
	require.True(t, os.IsNotExist(err))
}

// The race found in review: run B waits with workspace outer/inner; a step
// of run A, whose workspace is outer, replaces inner with a link to the
// data directory; B's approved step must not run there.
func TestWorkspaceSwappedByAnotherRunsStepRunsNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	outer := filepath.Join(t.TempDir(), "outer")
	inner := filepath.Join(outer, "inner")
	require.NoError(t, os.MkdirAll(inner, 0o755))

	b, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "b", Workspace: inner, ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("w", "echo pwned > pwned.txt && echo ran"))})
	require.NoError(t, err)
	f.waitStatus(t, b.ID, backend.RunAwaitingApproval)

	a, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "a", Workspace: outer, ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("swap", "mv inner inner.old && ln -s '"+f.dir+"' inner && echo swapped"))})
	require.NoError(t, err)
	f.approveFirst(t, a.ID)
	st := f.waitStatus(t, a.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "swapped\n", st.Steps["swap"].Result.StdoutTail)
	fi, err := os.Lstat(inner)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "run A's step replaced inner with a link")

	f.approveFirst(t, b.ID)
	st = f.waitStatus(t, b.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunFailed, st.Status)
	require.Contains(t, st.Steps["w"].Error, "is no longer the folder this run was given")
	require.Empty(t, st.Steps["w"].Result.StdoutTail)
	f.dataDirUntouched(t)
}

// A workspace named through a link that was there when the run was
// created is the folder the link led to then, and its steps run there.
func TestWorkspaceNamedThroughALinkStillRuns(t *testing.T) {
	t.Parallel()
	f := setup(t)
	base := t.TempDir()
	real := filepath.Join(base, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(real, link))

	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "write", Workspace: link, ApprovalMode: runtime.AskEvery,
		Plan: plan(shell("w", "echo made > made.txt && cat made.txt"))})
	require.NoError(t, err)
	f.approveFirst(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "made\n", st.Steps["w"].Result.StdoutTail)
	b, err := os.ReadFile(filepath.Join(real, "made.txt"))
	require.NoError(t, err)
	require.Equal(t, "made\n", string(b))
}
