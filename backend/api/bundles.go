package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/service"
)

// The scopes of an export: the root alone, with the ancestors a forked
// root's history starts in, with every world forked from it, or both.
const (
	ScopeAlone       = "alone"
	ScopeAncestry    = "ancestry"
	ScopeDescendants = "descendants"
	ScopeAll         = "all"
)

// bundleExt is the extension of bundle files.
const bundleExt = ".ducklm"

// ExportInput is the export dialog's form.
type ExportInput struct {
	Root  string `json:"root"`  // a run or world id
	Scope string `json:"scope"` // ScopeAlone, ScopeAncestry, ScopeDescendants or ScopeAll
	Path  string `json:"path"`  // the bundle file to write: a full path ("~/" is the home folder)
	// Replace lets the bundle take the place of an existing file (the
	// native save dialog has asked already).
	Replace bool   `json:"replace"`
	Op      string `json:"op"` // the id progress is reported under; "" for none
}

// ExportResult is a bundle written to a file.
type ExportResult struct {
	File   string        `json:"file"`
	Bytes  int64         `json:"bytes"`
	Signer string        `json:"signer"`
	Root   string        `json:"root"`
	Scope  string        `json:"scope"`
	Counts bundle.Counts `json:"counts"`
}

// BundleReport is what verifying a bundle file found.
type BundleReport struct {
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	OK    bool   `json:"ok"`
	// Problem is the first problem found, as a sentence ("" when OK).
	Problem string        `json:"problem,omitempty"`
	Checks  bundle.Checks `json:"checks"`
	// What the manifest says (zero when it could not be read).
	FormatVersion int          `json:"formatVersion"`
	AppVersion    string       `json:"appVersion"`
	CreatedAt     *time.Time   `json:"createdAt,omitempty"`
	Roots         []string     `json:"roots"`
	Scope         bundle.Scope `json:"scope"`
	// Entries is how many entries the manifest lists with their sha256.
	Entries int  `json:"entries"`
	Signed  bool `json:"signed"`
	// Signer is the fingerprint of the key that signed the bundle;
	// Trusted says whether this installation trusts it, Trust why.
	Signer  string             `json:"signer,omitempty"`
	Trusted bool               `json:"trusted"`
	Trust   string             `json:"trust"`
	Counts  bundle.Counts      `json:"counts"`
	Worlds  []bundle.HeldWorld `json:"worlds"`
}

// ImportInput is the import dialog's choice.
type ImportInput struct {
	Path string `json:"path"`
	// AllowUnsigned imports a bundle that is unsigned or signed by a key
	// this installation does not know: the user's explicit decision.
	AllowUnsigned bool   `json:"allowUnsigned"`
	Op            string `json:"op"`
}

// The reasons an import writes nothing.
const (
	// RefusedUntrusted: the bundle is sound, but unsigned or signed by an
	// unknown key, and the user has not chosen to import it anyway.
	RefusedUntrusted = "untrusted"
	// RefusedInvalid: the bundle failed verification, or it disagrees with
	// what this installation holds.
	RefusedInvalid = "invalid"
)

// ImportResult is what an import did: everything or nothing.
type ImportResult struct {
	Report BundleReport `json:"report"`
	// Imported: the bundle was written (possibly adding nothing new).
	Imported bool `json:"imported"`
	// Refused says why nothing was written (RefusedUntrusted or
	// RefusedInvalid), Problem in a sentence.
	Refused        string        `json:"refused,omitempty"`
	Problem        string        `json:"problem,omitempty"`
	Added          bundle.Counts `json:"added"`
	Updated        int64         `json:"updated"`
	AlreadyPresent bool          `json:"alreadyPresent"`
	// AddedIDs are the worlds and runs that are new here.
	AddedIDs []string `json:"addedIds"`
}

