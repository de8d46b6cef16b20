package api_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/api"
	"ducklm/backend/bundle"
	"ducklm/backend/service"
)

// setupSvc is setup that also returns the service, to follow its progress.
func setupSvc(t *testing.T) (*api.API, *service.Service) {
	t.Helper()
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	svc, err := service.Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	return api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil))), svc
}

// grid creates a Branching Grid world, runs it with checkpoints and forks
// a child from its second checkpoint.
func grid(t *testing.T, a *api.API) (parent api.Created, child api.Forked) {
	t.Helper()
	parent, err := a.CreateWorld(api.WorldInput{Example: "branching_grid", Seed: 7})
	require.NoError(t, err)
	_, err = a.RunWorld(api.StepInput{RunID: parent.Run.ID, Steps: 6, CheckpointEvery: 2})
	require.NoError(t, err)
	d, err := a.WorldDetail(parent.Run.ID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(d.Checkpoints), 2)
	child, err = a.Fork(api.ForkInput{CheckpointID: d.Checkpoints[1].ID, ParentRunID: parent.Run.ID,
		Divergence: "seed_change", SeedPolicy: "derive", Delta: "{}"})
	require.NoError(t, err)
	_, err = a.RunWorld(api.StepInput{RunID: child.Run.ID, Steps: 2})
	require.NoError(t, err)
	return parent, child
}

// progress collects the progress a hub publishes for op.
func progress(svc *service.Service, op string) func() []service.Progress {
	var mu sync.Mutex
	var seen []service.Progress
	svc.Progress.Subscribe(func(p service.Progress) {
		if p.Op == op {
			mu.Lock()
			seen = append(seen, p)
			mu.Unlock()
		}
	})
	return func() []service.Progress {
		mu.Lock()
		defer mu.Unlock()
		return append([]service.Progress(nil), seen...)
	}
}

func TestExportVerifyImportBundleAcrossInstallations(t *testing.T) {
	a, svcA := setupSvc(t)
	parent, child := grid(t, a)
	out := filepath.Join(t.TempDir(), "grid.ducklm")

	_, err := a.ExportBundle(api.ExportInput{Root: child.Run.ID, Scope: "alone", Path: out})
	require.ErrorContains(t, err, "with its ancestry", "a forked run needs its ancestors; the sentence names the choice in the dialog")
	require.NotContains(t, err.Error(), "--ancestry")
	require.NoFileExists(t, out)

	seen := progress(svcA, "op-export")
	ex, err := a.ExportBundle(api.ExportInput{Root: parent.World.ID, Scope: "descendants", Path: out, Op: "op-export"})
	require.NoError(t, err)
	require.Equal(t, out, ex.File)
	require.Positive(t, ex.Bytes)
	require.Len(t, ex.Signer, 64)
	require.EqualValues(t, 2, ex.Counts.Worlds)
	require.EqualValues(t, 1, ex.Counts.Forks)
	require.NotEmpty(t, seen(), "the export reports its progress under the caller's op")
	last := seen()[len(seen())-1]
	require.Equal(t, "export", last.Phase)
	require.Equal(t, last.Total, last.Done)
	require.Equal(t, "bytes", last.Unit)

	_, err = a.ExportBundle(api.ExportInput{Root: parent.World.ID, Scope: "alone", Path: out})
	require.ErrorContains(t, err, "already exists", "an existing file is not replaced unless asked")
	_, err = a.ExportBundle(api.ExportInput{Root: parent.World.ID, Scope: "everything", Path: out})
	require.ErrorContains(t, err, "scope")
	both, err := a.ExportBundle(api.ExportInput{Root: child.World.ID, Scope: "all", Path: filepath.Join(t.TempDir(), "both.ducklm")})
	require.NoError(t, err, "a forked world travels with its ancestry and descendants")
	require.EqualValues(t, 2, both.Counts.Worlds)
	_, err = a.ExportBundle(api.ExportInput{Root: parent.World.ID, Scope: "alone", Path: "grid.ducklm"})
	require.ErrorContains(t, err, "full path")

	rep, err := a.VerifyBundle(out, "")
	require.NoError(t, err)
	require.True(t, rep.OK, rep.Problem)
	require.True(t, rep.Signed)
	require.True(t, rep.Trusted)
	require.Equal(t, "this installation's own key", rep.Trust)
	require.Equal(t, ex.Signer, rep.Signer)
	require.Equal(t, ex.Bytes, rep.Bytes)
	require.Equal(t, []string{parent.World.ID}, rep.Roots)
	require.True(t, rep.Scope.Descendants)
	require.Positive(t, rep.Entries)
	require.True(t, rep.Checks.References)
	require.Len(t, rep.Worlds, 2)

	// A second installation does not know the signer: the report says so
	// and nothing is written until the user decides.
	b, svcB := setupSvc(t)
	rep, err = b.VerifyBundle(out, "")
	require.NoError(t, err)
	require.True(t, rep.OK)
	require.False(t, rep.Trusted)
	require.Equal(t, "unknown signer", rep.Trust)

	res, err := b.ImportBundle(api.ImportInput{Path: out})
	require.NoError(t, err, "a refusal is an answer, not a failure")
	require.False(t, res.Imported)
	require.Equal(t, "untrusted", res.Refused)
	require.Contains(t, res.Problem, "does not know")
	require.NotContains(t, res.Problem, "--allow-unsigned")
	lin, err := b.Lineage()
	require.NoError(t, err)
	require.Empty(t, lin.Nodes, "nothing was written")

	// Trusting the signer is a choice the user can make once, here; the
	// check then says so. (This installation goes on to import anyway
	// below, so the signer is forgotten again first.)
	_, err = b.TrustSigner("not a fingerprint", "")
	require.ErrorContains(t, err, "not a key fingerprint")
	added, err := b.TrustSigner(rep.Signer, out)
	require.NoError(t, err)
	require.True(t, added)
	trusted, err := b.VerifyBundle(out, "")
	require.NoError(t, err)
	require.True(t, trusted.Trusted)
	require.Equal(t, "listed in trusted_keys", trusted.Trust)
	require.NoError(t, os.Remove(bundle.TrustedKeysPath(svcB.Dir)))

	seen = progress(svcB, "op-import")
	res, err = b.ImportBundle(api.ImportInput{Path: out, AllowUnsigned: true, Op: "op-import"})
	require.NoError(t, err)
	require.True(t, res.Imported)
	require.Empty(t, res.Refused)
	require.False(t, res.AlreadyPresent)
	require.EqualValues(t, 2, res.Added.Worlds)
	require.ElementsMatch(t, []string{parent.World.ID, parent.Run.ID, child.World.ID, child.Run.ID}, res.AddedIDs)
	require.Len(t, res.Report.Worlds, 2)
	phases := map[string]bool{}
	for _, p := range seen() {
		phases[p.Phase] = true
	}
	require.True(t, phases["verify"] && phases["write"], "%v", seen())
	d, err := b.WorldDetail(child.Run.ID)
	require.NoError(t, err, "the imported run opens here")
	require.Equal(t, child.World.ID, d.World.ID)

	res, err = b.ImportBundle(api.ImportInput{Path: out, AllowUnsigned: true})
	require.NoError(t, err)
	require.True(t, res.Imported)
	require.True(t, res.AlreadyPresent)
	require.Empty(t, res.AddedIDs)
	require.NotNil(t, res.AddedIDs, "lists are never null")
}

