package backend

import (
	"context"
	"io"
)

// BlobRef names content in the blob store by its sha256 digest.
type BlobRef struct {
	Digest    string `json:"digest"` // "sha256:<64 hex>"
	Size      int64  `json:"size"`
	MediaType string `json:"mediaType"`
}

// BlobStore is content-addressed storage: identical content is stored once and
// every read is verified against its digest.
type BlobStore interface {
	Put(ctx context.Context, data []byte, mediaType string) (BlobRef, error)
	PutReader(ctx context.Context, r io.Reader, mediaType string) (BlobRef, error)
	Get(ctx context.Context, ref BlobRef) ([]byte, error)
	Has(ctx context.Context, digest string) (bool, error)
}
