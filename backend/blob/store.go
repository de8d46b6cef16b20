// Package blob is ducklm's content-addressed blob store on the filesystem.
// Content is named by its sha256 digest, written atomically (temp file, fsync,
// rename, fsync of the folder), stored once however often it is put, and
// verified on every read: a corrupted blob is reported, never returned.
// It knows nothing of what the bytes mean.
package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ducklm/backend"
)

var _ backend.BlobStore = (*Store)(nil)

const digestPrefix = "sha256:"

// Store keeps blobs under dir/sha256/ab/cd/<64 hex>.
type Store struct {
	dir string
}

// Open returns the store rooted at dir, creating it if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "sha256"), 0o700); err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot create the blob folder %s", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot create the blob folder %s", dir)
	}
	return &Store{dir: dir}, nil
}

// Digest returns the digest string of data.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return digestPrefix + hex.EncodeToString(sum[:])
}

// CheckDigest returns an EINVALID error unless d is "sha256:" and 64 lowercase hex digits.
func CheckDigest(d string) error {
	hexPart, ok := strings.CutPrefix(d, digestPrefix)
	if !ok || len(hexPart) != 64 {
		return backend.Errorf(backend.EINVALID, "%q is not a blob digest (expected sha256: and 64 hex digits)", d)
	}
	for i := 0; i < len(hexPart); i++ {
		c := hexPart[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return backend.Errorf(backend.EINVALID, "%q is not a blob digest (expected lowercase hex)", d)
		}
	}
	return nil
}

// path returns where a blob lives; digest must already be checked.
func (s *Store) path(digest string) string {
	h := strings.TrimPrefix(digest, digestPrefix)
	return filepath.Join(s.dir, "sha256", h[:2], h[2:4], h)
}

// Put implements backend.BlobStore. Content already stored costs one
// hash and one stat: nothing is written (checkpoints of an unchanged state
// land here often).
func (s *Store) Put(ctx context.Context, data []byte, mediaType string) (backend.BlobRef, error) {
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	ref := backend.BlobRef{Digest: Digest(data), Size: int64(len(data)), MediaType: mediaType}
	if _, err := os.Stat(s.path(ref.Digest)); err == nil {
		return ref, nil
	}
	return s.PutReader(ctx, bytes.NewReader(data), mediaType)
}

// PutReader implements backend.BlobStore: it streams r to a temp file while
// hashing, so a blob of any size is stored in bounded memory.
func (s *Store) PutReader(ctx context.Context, r io.Reader, mediaType string) (backend.BlobRef, error) {
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "put-*")
	if err != nil {
		return backend.BlobRef{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write to the blob folder")
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // no-op after a successful rename
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), ctxReader{ctx, r})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return backend.BlobRef{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write a blob")
	}
	ref := backend.BlobRef{Digest: digestPrefix + hex.EncodeToString(h.Sum(nil)), Size: n, MediaType: mediaType}
	dst := s.path(ref.Digest)
	if _, err := os.Stat(dst); err == nil {
		return ref, nil // identical content is stored once
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return backend.BlobRef{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write a blob")
	}
	if err := os.Rename(tmpName, dst); err != nil {
		return backend.BlobRef{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write a blob")
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return backend.BlobRef{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write a blob")
	}
	return ref, nil
}

// Get implements backend.BlobStore.
func (s *Store) Get(ctx context.Context, ref backend.BlobRef) ([]byte, error) {
	if err := CheckDigest(ref.Digest); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(s.path(ref.Digest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, backend.Errorf(backend.ENOTFOUND, "blob %s is missing from the blob store", ref.Digest)
	}
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read blob %s", ref.Digest)
	}
	if Digest(data) != ref.Digest || (ref.Size > 0 && int64(len(data)) != ref.Size) {
		return nil, backend.Errorf(backend.ECORRUPT, "blob %s is corrupted on disk (its content no longer matches its digest)", ref.Digest)
	}
	return data, nil
}

// Open returns a reader over a blob that verifies the digest when it reaches
// the end: Read returns an ECORRUPT error instead of io.EOF on a mismatch.
func (s *Store) Open(digest string) (io.ReadCloser, error) {
	if err := CheckDigest(digest); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(digest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, backend.Errorf(backend.ENOTFOUND, "blob %s is missing from the blob store", digest)
	}
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read blob %s", digest)
	}
	return &verifyingReader{f: f, h: sha256.New(), want: digest}, nil
}

// Has implements backend.BlobStore.
func (s *Store) Has(ctx context.Context, digest string) (bool, error) {
	if err := CheckDigest(digest); err != nil {
		return false, err
	}
	_, err := os.Stat(s.path(digest))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read blob %s", digest)
	}
	return true, nil
}

type verifyingReader struct {
	f    *os.File
	h    hash.Hash
	want string
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.f.Read(p)
	v.h.Write(p[:n])
	if errors.Is(err, io.EOF) && digestPrefix+hex.EncodeToString(v.h.Sum(nil)) != v.want {
		return n, backend.Errorf(backend.ECORRUPT, "blob %s is corrupted on disk (its content no longer matches its digest)", v.want)
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.f.Close() }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
