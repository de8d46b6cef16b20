package bundle

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ducklm/backend"
)

// FileOptions tune ExportFile.
type FileOptions struct {
	ExportOptions
	// KeyDir signs the bundle with the key of this data directory, made on
	// its first export once the root is known to exist. "" signs with
	// ExportOptions.Key as given (nil: unsigned).
	KeyDir string
	// Replace lets the bundle take the place of an existing file; without
	// it an existing file is refused and left as it was.
	Replace bool
}

// Exported is a bundle written to a file.
type Exported struct {
	File     string   `json:"file"`
	Bytes    int64    `json:"bytes"`
	Signer   string   `json:"signer"` // "" when unsigned
	Manifest Manifest `json:"manifest"`
}

// CheckOutput checks that path can name the bundle file to write: it is
// given, it is not a folder and its folder exists.
func CheckOutput(path string) error {
	if strings.TrimSpace(path) == "" {
		return backend.Errorf(backend.EINVALID, "choose where to write the bundle: a file name such as export.ducklm")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return backend.Errorf(backend.EINVALID, "%s is a folder; name the bundle file to write in it, such as %s", path, filepath.Join(path, "export.ducklm"))
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return backend.Errorf(backend.EINVALID, "there is no folder %s to write %s in", dir, filepath.Base(path))
	}
	return nil
}

// CheckRoot checks that root is the id of a run or a world stored in st.
func CheckRoot(ctx context.Context, st Store, root string) error {
	kind, err := backend.KindOf(root)
	if err != nil {
		return backend.Errorf(backend.EINVALID, "%s is not a run or world id", quote(root))
	}
	switch kind {
	case backend.KindRun:
		_, err = st.GetRun(ctx, root)
	case backend.KindWorld:
		_, err = st.GetSpec(ctx, root)
	default:
		return backend.Errorf(backend.EINVALID, "%s is a %s id; export takes a run or a world", root, kind)
	}
	return err
}

// ExportFile writes the bundle of root to the file path. Everything that
// can be checked is checked before a key is made or a byte is written; the
// bundle is written to a temporary file in the same folder, synced, and
// only then takes its name, so path never holds half a bundle.
func ExportFile(ctx context.Context, local Local, root, path string, opts FileOptions) (Exported, error) {
	if err := CheckOutput(path); err != nil {
		return Exported{}, err
	}
	if !opts.Replace {
		if _, err := os.Lstat(path); err == nil {
			return Exported{}, backend.Errorf(backend.EINVALID, "%s already exists; choose another name, or replace it", path)
		}
	}
	if err := CheckRoot(ctx, local.Store, root); err != nil {
		return Exported{}, err
	}
	if opts.KeyDir != "" {
		key, err := LoadOrCreateKey(opts.KeyDir)
		if err != nil {
			return Exported{}, err
		}
		opts.Key = &key
	}
	dir := filepath.Dir(path)
	if opts.TempDir == "" {
		opts.TempDir = dir
	}
	tmp, err := os.CreateTemp(dir, ".ducklm-export-*")
	if err != nil {
		return Exported{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write in %s", dir)
	}
	defer os.Remove(tmp.Name())
	m, err := Export(ctx, local, root, tmp, opts.ExportOptions)
	if err == nil {
		if err = tmp.Sync(); err != nil {
			err = backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", path)
		}
	}
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = backend.Wrap(cerr, backend.EUNAVAILABLE, "cannot write %s", path)
	}
	if err != nil {
		return Exported{}, err
	}
	if opts.Replace {
		err = os.Rename(tmp.Name(), path)
	} else if err = os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		// Someone made the file while the bundle was being written.
		return Exported{}, backend.Errorf(backend.EINVALID, "%s already exists; choose another name, or replace it", path)
	}
	if err != nil {
		return Exported{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write %s", path)
	}
	ex := Exported{File: path, Manifest: m}
	if st, err := os.Stat(path); err == nil {
		ex.Bytes = st.Size()
	}
	if opts.Key != nil {
		ex.Signer = opts.Key.Fingerprint()
	}
	return ex, nil
}

// OpenFile opens the bundle file at path, with a sentence when there is
// none or it is not a regular file.
func OpenFile(path string) (*os.File, error) {
	if strings.TrimSpace(path) == "" {
		return nil, backend.Errorf(backend.EINVALID, "choose a bundle file to open (a .ducklm file)")
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, backend.Errorf(backend.EINVALID, "There is no file %s. Check the path: a bundle is the .ducklm file an export wrote", path)
	case err != nil:
		return nil, backend.Wrap(err, backend.EINVALID, "cannot read %s", path)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, backend.Errorf(backend.EINVALID, "%s is not a file. Choose the .ducklm file itself, not its folder", path)
	}
	return f, nil
}

// VerifyFile verifies the bundle file at path. See Verify.
func VerifyFile(ctx context.Context, local Local, path string, opts VerifyOptions) (Report, error) {
	f, err := OpenFile(path)
	if err != nil {
		return Report{Trust: "unsigned", Problem: backend.ErrorMessage(err)}, err
	}
	defer f.Close()
	c, err := verify(ctx, local, f, opts)
	if err == nil {
		err = c.replay(ctx, openFile(path), limitsOf(opts))
	}
	if err != nil {
		c.report.OK = false
		c.report.Problem = backend.ErrorMessage(err)
		return c.report, err
	}
	return c.report, nil
}

// limitsOf is the limits a verification runs under.
func limitsOf(opts VerifyOptions) Limits {
	if opts.Limits == (Limits{}) {
		return DefaultLimits()
	}
	return opts.Limits
}

// openFile is OpenFile for Import, which reads the file twice.
func openFile(path string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		f, err := OpenFile(path)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}
