package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/sqlite"
)

// bundleCommands export, check and import .ducklm bundles.
var bundleCommands = []worldCommand{
	{name: "export", args: "RUN|WORLD -o FILE [--ancestry] [--descendants] [--json]",
		summary: "write a run or world (with --ancestry, --descendants) to one signed .ducklm file", run: runExport, top: true},
	{name: "verify", args: "FILE [--json]",
		summary: "check a .ducklm bundle: digests, signature and signer, references (exit 1 when bad)", run: runVerifyBundle, top: true},
	{name: "import", args: "FILE [--allow-unsigned] [--json]",
		summary: "import a .ducklm bundle; nothing is written unless all of it checks out", write: true, run: runImport, top: true},
}

func init() {
	for _, c := range bundleCommands {
		register(c.name, c.summary, c.usage(), c.exec)
	}
}

// local is the data directory as bundles see it.
func (s *session) local() bundle.Local {
	return bundle.Local{Store: sqlite.NewWorlds(s.svc.DB, s.svc.Ledger), Events: s.svc.Ledger, Blobs: s.svc.Blobs}
}

// progressFrom is the size from which a bundle's progress is shown.
const progressFrom = 16 << 20

// progress prints a line each time another tenth of a big bundle is done.
func (s *session) progress() func(bundle.Progress) {
	last := -1
	return func(p bundle.Progress) {
		if p.TotalBytes < progressFrom {
			return
		}
		tenth := 10
		if p.TotalBytes > 0 {
			tenth = int(p.Bytes * 10 / p.TotalBytes)
		}
		if tenth == last {
			return
		}
		last = tenth
		fmt.Fprintf(s.env.Stderr, "%s: %d/%d entries, %s of %s\n", p.Phase, p.Entries, p.TotalEntries, size(p.Bytes), size(p.TotalBytes))
	}
}

func runExport(s *session, args []string) error {
	fs := s.flags()
	var out string
	fs.StringVar(&out, "o", "", "output file")
	fs.StringVar(&out, "output", "", "output file")
	ancestry := fs.Bool("ancestry", false, "include ancestors")
	descendants := fs.Bool("descendants", false, "include descendants")
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	root := pos[0]
	if kind, err := backend.KindOf(root); err != nil {
		return needID(root, backend.KindRun)
	} else if kind != backend.KindRun && kind != backend.KindWorld {
		return backend.Errorf(backend.EINVALID, "%s is a %s id; export takes a run or a world", root, kind)
	}
	if out == "" {
		return s.cmd.bad("export needs -o FILE")
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return backend.Errorf(backend.EINVALID, "%s is a folder; -o names the bundle file to write", out)
	}
	dir := filepath.Dir(out)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return backend.Errorf(backend.EINVALID, "there is no folder %s to write %s in", dir, filepath.Base(out))
	}
	if err := s.open(); err != nil {
		return err
	}
	// An unknown root is refused before the first export makes a key.
	if strings.HasPrefix(root, string(backend.KindRun)+"_") {
		_, err = s.svc.Worlds.Run(s.ctx, root)
	} else {
		_, err = s.svc.Worlds.Spec(s.ctx, root)
	}
	if err != nil {
		return err
	}
	key, err := bundle.LoadOrCreateKey(s.svc.Dir)
	if err != nil {
		return err
	}
	// The bundle appears under its name only once it is whole.
	tmp, err := os.CreateTemp(dir, ".ducklm-export-*")
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write in %s", dir)
	}
	defer os.Remove(tmp.Name())
	m, err := bundle.Export(s.ctx, s.local(), root, tmp, bundle.ExportOptions{
		Ancestry: *ancestry, Descendants: *descendants, Key: &key, TempDir: dir, Progress: s.progress(),
	})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = backend.Wrap(cerr, backend.EUNAVAILABLE, "cannot write %s", out)
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", out)
	}
	st, _ := os.Stat(out)
	type exportOut struct {
		File     string          `json:"file"`
		Bytes    int64           `json:"bytes"`
		Signer   string          `json:"signer"`
		Manifest bundle.Manifest `json:"manifest"`
	}
	return s.out(exportOut{File: out, Bytes: st.Size(), Signer: key.Fingerprint(), Manifest: m}, func(w io.Writer) {
		fmt.Fprintf(w, "bundle: %s (%s)\nroot: %s\n", out, size(st.Size()), root)
		fmt.Fprintf(w, "contains: %s\n", m.Counts)
		fmt.Fprintf(w, "signer: %s\n", bundle.FormatFingerprint(key.Fingerprint()))
	})
}

// openBundle checks the FILE argument before anything else is touched.
func openBundle(path string) (*os.File, error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, backend.Errorf(backend.EINVALID, "there is no file %s", path)
	case err != nil:
		return nil, backend.Errorf(backend.EINVALID, "cannot read %s", path)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, backend.Errorf(backend.EINVALID, "%s is not a file", path)
	}
	return f, nil
}

