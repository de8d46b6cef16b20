package bundles_test

import (
	"archive/tar"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"ducklm/backend/bundle"
)

// entry is one archive entry as a test sees and crafts it.
type entry struct {
	hdr  tar.Header
	data []byte
	// headerOnly writes the header and ends the archive there (a header
	// that promises more than the file holds).
	headerOnly bool
}

// archive is a whole bundle in memory, for small test bundles.
type archive []entry

func unpack(t *testing.T, path string) archive {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := zstd.NewReader(f)
	require.NoError(t, err)
	defer zr.Close()
	tr := tar.NewReader(zr)
	var a archive
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return a
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		a = append(a, entry{hdr: *h, data: data})
	}
}

// pack writes the archive to a new file and returns its path.
func (a archive) pack(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crafted.ducklm")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	zw, err := zstd.NewWriter(f)
	require.NoError(t, err)
	tw := tar.NewWriter(zw)
	for _, e := range a {
		h := e.hdr
		h.Format = tar.FormatUnknown // let the writer pick what the size needs
		if !e.headerOnly && h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.data))
		}
		require.NoError(t, tw.WriteHeader(&h))
		if e.headerOnly {
			require.NoError(t, zw.Close()) // the header is out; its content never comes
			return path
		}
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write(e.data)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return path
}

// find returns the index of the first entry whose name has prefix p.
func (a archive) find(t *testing.T, p string) int {
	t.Helper()
	for i, e := range a {
		if strings.HasPrefix(e.hdr.Name, p) {
			return i
		}
	}
	t.Fatalf("no entry %s*", p)
	return -1
}

func (a archive) clone() archive {
	out := make(archive, len(a))
	for i, e := range a {
		out[i] = e
		out[i].data = bytes.Clone(e.data)
	}
	return out
}

// manifest decodes the archive's manifest.
func (a archive) manifest(t *testing.T) bundle.Manifest {
	t.Helper()
	var m bundle.Manifest
	require.NoError(t, json.Unmarshal(a[0].data, &m))
	return m
}

// reseal rewrites the manifest to match the entries as they are now (so
// only what a test broke on purpose is wrong), applies edit to it, and
// signs it with key (nil: no signature entry).
func (a archive) reseal(t *testing.T, key *bundle.Key, edit func(*bundle.Manifest)) archive {
	t.Helper()
	m := a.manifest(t)
	m.Entries = nil
	var rest archive
	for _, e := range a[1:] {
		if e.hdr.Name == bundle.SignatureName {
			continue
		}
		rest = append(rest, e)
		sum := sha256.Sum256(e.data)
		m.Entries = append(m.Entries, bundle.Entry{Name: e.hdr.Name, Size: int64(len(e.data)), SHA256: hex.EncodeToString(sum[:])})
	}
	if edit != nil {
		edit(&m)
	}
	data, err := json.Marshal(m)
	require.NoError(t, err)
	out := archive{{hdr: tar.Header{Typeflag: tar.TypeReg, Name: bundle.ManifestName, Mode: 0o644}, data: data}}
	if key != nil {
		sig, err := json.Marshal(bundle.Signature{Algorithm: "ed25519", PublicKey: key.Public, Value: ed25519.Sign(key.Private, data)})
		require.NoError(t, err)
		out = append(out, entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: bundle.SignatureName, Mode: 0o644}, data: sig})
	}
	return append(out, rest...)
}

// lines splits a JSON-lines entry.
func lines(data []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

func joinLines(ls [][]byte) []byte {
	return append(bytes.Join(ls, []byte("\n")), '\n')
}
