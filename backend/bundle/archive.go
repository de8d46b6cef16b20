package bundle

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"time"

	"github.com/klauspost/compress/zstd"

	"ducklm/backend"
)

// entryOverhead bounds the tar bytes around one entry's content: its header
// block, a PAX header for a size past 8 GiB, and padding to 512 bytes.
const entryOverhead = 4 << 10

// reader reads a bundle archive once, front to back. Every header is
// checked before its content is read: regular files only, known names
// only, sizes within the limits and equal to what the manifest declares.
// Decompressed bytes are counted, so an archive that expands past what it
// declares is refused as soon as it does.
type reader struct {
	zr     *zstd.Decoder
	budget *budgetReader
	tr     *tar.Reader
	limits Limits
	count  int // headers read
}

func newReader(r io.Reader, limits Limits) (*reader, error) {
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(limits.MaxWindowBytes), zstd.WithDecoderMaxMemory(uint64(limits.MaxTotalBytes)))
	if err != nil {
		return nil, corrupt("the file is not a ducklm bundle (it is not zstd-compressed)")
	}
	// Until the manifest says how big the rest is, only it may be read.
	b := &budgetReader{r: zr, max: limits.manifestBytes() + limits.MaxSignatureSize + 4*entryOverhead}
	return &reader{zr: zr, budget: b, tr: tar.NewReader(b), limits: limits}, nil
}

func (r *reader) close() { r.zr.Close() }

// allow sets the decompressed byte budget once the manifest is known.
func (r *reader) allow(m Manifest, manifestSize int64) {
	total := manifestSize + r.limits.MaxSignatureSize + int64(len(m.Entries)+4)*entryOverhead
	for _, e := range m.Entries {
		total += e.Size
	}
	r.budget.max = total
}

// next returns the next entry's header, checked, or io.EOF at the end.
func (r *reader) next() (*tar.Header, error) {
	h, err := r.tr.Next()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, r.wrap(err)
	}
	r.count++
	if r.count > r.limits.MaxEntries+2 {
		return nil, backend.Errorf(backend.ELIMIT, "the bundle has more than %d entries", r.limits.MaxEntries)
	}
	if h.Typeflag != tar.TypeReg {
		return nil, corrupt("entry %s is %s; a bundle holds regular files only", quote(h.Name), typeName(h.Typeflag))
	}
	k, _ := classify(h.Name)
	if k == kindBad {
		return nil, corrupt("entry %s has a name no bundle uses (absolute paths, .. and unknown folders are refused)", quote(h.Name))
	}
	max := r.limits.MaxEntryBytes
	switch k {
	case kindManifest:
		max = r.limits.manifestBytes()
	case kindRecords:
		max = r.limits.MaxRecordsBytes
	case kindSignature:
		max = r.limits.MaxSignatureSize
	}
	if h.Size < 0 || h.Size > max {
		return nil, backend.Errorf(backend.ELIMIT, "entry %s is %s, past the limit of %s", quote(h.Name), byteSize(h.Size), byteSize(max))
	}
	return h, nil
}

// wrap turns a read failure into a sentence about the bundle.
func (r *reader) wrap(err error) error {
	var e *backend.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt("the bundle is truncated (it ends in the middle of an entry)")
	}
	if errors.Is(err, tar.ErrHeader) || errors.Is(err, tar.ErrInsecurePath) {
		return corrupt("the bundle's archive is damaged (%v)", err)
	}
	return corrupt("the bundle cannot be read: %v", err)
}

// readAll reads a small entry whole.
// Memory grows with what arrives, not with what the header promises.
func (r *reader) readAll(h *tar.Header) ([]byte, error) {
	data, err := io.ReadAll(r.tr)
	if err != nil {
		return nil, r.wrap(err)
	}
	if int64(len(data)) != h.Size {
		return nil, corrupt("the bundle is truncated (it ends in the middle of %s)", h.Name)
	}
	return data, nil
}

