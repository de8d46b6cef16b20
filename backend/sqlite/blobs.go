package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
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