// ExportBundle writes a run or a world (and, by scope, its ancestry or
// descendants) to one signed .ducklm file.
func (a *API) ExportBundle(in ExportInput) (ExportResult, error) {
	if err := a.ready(); err != nil {
		return ExportResult{}, err
	}
	opts := bundle.FileOptions{KeyDir: a.svc.Dir, Replace: in.Replace}
	switch in.Scope {
	case ScopeAlone, "":
		in.Scope = ScopeAlone
	case ScopeAncestry:
		opts.Ancestry = true
	case ScopeDescendants:
		opts.Descendants = true
	case ScopeAll:
		opts.Ancestry, opts.Descendants = true, true
	default:
		return ExportResult{}, a.fail("export", backend.Errorf(backend.EINVALID,
			"the scope %q is not one of alone, ancestry, descendants or all", in.Scope))
	}
	path, err := fullPath(in.Path, "where to write the bundle")
	if err != nil {
		return ExportResult{}, a.fail("export", err)
	}
	opts.Progress = a.bundleProgress(in.Op)
	ex, err := bundle.ExportFile(a.ctx(), a.svc.Bundles(), in.Root, path, opts)
	if errors.Is(err, bundle.ErrNeedsAncestry) {
		err = backend.Errorf(backend.EINVALID, "%s comes from a fork, so its history starts in its ancestors' runs: choose “with its ancestry” to export them with it", in.Root)
	}
	if err != nil {
		return ExportResult{}, a.fail("export", err)
	}
	a.log.Info("bundle exported", "root", in.Root, "scope", in.Scope, "file", ex.File, "bytes", ex.Bytes)
	return ExportResult{File: ex.File, Bytes: ex.Bytes, Signer: ex.Signer, Root: in.Root, Scope: in.Scope, Counts: ex.Manifest.Counts}, nil
}

// VerifyBundle checks a bundle file completely without writing anything:
// its manifest, signature and signer, every entry's digest, every record
// and every reference. A bad bundle is a report with its first problem;
// the error is for a path that names no readable file.
func (a *API) VerifyBundle(path, op string) (BundleReport, error) {
	if err := a.ready(); err != nil {
		return BundleReport{}, err
	}
	path, err := fullPath(path, "a bundle file to check")
	if err != nil {
		return BundleReport{}, a.fail("verify bundle", err)
	}
	size, err := fileSize(path)
	if err != nil {
		return BundleReport{}, a.fail("verify bundle", err)
	}
	rep, err := a.svc.VerifyBundle(a.ctx(), path, a.bundleProgress(op))
	if err != nil && !bundle.IsProblem(err) {
		return BundleReport{}, a.fail("verify bundle", err)
	}
	if err != nil {
		a.log.Warn("bundle failed verification", "file", path, "err", err)
	}
	return reportOf(path, size, rep), nil
}

// ImportBundle verifies a bundle file and, when it is sound and its signer
// trusted (or the user chose to import it anyway), writes all of it in one
// transaction. A refused bundle is an answer saying why, with nothing
// written; the error is for a path that names no readable file or a
// failure of this installation.
func (a *API) ImportBundle(in ImportInput) (ImportResult, error) {
	if err := a.ready(); err != nil {
		return ImportResult{}, err
	}
	path, err := fullPath(in.Path, "a bundle file to import")
	if err != nil {
		return ImportResult{}, a.fail("import", err)
	}
	size, err := fileSize(path)
	if err != nil {
		return ImportResult{}, a.fail("import", err)
	}
	res, err := a.svc.ImportBundle(a.ctx(), path, in.AllowUnsigned, a.bundleProgress(in.Op))
	out := ImportResult{Report: reportOf(path, size, res.Report), AddedIDs: nonNil(res.AddedIDs)}
	switch {
	case err == nil:
		out.Imported, out.Added, out.Updated, out.AlreadyPresent = true, res.Added, res.Updated, res.AlreadyPresent()
		a.log.Info("bundle imported", "file", path, "added", res.Added.String(), "updated", res.Updated)
		return out, nil
	case errors.Is(err, bundle.ErrUntrusted):
		out.Refused = RefusedUntrusted
		out.Problem = "The bundle is unsigned, so nothing vouches for where it came from; nothing was written. Import it anyway only if you trust where the file came from."
		if res.Signed {
			out.Problem = fmt.Sprintf("The bundle is signed by a key this installation does not know (%s); nothing was written. Import it anyway if you trust where the file came from, or add the key to %s to trust it from now on.",
				bundle.FormatFingerprint(res.Signer), bundle.TrustedKeysPath(a.svc.Dir))
		}
	case bundle.IsProblem(err):
		out.Refused = RefusedInvalid
		out.Problem = strings.TrimSuffix(backend.ErrorMessage(err), ".") + "; nothing was written."
	default:
		return ImportResult{}, a.fail("import", err)
	}
	a.log.Warn("bundle import refused", "file", path, "why", out.Refused, "err", err)
	return out, nil
}

