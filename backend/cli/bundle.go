package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"ducklm/backend"
	"ducklm/backend/bundle"
)

// bundleCommands export, check and import .ducklm bundles.
var bundleCommands = []worldCommand{
	{name: "export", args: "RUN|WORLD -o FILE [--ancestry] [--descendants] [--json]",
		summary: "write a run or world (with --ancestry, --descendants) to one signed .ducklm file", run: runExport, top: true},
	{name: "verify", args: "FILE [--json]",
		summary: "check a .ducklm bundle: digests, signature and signer, references (exit 1 when bad)", run: runVerifyBundle, top: true},
	{name: "import", args: "FILE [--trust | --allow-unsigned] [--json]",
		summary: "import a .ducklm bundle; nothing is written unless all of it checks out", write: true, run: runImport, top: true},
}

func init() {
	for _, c := range bundleCommands {
		register(c.name, c.summary, c.usage(), c.exec)
	}
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
	if err := bundle.CheckOutput(out); err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	ex, err := bundle.ExportFile(s.ctx, s.svc.Bundles(), root, out, bundle.FileOptions{KeyDir: s.svc.Dir, Replace: true,
		ExportOptions: bundle.ExportOptions{Ancestry: *ancestry, Descendants: *descendants, Progress: s.progress()}})
	if err != nil {
		return err
	}
	return s.out(ex, func(w io.Writer) {
		fmt.Fprintf(w, "bundle: %s (%s)\nroot: %s\n", out, size(ex.Bytes), root)
		fmt.Fprintf(w, "contains: %s\n", ex.Manifest.Counts)
		fmt.Fprintf(w, "signer: %s\n", bundle.FormatFingerprint(ex.Signer))
	})
}

// openBundle checks that path names a readable file before the data
// directory is opened, then opens it.
func (s *session) openBundle(path string) error {
	f, err := bundle.OpenFile(path)
	if err != nil {
		return err
	}
	f.Close()
	return s.open()
}

func runVerifyBundle(s *session, args []string) error {
	fs := s.flags()
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := s.openBundle(pos[0]); err != nil {
		return err
	}
	rep, err := s.svc.VerifyBundle(s.ctx, pos[0], s.progress())
	if err != nil && !bundle.IsProblem(err) {
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
		fmt.Fprintf(w, "signer: %s (unknown: ducklm import --trust trusts it)\n", bundle.FormatFingerprint(rep.Signer))
	case rep.Manifest.FormatVersion != 0 && rep.OK:
		fmt.Fprintln(w, "signer: none (the bundle is unsigned)")
	}
	if rep.OK {
		fmt.Fprintf(w, "contains: %s\n", rep.Counts)
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		fmt.Fprintln(w, "result: ok")
		return
	}
	fmt.Fprintf(w, "result: bad bundle: %s\n", rep.Problem)
}

func runImport(s *session, args []string) error {
	fs := s.flags()
	allow := fs.Bool("allow-unsigned", false, "accept an unsigned or unknown-signer bundle")
	trust := fs.Bool("trust", false, "trust the signer of a bundle that checks out from now on (trusted_keys), and import it")
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *trust && *allow {
		return s.cmd.bad("--trust and --allow-unsigned are two answers to one question: give one")
	}
	if err := s.openBundle(pos[0]); err != nil {
		return err
	}
	trusted, err := s.trustSigner(pos[0], *trust)
	if err != nil {
		return err
	}
	res, err := s.svc.ImportBundle(s.ctx, pos[0], *allow, s.progress())
	if err != nil && trusted != "" {
		// A refused bundle's signer is not trusted after all.
		if _, ferr := bundle.ForgetSigner(s.svc.Dir, trusted); ferr != nil {
			return ferr
		}
	}
	if err != nil {
		if !bundle.IsProblem(err) {
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
			switch {
			case trusted != "":
				why = "trusted from now on (--trust)"
			case !res.Known:
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

// trustSigner, when asked to (import --trust), adds the signer of the
// bundle at file to trusted_keys if the bundle checks out and its signer
// is not known yet, and returns it ("" when it added none). A bundle that
// does not check out, or is unsigned, is left for the import to refuse.
func (s *session) trustSigner(file string, asked bool) (string, error) {
	if !asked {
		return "", nil
	}
	rep, err := s.svc.VerifyBundle(s.ctx, file, s.progress())
	if err != nil && !bundle.IsProblem(err) {
		return "", err
	}
	if err != nil || !rep.OK || !rep.Signed || rep.Known {
		return "", nil
	}
	added, err := bundle.TrustSigner(s.svc.Dir, rep.Signer, "trusted with ducklm import --trust for "+filepath.Base(file))
	if err != nil || !added {
		return "", err
	}
	return rep.Signer, nil
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