// bundleProblem reports whether err is about the bundle (exit 1) rather
// than about the command or this machine.
func bundleProblem(err error) bool {
	switch backend.ErrorCode(err) {
	case backend.ECORRUPT, backend.ELIMIT, backend.ECONFLICT:
		return true
	}
	return errors.Is(err, bundle.ErrUntrusted)
}

func runVerifyBundle(s *session, args []string) error {
	fs := s.flags()
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	f, err := openBundle(pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	if err := s.open(); err != nil {
		return err
	}
	trust, err := bundle.LoadTrust(s.svc.Dir)
	if err != nil {
		return err
	}
	rep, err := bundle.Verify(s.ctx, s.local(), f, bundle.VerifyOptions{Trust: trust, Progress: s.progress()})
	if err != nil && !bundleProblem(err) {
		return err
	}
	if oerr := s.out(rep, func(w io.Writer) { printReport(w, pos[0], rep) }); oerr != nil {
		return oerr
	}
	if err != nil {
		return errExit{ExitFail}
	}
	return nil
}

func printReport(w io.Writer, file string, rep bundle.Report) {
	fmt.Fprintf(w, "bundle: %s\n", file)
	if m := rep.Manifest; m.FormatVersion != 0 {
		fmt.Fprintf(w, "format: %d (written by ducklm %s on %s)\n", m.FormatVersion, m.AppVersion, m.CreatedAt.Format("2006-01-02 15:04:05 MST"))
		fmt.Fprintf(w, "roots: %s\n", strings.Join(m.Roots, ", "))
		var scope []string
		if m.Scope.Ancestry {
			scope = append(scope, "ancestry")
		}
		if m.Scope.Descendants {
			scope = append(scope, "descendants")
		}
		if len(scope) > 0 {
			fmt.Fprintf(w, "scope: %s\n", strings.Join(scope, ", "))
		}
	}
	switch {
	case rep.Signed && rep.Known:
		fmt.Fprintf(w, "signer: %s (known: %s)\n", bundle.FormatFingerprint(rep.Signer), rep.Trust)
	case rep.Signed:
		fmt.Fprintf(w, "signer: %s (unknown: add it to trusted_keys to trust it)\n", bundle.FormatFingerprint(rep.Signer))
	case rep.Manifest.FormatVersion != 0 && rep.OK:
		fmt.Fprintln(w, "signer: none (the bundle is unsigned)")
	}
	if rep.OK {
		fmt.Fprintf(w, "contains: %s\n", rep.Counts)
		fmt.Fprintln(w, "result: ok")
		return
	}
	fmt.Fprintf(w, "result: bad bundle: %s\n", rep.Problem)
}

func runImport(s *session, args []string) error {
	fs := s.flags()
	allow := fs.Bool("allow-unsigned", false, "accept an unsigned or unknown-signer bundle")
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	f, err := openBundle(pos[0])
	if err != nil {
		return err
	}
	f.Close()
	if err := s.open(); err != nil {
		return err
	}
	trust, err := bundle.LoadTrust(s.svc.Dir)
	if err != nil {
		return err
	}
	res, err := bundle.ImportFile(s.ctx, s.local(), s.svc.Ledger, pos[0], bundle.ImportOptions{
		VerifyOptions: bundle.VerifyOptions{Trust: trust, Progress: s.progress()}, AllowUnsigned: *allow,
	})
	if err != nil {
		if !bundleProblem(err) {
			return err
		}
		if s.json {
			_ = s.out(res, func(io.Writer) {})
		}
		fmt.Fprintf(s.env.Stderr, "ducklm import: %s (nothing was written)\n", strings.TrimSuffix(backend.ErrorMessage(err), "."))
		return errExit{ExitFail}
	}
	return s.out(res, func(w io.Writer) {
		fmt.Fprintf(w, "bundle: %s\n", pos[0])
		if res.Signed {
			why := res.Trust
			if !res.Known {
				why = "unknown, accepted with --allow-unsigned"
			}
			fmt.Fprintf(w, "signer: %s (%s)\n", bundle.FormatFingerprint(res.Signer), why)
		} else {
			fmt.Fprintln(w, "signer: none (accepted with --allow-unsigned)")
		}
		if res.AlreadyPresent() {
			fmt.Fprintf(w, "already present: nothing new (%s were here already)\n", res.Counts)
			return
		}
		fmt.Fprintf(w, "added: %s\n", res.Added)
		if res.Updated > 0 {
			fmt.Fprintf(w, "updated: %d runs moved on since they were last imported\n", res.Updated)
		}
		fmt.Fprintf(w, "roots: %s\n", strings.Join(res.Manifest.Roots, ", "))
	})
}

// size shows a byte count briefly.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
