package bundle_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
)

func TestExportFileWritesTheWholeBundleOrNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	parent, child := f.grid(t, 6)
	out := filepath.Join(t.TempDir(), "grid.ducklm")

	var phases []string
	ex, err := bundle.ExportFile(f.ctx, f.local, parent.WorldID, out, bundle.FileOptions{KeyDir: f.dir,
		ExportOptions: bundle.ExportOptions{Descendants: true, Progress: func(p bundle.Progress) { phases = append(phases, p.Phase) }}})
	require.NoError(t, err)
	require.Equal(t, out, ex.File)
	st, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, st.Size(), ex.Bytes)
	key, ok, err := bundle.LoadKey(f.dir)
	require.NoError(t, err)
	require.True(t, ok, "the first export makes the installation's key")
	require.Equal(t, key.Fingerprint(), ex.Signer)
	require.EqualValues(t, 2, ex.Manifest.Counts.Worlds)
	require.Contains(t, phases, "export")
	entries, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left beside the bundle")

	rep, err := bundle.VerifyFile(f.ctx, f.local, out, bundle.VerifyOptions{})
	require.NoError(t, err)
	require.True(t, rep.OK)
	require.Equal(t, bundle.Checks{Manifest: true, Signature: true, Entries: true, References: true, Replay: true}, rep.Checks)
	require.Equal(t, 2, rep.Replayed, "the parent and the fork re-execute to their events")
	require.Len(t, rep.Worlds, 2)
	require.Equal(t, parent.WorldID, rep.Worlds[0].ID, "parents come first")
	require.Equal(t, parent.ID, rep.Worlds[0].Runs[0].ID)
	require.Equal(t, child.ID, rep.Worlds[1].Runs[0].ID)
	require.Equal(t, parent.WorldID, rep.Worlds[1].ParentWorldID)
	require.Positive(t, rep.Worlds[0].Runs[0].Events)

	// An existing file is kept unless the caller asked to replace it.
	require.NoError(t, os.WriteFile(out, []byte("keep me"), 0o600))
	_, err = bundle.ExportFile(f.ctx, f.local, parent.WorldID, out, bundle.FileOptions{KeyDir: f.dir})
	require.ErrorContains(t, err, "already exists")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(data))
	_, err = bundle.ExportFile(f.ctx, f.local, parent.WorldID, out, bundle.FileOptions{KeyDir: f.dir, Replace: true})
	require.NoError(t, err)
	entries, err = os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	require.Len(t, entries, 1)
}

func TestExportFileRefusesBadTargetsBeforeMakingAKey(t *testing.T) {
	t.Parallel()
	f := setup(t)
	parent, child := f.grid(t, 4)
	folder := t.TempDir()
	missing := backend.NewID(backend.KindRun)
	for _, c := range []struct {
		root, path, want string
	}{
		{parent.ID, folder, "is a folder"},
		{parent.ID, filepath.Join(folder, "nope", "x.ducklm"), "there is no folder"},
		{parent.ID, "", "choose where to write"},
		{missing, filepath.Join(folder, "x.ducklm"), "there is no run " + missing},
		{"ckp_0123456789abcdef0123456789abcdef", filepath.Join(folder, "x.ducklm"), "export takes a run or a world"},
		{"grid", filepath.Join(folder, "x.ducklm"), "not a run or world id"},
	} {
		_, err := bundle.ExportFile(f.ctx, f.local, c.root, c.path, bundle.FileOptions{KeyDir: f.dir})
		require.ErrorContains(t, err, c.want, "%s → %s", c.root, c.path)
		require.Contains(t, []string{backend.EINVALID, backend.ENOTFOUND}, backend.ErrorCode(err), "%s: %v", c.want, err)
	}
	_, ok, err := bundle.LoadKey(f.dir)
	require.NoError(t, err)
	require.False(t, ok, "no key is made for an export that could not happen")

	_, err = bundle.ExportFile(f.ctx, f.local, child.ID, filepath.Join(folder, "child.ducklm"), bundle.FileOptions{KeyDir: f.dir})
	require.ErrorIs(t, err, bundle.ErrNeedsAncestry)
	entries, err := os.ReadDir(folder)
	require.NoError(t, err)
	require.Empty(t, entries, "a refused export leaves nothing behind")
}

func TestOpenFileAndVerifyFileSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	f := setup(t)
	dir := t.TempDir()
	_, err := bundle.OpenFile(filepath.Join(dir, "none.ducklm"))
	// A sentence with the next step, as the import dialog and the CLI show it.
	require.EqualError(t, err, "There is no file "+filepath.Join(dir, "none.ducklm")+". Check the path: a bundle is the .ducklm file an export wrote")
	_, err = bundle.OpenFile(dir)
	require.ErrorContains(t, err, "is not a file. Choose the .ducklm file itself, not its folder")
	_, err = bundle.OpenFile("")
	require.ErrorContains(t, err, "choose a bundle file")

	notes := filepath.Join(dir, "notes.ducklm")
	require.NoError(t, os.WriteFile(notes, []byte("just some text"), 0o600))
	rep, err := bundle.VerifyFile(f.ctx, f.local, notes, bundle.VerifyOptions{})
	require.Error(t, err)
	require.False(t, rep.OK)
	require.Equal(t, bundle.Checks{}, rep.Checks, "not even the manifest could be read")
	require.NotEmpty(t, rep.Problem)

	_, err = bundle.ImportFile(f.ctx, f.local, f.ledger, dir, bundle.ImportOptions{AllowUnsigned: true})
	require.ErrorContains(t, err, "is not a file")
}

func TestImportListsWhatItAdded(t *testing.T) {
	t.Parallel()
	from, to := setup(t), setup(t)
	parent, child := from.grid(t, 4)
	out := filepath.Join(t.TempDir(), "child.ducklm")
	_, err := bundle.ExportFile(from.ctx, from.local, child.ID, out, bundle.FileOptions{KeyDir: from.dir,
		ExportOptions: bundle.ExportOptions{Ancestry: true}})
	require.NoError(t, err)

	res, err := bundle.ImportFile(to.ctx, to.local, to.ledger, out, bundle.ImportOptions{})
	require.ErrorIs(t, err, bundle.ErrUntrusted)
	require.True(t, res.OK, "the bundle itself is sound: only its signer is unknown here")
	require.True(t, res.Signed)
	require.False(t, res.Known)
	require.Empty(t, res.AddedIDs)

	res, err = bundle.ImportFile(to.ctx, to.local, to.ledger, out, bundle.ImportOptions{AllowUnsigned: true})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{parent.WorldID, parent.ID, child.WorldID, child.ID}, res.AddedIDs)
	res, err = bundle.ImportFile(to.ctx, to.local, to.ledger, out, bundle.ImportOptions{AllowUnsigned: true})
	require.NoError(t, err)
	require.True(t, res.AlreadyPresent())
	require.Empty(t, res.AddedIDs)

	// Without a key the bundle is unsigned, which is not a failed signature.
	alone := filepath.Join(t.TempDir(), "alone.ducklm")
	_, err = bundle.ExportFile(to.ctx, to.local, child.WorldID, alone, bundle.FileOptions{ExportOptions: bundle.ExportOptions{Ancestry: true}})
	require.NoError(t, err)
	rep, err := bundle.VerifyFile(to.ctx, to.local, alone, bundle.VerifyOptions{})
	require.NoError(t, err)
	require.False(t, rep.Signed, "no key: the bundle is unsigned")
	require.True(t, rep.Checks.Signature, "an unsigned bundle has no signature to fail")
}