// TrustSigner adds a bundle signer's fingerprint to this installation's
// trusted_keys, with the file it came from as a note, and reports whether it
// was added (false: trusted already). Bundles it signs then import without
// asking.
func (a *API) TrustSigner(fingerprint, from string) (bool, error) {
	if err := a.ready(); err != nil {
		return false, err
	}
	note := "trusted from the window"
	if from != "" {
		note += " for " + filepath.Base(from)
	}
	added, err := bundle.TrustSigner(a.svc.Dir, fingerprint, note)
	return added, a.fail("trust signer", err)
}

// TrustedSigner is a signer this installation trusts.
type TrustedSigner struct {
	// Fingerprint is 64 hex digits; Formatted the same in groups of four.
	Fingerprint string `json:"fingerprint"`
	Formatted   string `json:"formatted"`
	// Note is the comment beside it in trusted_keys ("" for none).
	Note string `json:"note"`
}

// TrustedSigners is who this installation trusts, and who it signs as.
type TrustedSigners struct {
	// Own is the fingerprint this installation's bundles are signed with,
	// in groups of four; OwnFingerprint the same as 64 hex digits. Its own
	// bundles are always trusted here.
	Own            string `json:"own"`
	OwnFingerprint string `json:"ownFingerprint"`
	// Signers are the signers listed in File, in its order.
	Signers []TrustedSigner `json:"signers"`
	File    string          `json:"file"`
}

// TrustedSigners lists the signers whose bundles import without asking,
// and this installation's own signing fingerprint (making its key now if
// it has none yet, so it can be given to others before a first export).
func (a *API) TrustedSigners() (TrustedSigners, error) {
	if err := a.ready(); err != nil {
		return TrustedSigners{}, err
	}
	key, err := bundle.LoadOrCreateKey(a.svc.Dir)
	if err != nil {
		return TrustedSigners{}, a.fail("trusted signers", err)
	}
	listed, err := bundle.TrustedSigners(a.svc.Dir)
	if err != nil {
		return TrustedSigners{}, a.fail("trusted signers", err)
	}
	out := TrustedSigners{Own: bundle.FormatFingerprint(key.Fingerprint()), OwnFingerprint: key.Fingerprint(),
		Signers: make([]TrustedSigner, 0, len(listed)), File: bundle.TrustedKeysPath(a.svc.Dir)}
	for _, s := range listed {
		out.Signers = append(out.Signers, TrustedSigner{Fingerprint: s.Fingerprint, Formatted: bundle.FormatFingerprint(s.Fingerprint), Note: s.Note})
	}
	return out, nil
}

// ForgetSigner stops trusting a signer: its fingerprint leaves
// trusted_keys, and its bundles ask again before they import. False when it
// was not listed.
func (a *API) ForgetSigner(fingerprint string) (bool, error) {
	if err := a.ready(); err != nil {
		return false, err
	}
	forgot, err := bundle.ForgetSigner(a.svc.Dir, fingerprint)
	if err != nil {
		return false, a.fail("forget signer", err)
	}
	if forgot {
		a.log.Info("signer no longer trusted", "fingerprint", bundle.NormalizeFingerprint(fingerprint))
	}
	return forgot, nil
}

// NativeDialogs reports whether this user interface has native file
// dialogs: the desktop window does; a browser types paths instead.
func (a *API) NativeDialogs() bool { return a.dialogs != nil }

// ChooseBundleToSave opens the native save dialog for a bundle file named
// after name (desktop window only); "" when the user cancels.
func (a *API) ChooseBundleToSave(title, name string) (string, error) {
	if a.dialogs == nil {
		return "", a.fail("choose bundle", noDialogs())
	}
	return a.dialogs.SaveFile(FileDialog{Title: title, DefaultDir: bundleDir(), DefaultName: fileName(name),
		Pattern: "*" + bundleExt, PatternName: "ducklm bundles (*" + bundleExt + ")"})
}

