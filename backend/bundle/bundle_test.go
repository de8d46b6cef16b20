package bundle_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
)

func TestKeyIsCreatedOnceAndPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k1, err := bundle.LoadOrCreateKey(dir)
	require.NoError(t, err)
	k2, err := bundle.LoadOrCreateKey(dir)
	require.NoError(t, err)
	require.Equal(t, k1.Fingerprint(), k2.Fingerprint())
	st, err := os.Stat(bundle.KeyPath(dir))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.FileExists(t, bundle.KeyPath(dir)+".pub")
	require.Len(t, k1.Fingerprint(), 64)
	require.Len(t, strings.Fields(bundle.FormatFingerprint(k1.Fingerprint())), 16)

	trust, err := bundle.LoadTrust(dir)
	require.NoError(t, err)
	known, why := trust.Known(k1.Fingerprint())
	require.True(t, known, "the own key is always trusted")
	require.Equal(t, "this installation's own key", why)
}

func TestTrustedKeysFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other, err := bundle.LoadOrCreateKey(t.TempDir())
	require.NoError(t, err)
	fp := other.Fingerprint()
	colons := strings.ReplaceAll(bundle.FormatFingerprint(strings.ToUpper(fp)), " ", ":")
	require.NoError(t, os.WriteFile(bundle.TrustedKeysPath(dir), []byte("# a colleague\n\n"+colons+"  # laptop\n"), 0o600))
	trust, err := bundle.LoadTrust(dir)
	require.NoError(t, err)
	known, why := trust.Known(fp)
	require.True(t, known)
	require.Equal(t, "listed in trusted_keys", why)
	known, _ = trust.Known(strings.Repeat("ab", 32))
	require.False(t, known)

	require.NoError(t, os.WriteFile(bundle.TrustedKeysPath(dir), []byte("not a key\n"), 0o600))
	_, err = bundle.LoadTrust(dir)
	require.ErrorContains(t, err, "line 1")
}

func TestExportRefusesAForkWithoutAncestry(t *testing.T) {
	t.Parallel()
	f := setup(t)
	parent, child := f.grid(t, 4)
	_, err := bundle.Export(f.ctx, f.local, child.ID, io.Discard, bundle.ExportOptions{})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.ErrorContains(t, err, "add --ancestry")
	_, err = bundle.Export(f.ctx, f.local, child.WorldID, io.Discard, bundle.ExportOptions{})
	require.ErrorContains(t, err, "add --ancestry")

	// A root world with its descendants needs no ancestry.
	m, err := bundle.Export(f.ctx, f.local, parent.WorldID, io.Discard, bundle.ExportOptions{Descendants: true})
	require.NoError(t, err)
	require.EqualValues(t, 2, m.Counts.Worlds)
	require.EqualValues(t, 1, m.Counts.Forks)
	// Without descendants the same world is alone.
	m, err = bundle.Export(f.ctx, f.local, parent.ID, io.Discard, bundle.ExportOptions{})
	require.NoError(t, err)
	require.EqualValues(t, 1, m.Counts.Worlds)
	require.Zero(t, m.Counts.Forks)

	_, err = bundle.Export(f.ctx, f.local, backend.NewID(backend.KindRun), io.Discard, bundle.ExportOptions{})
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	_, err = bundle.Export(f.ctx, f.local, backend.NewID(backend.KindCheckpoint), io.Discard, bundle.ExportOptions{})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

func TestVerifyReportsWhatABundleHolds(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, child := f.grid(t, 4)
	key, err := bundle.LoadOrCreateKey(f.dir)
	require.NoError(t, err)
	data := f.export(t, child.ID, bundle.ExportOptions{Ancestry: true, Key: &key})

	// Checked alone (an empty installation): everything resolves inside.
	rep, err := bundle.Verify(f.ctx, bundle.Local{}, bytes.NewReader(data), bundle.VerifyOptions{})
	require.NoError(t, err)
	require.True(t, rep.OK)
	require.True(t, rep.Signed)
	require.False(t, rep.Known)
	require.Equal(t, key.Fingerprint(), rep.Signer)
	require.Equal(t, rep.Manifest.Counts, rep.Counts)
	require.EqualValues(t, 2, rep.Counts.Worlds)
	require.EqualValues(t, 2, rep.Counts.Streams)
	require.Equal(t, []string{child.ID}, rep.Manifest.Roots)
	require.True(t, rep.Manifest.Scope.Ancestry)
	require.Equal(t, backend.Version, rep.Manifest.AppVersion)
	var names []string
	for _, e := range rep.Manifest.Entries {
		names = append(names, e.Name)
	}
	require.Equal(t, []string{bundle.SpecsName, bundle.RunsName, bundle.ForksName, bundle.CheckpointsName}, names[:4])
	require.True(t, strings.HasPrefix(names[4], "events/"))
	require.True(t, strings.HasPrefix(names[len(names)-1], "blobs/sha256/"))
}

func TestLimitsAreEnforced(t *testing.T) {
	t.Parallel()
	f := setup(t)
	parent, _ := f.grid(t, 20)
	data := f.export(t, parent.ID, bundle.ExportOptions{})
	verify := func(l bundle.Limits) error {
		_, err := bundle.Verify(f.ctx, bundle.Local{}, bytes.NewReader(data), bundle.VerifyOptions{Limits: l})
		return err
	}
	require.NoError(t, verify(bundle.DefaultLimits()))
	for name, edit := range map[string]func(*bundle.Limits){
		"entry":   func(l *bundle.Limits) { l.MaxEntryBytes = 1 << 10 },
		"total":   func(l *bundle.Limits) { l.MaxTotalBytes = 4 << 10 },
		"entries": func(l *bundle.Limits) { l.MaxEntries = 3 },
		"line":    func(l *bundle.Limits) { l.MaxLineBytes = 64 },
		"records": func(l *bundle.Limits) { l.MaxRecordsBytes = 256 },
	} {
		l := bundle.DefaultLimits()
		edit(&l)
		err := verify(l)
		require.Equal(t, backend.ELIMIT, backend.ErrorCode(err), "%s: %v", name, err)
	}
}

func TestImportIsAtomicOnConflict(t *testing.T) {
	t.Parallel()
	from := setup(t)
	parent, child := from.grid(t, 6)
	path := filepath.Join(t.TempDir(), "b.ducklm")
	require.NoError(t, os.WriteFile(path, from.export(t, child.ID, bundle.ExportOptions{Ancestry: true}), 0o600))

	// The target already holds the parent's world id with other content:
	// nothing of the bundle may land, not even the parts before the clash.
	to := setup(t)
	spec, err := from.reg.GetSpec(from.ctx, parent.WorldID)
	require.NoError(t, err)
	spec.Name = "another world under the same id"
	require.NoError(t, to.reg.CreateSpec(to.ctx, spec))
	_, err = bundle.ImportFile(to.ctx, to.local, to.ledger, path, bundle.ImportOptions{AllowUnsigned: true})
	require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))
	require.ErrorContains(t, err, "already stored here with different content")
	n, err := to.ledger.Count(to.ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	runs, err := to.reg.ListRuns(to.ctx, "")
	require.NoError(t, err)
	require.Empty(t, runs)
}

