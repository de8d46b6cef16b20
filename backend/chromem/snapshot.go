package chromem

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"ducklm/backend"
)

// A snapshot file is
//
//	body | footer JSON | footer length (uint32 LE) | magic
//
// where the body is every document in id order (uvarint-prefixed id,
// content and metadata pairs, zero padding to a multiple of 4 bytes, then
// the little-endian float32 vector) and the
// footer names the model, the digest of the database state the documents
// were read from, their count and length, and the SHA-256 of the body.
// gob, chromem-go's own format, encodes 100k 384-dimension vectors ten
// times slower than this and decodes them thirty times slower.
const snapshotMagic = "ducklm-vectors/2"

type snapshotFooter struct {
	Model      string `json:"model"`
	Digest     string `json:"digest"`
	Dims       int    `json:"dims"`
	Count      int    `json:"count"`
	BodyBytes  int64  `json:"bodyBytes"`
	BodySHA256 string `json:"bodySha256"`
}

// ErrSnapshotMismatch says a snapshot exists but does not describe the
// wanted state (another model or digest, or a damaged file).
var ErrSnapshotMismatch = errors.New("the vector snapshot does not match the database")

// WriteSnapshot writes docs (all of one model, unit vectors of one length)
// to path atomically, stamped with digest: the caller's name for the
// database state the documents came from. The body streams to the file
// through a small buffer, hashed on the way.
func WriteSnapshot(path, model, digest string, docs []Doc) error {
	sorted := append([]Doc(nil), docs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	dims := 0
	if len(sorted) > 0 {
		dims = len(sorted[0].Vector)
	}
	for _, d := range sorted {
		if len(d.Vector) != dims {
			return backend.Errorf(backend.EINVALID, "cannot snapshot %s: its vector has %d dimensions, not %d", d.ID, len(d.Vector), dims)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot create the folder of the vector snapshot %s", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".snapshot-*")
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the vector snapshot %s", path)
	}
	defer os.Remove(tmp.Name())
	err = writeSnapshot(tmp, model, digest, dims, sorted)
	// No fsync: a torn snapshot fails its checksum and is rebuilt from the
	// database, which is the only thing that must survive a crash.
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the vector snapshot %s", path)
	}
	return nil
}

func writeSnapshot(f io.Writer, model, digest string, dims int, docs []Doc) error {
	w := bufio.NewWriterSize(f, 1<<20)
	sum := sha256.New()
	body := io.MultiWriter(w, sum)
	var n int64
	var rec []byte
	var keys []string
	for _, d := range docs {
		rec = appendString(rec[:0], d.ID)
		rec = appendString(rec, d.Content)
		keys = keys[:0]
		for k := range d.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		rec = binary.AppendUvarint(rec, uint64(len(keys)))
		for _, k := range keys {
			rec = appendString(rec, k)
			rec = appendString(rec, d.Meta[k])
		}
		// Vectors start 4-byte aligned in the body, so a reader on a
		// little-endian machine can use them in place.
		for (n+int64(len(rec)))%4 != 0 {
			rec = append(rec, 0)
		}
		rec = appendVector(rec, d.Vector)
		if _, err := body.Write(rec); err != nil {
			return err
		}
		n += int64(len(rec))
	}
	footer, _ := json.Marshal(snapshotFooter{Model: model, Digest: digest, Dims: dims, Count: len(docs),
		BodyBytes: n, BodySHA256: hex.EncodeToString(sum.Sum(nil))})
	footer = binary.LittleEndian.AppendUint32(footer, uint32(len(footer)))
	footer = append(footer, snapshotMagic...)
	if _, err := w.Write(footer); err != nil {
		return err
	}
	return w.Flush()
}

// ReadSnapshot returns the documents of the snapshot at path when it holds
// model at digest and its body is intact. A missing file is fs.ErrNotExist;
// any mismatch or damage is ErrSnapshotMismatch (with the reason).
func ReadSnapshot(path, model, digest string) ([]Doc, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, mismatch("unreadable: " + err.Error())
	}
	n := len(data)
	if n < len(snapshotMagic)+4 || string(data[n-len(snapshotMagic):]) != snapshotMagic {
		return nil, mismatch("not a ducklm vector snapshot")
	}
	flen := int(binary.LittleEndian.Uint32(data[n-len(snapshotMagic)-4:]))
	fend := n - len(snapshotMagic) - 4
	if flen > fend {
		return nil, mismatch("damaged footer")
	}
	var f snapshotFooter
	if err := json.Unmarshal(data[fend-flen:fend], &f); err != nil {
		return nil, mismatch("damaged footer")
	}
	switch {
	case f.Model != model:
		return nil, mismatch("it holds " + f.Model + ", not " + model)
	case f.Digest != digest:
		return nil, mismatch("the database changed since it was taken")
	case f.BodyBytes != int64(fend-flen):
		return nil, mismatch("its body has the wrong length")
	case f.Count < 0 || f.Dims < 0 || f.Dims > 1<<16 || (f.Count > 0 && f.Dims == 0) || int64(f.Count)*int64(4*f.Dims) > f.BodyBytes:
		return nil, mismatch("damaged footer")
	}
	body := data[:f.BodyBytes]
	// Hash on another core while the body is parsed.
	sumc := make(chan string, 1)
	go func() {
		s := sha256.Sum256(body)
		sumc <- hex.EncodeToString(s[:])
	}()
	docs, perr := parseBody(body, f)
	if sum := <-sumc; sum != f.BodySHA256 {
		return nil, mismatch("its checksum does not match")
	}
	if perr != nil {
		return nil, mismatch(perr.Error())
	}
	return docs, nil
}