// ChooseBundleToOpen opens the native open dialog for a bundle file
// (desktop window only); "" when the user cancels.
func (a *API) ChooseBundleToOpen(title string) (string, error) {
	if a.dialogs == nil {
		return "", a.fail("choose bundle", noDialogs())
	}
	return a.dialogs.OpenFile(FileDialog{Title: title, DefaultDir: bundleDir(),
		Pattern: "*" + bundleExt, PatternName: "ducklm bundles (*" + bundleExt + ")"})
}

// SuggestBundlePath proposes a full path for a new bundle named after name
// that does not exist yet, in the Documents folder (else the home folder).
func (a *API) SuggestBundlePath(name string) (string, error) {
	dir := bundleDir()
	if dir == "" {
		return "", a.fail("suggest path", backend.Errorf(backend.EUNAVAILABLE, "this machine has no home folder to suggest; type a full path"))
	}
	base := strings.TrimSuffix(fileName(name), bundleExt)
	path := filepath.Join(dir, base+bundleExt)
	for i := 2; ; i++ {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			return path, nil
		}
		path = filepath.Join(dir, fmt.Sprintf("%s-%d%s", base, i, bundleExt))
	}
}

// bundleProgress reports a bundle's progress under op, in bytes.
func (a *API) bundleProgress(op string) func(bundle.Progress) {
	report := service.Reporter(a.svc.Progress, op)
	return func(p bundle.Progress) { report(p.Phase, p.Bytes, p.TotalBytes, "bytes") }
}

func reportOf(path string, size int64, r bundle.Report) BundleReport {
	m := r.Manifest
	out := BundleReport{File: path, Bytes: size, OK: r.OK, Problem: r.Problem, Checks: r.Checks,
		FormatVersion: m.FormatVersion, AppVersion: m.AppVersion, Roots: nonNil(m.Roots), Scope: m.Scope,
		Entries: len(m.Entries), Signed: r.Signed, Signer: r.Signer, Trusted: r.Known, Trust: r.Trust,
		Counts: r.Counts, Worlds: r.Worlds}
	if !m.CreatedAt.IsZero() {
		t := m.CreatedAt
		out.CreatedAt = &t
	}
	if out.Worlds == nil {
		out.Worlds = []bundle.HeldWorld{}
	}
	return out
}

// fullPath expands a leading "~/" and requires an absolute path: a
// relative one would be relative to wherever ducklm was started.
func fullPath(path, what string) (string, error) {
	path = strings.TrimSpace(path)
	if path == "" {
		return "", backend.Errorf(backend.EINVALID, "choose %s", what)
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[1:])
		}
	}
	if !filepath.IsAbs(path) {
		return "", backend.Errorf(backend.EINVALID, "%s is not a full path; give the whole path, starting with / (for example /home/you/%s)", path, filepath.Base(path))
	}
	return filepath.Clean(path), nil
}

// fileSize checks that path names a readable file and returns its size.
func fileSize(path string) (int64, error) {
	f, err := bundle.OpenFile(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %s", path)
	}
	return st.Size(), nil
}

func noDialogs() error {
	return backend.Errorf(backend.EUNAVAILABLE, "file dialogs exist only in the desktop window; type the path instead")
}

// bundleDir is where dialogs open and paths are suggested.
func bundleDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	if st, err := os.Stat(filepath.Join(home, "Documents")); err == nil && st.IsDir() {
		return filepath.Join(home, "Documents")
	}
	return home
}

// fileName turns a world's name into a safe bundle file name.
func fileName(name string) string {
	var b strings.Builder
	for _, r := range strings.TrimSuffix(strings.TrimSpace(name), bundleExt) {
		switch {
		case r == '/' || r == '\\' || r < ' ' || r == 0x7f:
			b.WriteRune('-')
		case r == ' ':
			b.WriteRune('-')
		default:
			b.WriteRune(r)
		}
	}
	s := strings.Trim(b.String(), "-.")
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	if s == "" {
		s = "export"
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s + bundleExt
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