func TestBrokenBundlesAreSentencesAndChangeNothing(t *testing.T) {
	a, _ := setupSvc(t)
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.ducklm")
	require.NoError(t, os.WriteFile(broken, []byte("this is not a bundle at all"), 0o600))

	rep, err := a.VerifyBundle(broken, "")
	require.NoError(t, err)
	require.False(t, rep.OK)
	require.False(t, rep.Checks.Manifest)
	require.NotEmpty(t, rep.Problem)
	require.NotNil(t, rep.Worlds)
	require.NotNil(t, rep.Roots)

	res, err := a.ImportBundle(api.ImportInput{Path: broken, AllowUnsigned: true})
	require.NoError(t, err)
	require.False(t, res.Imported)
	require.Equal(t, "invalid", res.Refused)
	require.Contains(t, res.Problem, "nothing was written")
	o, err := a.Overview()
	require.NoError(t, err)
	require.Zero(t, o.Counts.Worlds)

	for _, path := range []string{filepath.Join(dir, "missing.ducklm"), dir, ""} {
		_, err = a.VerifyBundle(path, "")
		require.Error(t, err, path)
		var wrapped interface{ Unwrap() error }
		require.False(t, errors.As(err, &wrapped), "a plain sentence")
		_, err = a.ImportBundle(api.ImportInput{Path: path})
		require.Error(t, err, path)
	}
	_, err = a.VerifyBundle("relative.ducklm", "")
	require.ErrorContains(t, err, "full path")
}

// dialogs answer the native dialogs as a user would.
type dialogs struct {
	calls []string
}

func (d *dialogs) ChooseFolder(title string) (string, error) { return "/home/ada", nil }

func (d *dialogs) SaveFile(o api.FileDialog) (string, error) {
	d.calls = append(d.calls, "save "+o.Title+" "+o.DefaultName+" "+o.Pattern)
	return filepath.Join(o.DefaultDir, "picked.ducklm"), nil
}

func (d *dialogs) OpenFile(o api.FileDialog) (string, error) {
	d.calls = append(d.calls, "open "+o.Title+" "+o.Pattern)
	return "", nil // cancelled
}

func TestBundleDialogs(t *testing.T) {
	a, _ := setupSvc(t)
	require.False(t, a.NativeDialogs())
	_, err := a.ChooseBundleToSave("Export", "grid")
	require.ErrorContains(t, err, "type the path")
	_, err = a.ChooseBundleToOpen("Import")
	require.ErrorContains(t, err, "type the path")

	home := t.TempDir()
	t.Setenv("HOME", home)
	suggested, err := a.SuggestBundlePath("grid / seed 7")
	require.NoError(t, err)
	require.True(t, filepath.IsAbs(suggested))
	require.Equal(t, ".ducklm", filepath.Ext(suggested))
	require.NotContains(t, filepath.Base(suggested), "/")
	require.NoError(t, os.WriteFile(suggested, nil, 0o600))
	again, err := a.SuggestBundlePath("grid / seed 7")
	require.NoError(t, err)
	require.NotEqual(t, suggested, again, "an existing file is not suggested")

	d := &dialogs{}
	api.Configure(a, context.Background, d)
	require.True(t, a.NativeDialogs())
	got, err := a.ChooseBundleToSave("Export grid", "grid")
	require.NoError(t, err)
	require.Equal(t, "picked.ducklm", filepath.Base(got))
	got, err = a.ChooseBundleToOpen("Import a bundle")
	require.NoError(t, err)
	require.Empty(t, got)
	require.Len(t, d.calls, 2)
	require.True(t, strings.HasPrefix(d.calls[0], "save Export grid grid.ducklm *.ducklm"), d.calls[0])
	require.Equal(t, "open Import a bundle *.ducklm", d.calls[1])
}