func TestExportRefusesAMovingTaskRun(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ref, err := f.blobs.Put(f.ctx, []byte(`{"task":"t"}`), "application/json")
	require.NoError(t, err)
	now := time.Now().UTC()
	spec := backend.WorldSpec{ID: backend.NewID(backend.KindWorld), Name: "t", Domain: backend.DomainReal, Backend: "task",
		Program: ref, Params: []byte("{}"), CreatedAt: now}
	run := backend.WorldRun{ID: backend.NewID(backend.KindRun), WorldID: spec.ID, Status: backend.RunAwaitingApproval, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, f.reg.CreateSpecAndRun(f.ctx, spec, run))
	_, err = bundle.Export(f.ctx, f.local, run.ID, io.Discard, bundle.ExportOptions{})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.ErrorContains(t, err, "still awaiting_approval")
}

func TestTrustSignerAddsOnceAndKeepsTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(bundle.TrustedKeysPath(dir), []byte("# a colleague\n"+strings.Repeat("cd", 32)), 0o600))
	fp := strings.Repeat("ab", 32)

	added, err := bundle.TrustSigner(dir, bundle.FormatFingerprint(strings.ToUpper(fp)), "imported grid.ducklm")
	require.NoError(t, err)
	require.True(t, added)
	added, err = bundle.TrustSigner(dir, fp, "again")
	require.NoError(t, err)
	require.False(t, added, "a signer listed already is not listed twice")

	trust, err := bundle.LoadTrust(dir)
	require.NoError(t, err)
	for _, k := range []string{fp, strings.Repeat("cd", 32)} {
		known, _ := trust.Known(k)
		require.True(t, known, k)
	}
	b, err := os.ReadFile(bundle.TrustedKeysPath(dir))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "# a colleague\n"), "what was there stays: %q", b)
	require.Contains(t, string(b), "# imported grid.ducklm")
	require.Equal(t, 1, strings.Count(string(b), bundle.FormatFingerprint(fp)))
	st, err := os.Stat(bundle.TrustedKeysPath(dir))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	_, err = bundle.TrustSigner(dir, "not a key", "")
	require.ErrorContains(t, err, "not a key fingerprint")
	_, err = bundle.TrustSigner(dir, fp, "line\nbreak")
	require.NoError(t, err, "a note cannot break the file's lines")
	_, err = bundle.LoadTrust(dir)
	require.NoError(t, err)
}