// open returns the content of the current entry, checked against want: its
// Read returns an ECORRUPT error instead of io.EOF when the size or the
// digest differs from the manifest.
func (r *reader) open(h *tar.Header, want Entry) (*entryReader, error) {
	if h.Name != want.Name {
		return nil, corrupt("entry %s comes where the manifest lists %s", quote(h.Name), want.Name)
	}
	if h.Size != want.Size {
		return nil, corrupt("entry %s is %s, but the manifest says %d bytes; it was refused before being read", h.Name, byteSize(h.Size), want.Size)
	}
	return &entryReader{r: r, h: sha256.New(), want: want}, nil
}

// entryReader hashes an entry as it is read and checks it at the end.
type entryReader struct {
	r    *reader
	h    hash.Hash
	n    int64
	want Entry
	err  error // sticky: io.EOF once checked, or what went wrong
}

func (e *entryReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.r.tr.Read(p)
	e.h.Write(p[:n])
	e.n += int64(n)
	switch {
	case errors.Is(err, io.EOF):
		e.err = io.EOF
		if e.n != e.want.Size {
			e.err = corrupt("entry %s is shorter than the manifest says", e.want.Name)
		} else if got := hex.EncodeToString(e.h.Sum(nil)); got != e.want.SHA256 {
			e.err = corrupt("entry %s has been altered (its sha256 is %s…, but the manifest says %s…)", e.want.Name, got[:16], e.want.SHA256[:16])
		}
	case err != nil:
		e.err = e.r.wrap(err)
	}
	return n, e.err
}

// finish reads what is left of the entry and reports whether it matched.
func (e *entryReader) finish() error {
	_, err := io.Copy(io.Discard, e)
	return err
}

// budgetReader fails once more than max bytes have come out of r.
type budgetReader struct {
	r   io.Reader
	n   int64
	max int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.n > b.max {
		return 0, b.err()
	}
	if rem := b.max - b.n + 1; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		return 0, b.err()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return n, corrupt("the bundle is truncated (its compressed data ends too early)")
		}
		if errors.Is(err, zstd.ErrMagicMismatch) && b.n == 0 {
			return n, corrupt("the file is not a ducklm bundle (it is not zstd-compressed)")
		}
		if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return n, backend.Errorf(backend.ELIMIT, "the bundle needs more memory to decompress than ducklm allows")
		}
		return n, corrupt("the bundle is damaged (its compressed data does not decode: %v)", err)
	}
	return n, err
}

func (b *budgetReader) err() error {
	return backend.Errorf(backend.ELIMIT, "the bundle decompresses to more than its manifest declares (%s); it was refused as a possible decompression bomb", byteSize(b.max))
}

// byteSize shows a size in bytes briefly.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// writer writes a bundle archive.
type writer struct {
	zw    *zstd.Encoder
	tw    *tar.Writer
	mtime time.Time
}

func newWriter(w io.Writer, mtime time.Time) (*writer, error) {
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(2))
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot start compressing the bundle")
	}
	return &writer{zw: zw, tw: tar.NewWriter(zw), mtime: mtime}, nil
}

// add writes one entry of exactly size bytes from r.
func (w *writer) add(name string, size int64, r io.Reader) error {
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: w.mtime}
	if err := w.tw.WriteHeader(h); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the bundle")
	}
	n, err := io.Copy(w.tw, r)
	if err != nil {
		var e *backend.Error
		if errors.As(err, &e) {
			return err
		}
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write entry %s of the bundle", name)
	}
	if n != size {
		return backend.Errorf(backend.EINTERNAL, "entry %s changed while it was exported (%d bytes, not %d)", name, n, size)
	}
	return nil
}

func (w *writer) close() error {
	if err := w.tw.Close(); err != nil {
		w.zw.Close()
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot finish the bundle")
	}
	if err := w.zw.Close(); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot finish the bundle")
	}
	return nil
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "a symbolic link"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "a device"
	case tar.TypeDir:
		return "a directory"
	case tar.TypeFifo:
		return "a named pipe"
	}
	return "not a regular file (type " + strconv.QuoteRune(rune(t)) + ")"
}

// quote shows an untrusted name safely and briefly.
func quote(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return fmt.Sprintf("%q", s)
}
