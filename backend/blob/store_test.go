package blob_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
)

func setup(t *testing.T) (*blob.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := blob.Open(dir)
	require.NoError(t, err)
	return s, dir
}

func blobFiles(t *testing.T, dir string) []string {
	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "sha256"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	return files
}

func TestPutGetRoundTripAndDedup(t *testing.T) {
	t.Parallel()
	s, dir := setup(t)
	ctx := context.Background()
	ref, err := s.Put(ctx, []byte("hello"), "text/plain")
	require.NoError(t, err)
	require.Equal(t, "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", ref.Digest)
	require.EqualValues(t, 5, ref.Size)
	require.Equal(t, "text/plain", ref.MediaType)

	again, err := s.PutReader(ctx, strings.NewReader("hello"), "text/plain")
	require.NoError(t, err)
	require.Equal(t, ref, again)
	require.Len(t, blobFiles(t, dir), 1, "identical content is stored once")

	got, err := s.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
	has, err := s.Has(ctx, ref.Digest)
	require.NoError(t, err)
	require.True(t, has)

	// Sharded layout: sha256/2c/f2/<digest>.
	require.FileExists(t, filepath.Join(dir, "sha256", "2c", "f2", strings.TrimPrefix(ref.Digest, "sha256:")))
	tmp, err := os.ReadDir(filepath.Join(dir, "tmp"))
	require.NoError(t, err)
	require.Empty(t, tmp, "no temp files are left behind")
}

func TestCorruptedBlobIsReportedNotReturned(t *testing.T) {
	t.Parallel()
	s, dir := setup(t)
	ctx := context.Background()
	ref, err := s.Put(ctx, bytes.Repeat([]byte("x"), 4096), "")
	require.NoError(t, err)
	file := blobFiles(t, dir)[0]
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	data[100] ^= 0xff
	require.NoError(t, os.WriteFile(file, data, 0o600))

	_, err = s.Get(ctx, ref)
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))

	r, err := s.Open(ref.Digest)
	require.NoError(t, err)
	defer r.Close()
	_, err = io.ReadAll(r)
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
}

func TestMissingAndMalformedDigests(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	_, err := s.Get(ctx, backend.BlobRef{Digest: blob.Digest([]byte("never stored"))})
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	for _, d := range []string{"", "md5:abc", "sha256:../../etc/passwd", "sha256:" + strings.Repeat("G", 64)} {
		_, err := s.Get(ctx, backend.BlobRef{Digest: d})
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), d)
	}
}

func TestPutHonoursCancellation(t *testing.T) {
	t.Parallel()
	s, dir := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.PutReader(ctx, strings.NewReader("data"), "")
	require.Error(t, err)
	require.Empty(t, blobFiles(t, dir))
}
