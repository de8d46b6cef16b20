package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/blob"
)

// Blobs is the content-addressed blob store in the database's blobs table:
// with PostgreSQL, every machine of a team reads the same blobs. Identical
// content is stored once and every read is verified against its digest,
// as in the local sharded store (backend/blob), which SQLite installations
// keep using.
type Blobs struct {
	db  *DB
	now func() time.Time
}

var _ backend.BlobStore = (*Blobs)(nil)

// MaxDatabaseBlob bounds one blob in the database (PostgreSQL's bytea holds
// up to 1 GB; a blob is read whole into memory).
const MaxDatabaseBlob = 256 << 20

// NewBlobs returns the blob store in db.
func NewBlobs(db *DB) *Blobs { return &Blobs{db: db, now: time.Now} }

// BlobRow is a row of blobs.
type BlobRow struct {
	Digest    string `gorm:"column:digest;primaryKey"`
	Size      int64  `gorm:"column:size;not null"`
	Data      []byte `gorm:"column:data;not null"`
	CreatedAt int64  `gorm:"column:created_at;not null;autoCreateTime:false"`
}

// TableName implements gorm's Tabler.
func (BlobRow) TableName() string { return "blobs" }

// Put implements backend.BlobStore. Content already stored writes nothing.
func (b *Blobs) Put(ctx context.Context, data []byte, mediaType string) (backend.BlobRef, error) {
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	if len(data) > MaxDatabaseBlob {
		return backend.BlobRef{}, backend.Errorf(backend.ELIMIT, "a blob of %d bytes is larger than the database store takes (%d bytes)", len(data), MaxDatabaseBlob)
	}
	ref := backend.BlobRef{Digest: blob.Digest(data), Size: int64(len(data)), MediaType: mediaType}
	if _, err := b.db.SQL.ExecContext(ctx, b.db.Rebind("INSERT INTO blobs (digest, size, data, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING"),
		ref.Digest, ref.Size, data, b.now().UnixMicro()); err != nil {
		return backend.BlobRef{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot store a blob in the database")
	}
	return ref, nil
}

// PutReader implements backend.BlobStore; the content is read whole (up to
// MaxDatabaseBlob).
func (b *Blobs) PutReader(ctx context.Context, r io.Reader, mediaType string) (backend.BlobRef, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxDatabaseBlob+1))
	if err != nil {
		return backend.BlobRef{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read a blob to store")
	}
	if err := ctx.Err(); err != nil {
		return backend.BlobRef{}, err
	}
	return b.Put(ctx, data, mediaType)
}

// Get implements backend.BlobStore.
func (b *Blobs) Get(ctx context.Context, ref backend.BlobRef) ([]byte, error) {
	if err := blob.CheckDigest(ref.Digest); err != nil {
		return nil, err
	}
	var data []byte
	err := b.db.SQL.QueryRowContext(ctx, b.db.Rebind("SELECT data FROM blobs WHERE digest = ?"), ref.Digest).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, backend.Errorf(backend.ENOTFOUND, "blob %s is missing from the blob store", ref.Digest)
	}
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read blob %s", ref.Digest)
	}
	sum := sha256.Sum256(data)
	if "sha256:"+hex.EncodeToString(sum[:]) != ref.Digest || (ref.Size > 0 && int64(len(data)) != ref.Size) {
		return nil, backend.Errorf(backend.ECORRUPT, "blob %s is corrupted in the database (its content no longer matches its digest)", ref.Digest)
	}
	return data, nil
}

// Open returns a blob's verified content as a reader (bundles read blobs
// this way).
func (b *Blobs) Open(digest string) (io.ReadCloser, error) {
	data, err := b.Get(context.Background(), backend.BlobRef{Digest: digest})
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// Has implements backend.BlobStore.
func (b *Blobs) Has(ctx context.Context, digest string) (bool, error) {
	if err := blob.CheckDigest(digest); err != nil {
		return false, err
	}
	var n int
	err := b.db.SQL.QueryRowContext(ctx, b.db.Rebind("SELECT count(*) FROM blobs WHERE digest = ?"), digest).Scan(&n)
	if err != nil {
		return false, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read blob %s", digest)
	}
	return n > 0, nil
}

// blobsSQL caches the multi-row INSERT of blobs per row count.
var blobsSQL sync.Map

// PutMany stores several blobs in one statement (the end states of a
// batch of branches); content already stored writes nothing. The rows go
// in digest order: two workers storing overlapping end states (identical
// states share one blob) each wait on the other's uncommitted row, and in
// one order the first to wait holds no row the other needs, where in the
// caller's orders they could deadlock (PostgreSQL then fails one a second
// later: a job attempt lost and retried).
func (b *Blobs) PutMany(ctx context.Context, data [][]byte, mediaType string) error {
	byDigest := make(map[string][]byte, len(data))
	for _, d := range data {
		if len(d) > MaxDatabaseBlob {
			return backend.Errorf(backend.ELIMIT, "a blob of %d bytes is larger than the database store takes (%d bytes)", len(d), MaxDatabaseBlob)
		}
		byDigest[blob.Digest(d)] = d
	}
	n := len(byDigest)
	now := b.now().UnixMicro()
	args := make([]any, 0, 4*n)
	for _, digest := range slices.Sorted(maps.Keys(byDigest)) {
		d := byDigest[digest]
		args = append(args, digest, int64(len(d)), d, now)
	}
	if n == 0 {
		return nil
	}
	q, ok := blobsSQL.Load(n)
	if !ok {
		q, _ = blobsSQL.LoadOrStore(n, "INSERT INTO blobs (digest, size, data, created_at) VALUES "+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?),", n), ",")+" ON CONFLICT (digest) DO NOTHING")
	}
	if _, err := b.db.SQL.ExecContext(ctx, b.db.Rebind(q.(string)), args...); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot store %d blobs in the database", n)
	}
	return nil
}

// GetMany reads several blobs in one query, each verified against its
// digest; digests not stored are left out of the answer.
func (b *Blobs) GetMany(ctx context.Context, digests []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(digests))
	if len(digests) == 0 {
		return out, nil
	}
	args := make([]any, len(digests))
	for i, d := range digests {
		if err := blob.CheckDigest(d); err != nil {
			return nil, err
		}
		args[i] = d
	}
	rows, err := b.db.SQL.QueryContext(ctx, b.db.Rebind("SELECT digest, data FROM blobs WHERE digest IN ("+
		strings.TrimSuffix(strings.Repeat("?,", len(digests)), ",")+")"), args...)
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %d blobs", len(digests))
	}
	defer rows.Close()
	for rows.Next() {
		var digest string
		var data []byte
		if err := rows.Scan(&digest, &data); err != nil {
			return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %d blobs", len(digests))
		}
		if blob.Digest(data) != digest {
			return nil, backend.Errorf(backend.ECORRUPT, "blob %s is corrupted in the database (its content no longer matches its digest)", digest)
		}
		out[digest] = data
	}
	if err := rows.Err(); err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read %d blobs", len(digests))
	}
	return out, nil
}