// inPlace: on a little-endian machine the snapshot's vectors and strings
// are used where they lie in the file's buffer, which the reader owns and
// never writes, so loading 100k vectors copies nothing. The buffer lives as
// long as any document does.
var inPlace = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// appendVector appends v as little-endian float32s.
func appendVector(b []byte, v []float32) []byte {
	if inPlace && len(v) > 0 {
		return append(b, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))...)
	}
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func mismatch(why string) error {
	return &backend.Error{Code: backend.ECORRUPT, Message: "the vector snapshot is unusable (" + why + ")", Err: ErrSnapshotMismatch}
}

func parseBody(body []byte, f snapshotFooter) ([]Doc, error) {
	r := reader{b: body}
	docs := make([]Doc, 0, f.Count)
	for i := 0; i < f.Count; i++ {
		var d Doc
		d.ID = r.string()
		d.Content = r.string()
		nm := r.uvarint()
		if nm > 1<<16 {
			return nil, errors.New("damaged metadata")
		}
		d.Meta = make(map[string]string, nm)
		for j := uint64(0); j < nm; j++ {
			k := r.string()
			d.Meta[k] = r.string()
		}
		r.bytes((4 - (len(body)-len(r.b))%4) % 4) // alignment padding
		d.Vector = r.vector(f.Dims)
		if r.err != nil {
			return nil, r.err
		}
		docs = append(docs, d)
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errors.New("damaged body")
	}
	return docs, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader parses the body; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("damaged body")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		if r.err == nil {
			r.err = errors.New("damaged body")
		}
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// string returns the next string; it shares the body's memory, which is
// never written after it is read (see inPlace).
func (r *reader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errors.New("damaged body")
		return ""
	}
	b := r.bytes(int(n))
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (r *reader) vector(dims int) []float32 {
	raw := r.bytes(4 * dims)
	if r.err != nil || dims == 0 {
		return nil
	}
	if inPlace && uintptr(unsafe.Pointer(&raw[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&raw[0])), dims)[:dims:dims]
	}
	v := make([]float32, dims)
	for j := range v {
		v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
	}
	return v
}
