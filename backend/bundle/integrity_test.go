package bundle_test

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

	"ducklm/backend"
	"ducklm/backend/bundle"
)

// entry is one file of a bundle's archive, for a test to alter.
type entry struct {
	name string
	data []byte
}

func unpackBundle(t *testing.T, data []byte) []entry {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer zr.Close()
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		out = append(out, entry{h.Name, b})
	}
}

func packBundle(t *testing.T, es []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	require.NoError(t, err)
	tw := tar.NewWriter(zw)
	for _, e := range es {
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644, Size: int64(len(e.data))}))
		_, err := tw.Write(e.data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// reseal lists the entries' digests in the manifest again and signs it
// with key: only what the test broke on purpose is wrong.
func reseal(t *testing.T, es []entry, key bundle.Key) []entry {
	t.Helper()
	var m bundle.Manifest
	require.NoError(t, json.Unmarshal(es[0].data, &m))
	m.Entries = nil
	var rest []entry
	for _, e := range es[1:] {
		if e.name == bundle.SignatureName {
			continue
		}
		sum := sha256.Sum256(e.data)
		m.Entries = append(m.Entries, bundle.Entry{Name: e.name, Size: int64(len(e.data)), SHA256: hex.EncodeToString(sum[:])})
		rest = append(rest, e)
	}
	data, err := json.Marshal(m)
	require.NoError(t, err)
	sig, err := json.Marshal(bundle.Signature{Algorithm: "ed25519", PublicKey: key.Public, Value: ed25519.Sign(key.Private, data)})
	require.NoError(t, err)
	return append([]entry{{bundle.ManifestName, data}, {bundle.SignatureName, sig}}, rest...)
}

func find(t *testing.T, es []entry, prefix string) int {
	t.Helper()
	for i, e := range es {
		if strings.HasPrefix(e.name, prefix) {
			return i
		}
	}
	t.Fatalf("no entry %s*", prefix)
	return -1
}

// TestVerifyChecksDigestsSignatureReplayAndStatus: each of a bundle's
// integrity checks refuses what it is there for, here and not only in the
// whole-system tests: an entry whose bytes are not the manifest's digest,
// a blob whose name is not its digest, a manifest its signature does not
// match, world events that do not replay (signed again), and a run record
// whose status its events do not give (a note; the bundle stays good).
func TestVerifyChecksDigestsSignatureReplayAndStatus(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, child := f.grid(t, 4)
	key, err := bundle.LoadOrCreateKey(f.dir)
	require.NoError(t, err)
	base := unpackBundle(t, f.export(t, child.ID, bundle.ExportOptions{Ancestry: true, Key: &key}))
	clone := func() []entry {
		out := make([]entry, len(base))
		for i, e := range base {
			out[i] = entry{e.name, bytes.Clone(e.data)}
		}
		return out
	}
	verify := func(es []entry) bundle.Report {
		t.Helper()
		// From a file, as verify and import read it: the replay needs to
		// read the events again.
		path := filepath.Join(t.TempDir(), "b.ducklm")
		require.NoError(t, os.WriteFile(path, packBundle(t, es), 0o600))
		rep, _ := bundle.VerifyFile(f.ctx, bundle.Local{}, path, bundle.VerifyOptions{})
		return rep
	}
	stepDigest := func(line []byte) int {
		at := bytes.Index(line, []byte(`"stateDigest":"sha256:`))
		require.Positive(t, at)
		return at + len(`"stateDigest":"sha256:`)
	}

	rep := verify(clone())
	require.True(t, rep.OK, rep.Problem)
	require.Positive(t, rep.Replayed)
	require.Empty(t, rep.Notes)

	cases := []struct {
		name, want string
		alter      func([]entry) []entry
	}{
		{"entry digest", "has been altered", func(es []entry) []entry {
			e := &es[find(t, es, "events/")]
			e.data[stepDigest(e.data)] ^= 0x01
			return es
		}},
		{"blob digest", "a blob's name is its digest", func(es []entry) []entry {
			es[find(t, es, "blobs/sha256/")].data = []byte("not the content the name promises")
			return reseal(t, es, key)
		}},
		{"signature", "signature does not match the manifest", func(es []entry) []entry {
			es[0].data = bytes.Replace(es[0].data, []byte(`"appVersion":"`), []byte(`"appVersion":"forged-`), 1)
			return es
		}},
		{"replay", "does not replay", func(es []entry) []entry {
			e := &es[find(t, es, "events/")]
			ls := bytes.Split(e.data, []byte("\n"))
			for i, l := range ls {
				if bytes.Contains(l, []byte(`"type":"world.step"`)) {
					ls[i][stepDigest(l)] ^= 0x01
					break
				}
			}
			e.data = bytes.Join(ls, []byte("\n"))
			return reseal(t, es, key)
		}},
	}
	for _, c := range cases {
		rep := verify(c.alter(clone()))
		require.False(t, rep.OK, c.name)
		require.Contains(t, rep.Problem, c.want, c.name)
	}

	// A run record claiming a status its events do not give: a note, and
	// the status the events give.
	es := clone()
	e := &es[find(t, es, bundle.RunsName)]
	ls := bytes.Split(bytes.TrimSuffix(e.data, []byte("\n")), []byte("\n"))
	var r backend.WorldRun
	require.NoError(t, json.Unmarshal(ls[0], &r))
	truth := r.Status
	r.Status, r.Error = backend.RunFailed, "forged"
	ls[0], err = json.Marshal(r)
	require.NoError(t, err)
	e.data = append(bytes.Join(ls, []byte("\n")), '\n')
	rep = verify(reseal(t, es, key))
	require.True(t, rep.OK, rep.Problem)
	require.Len(t, rep.Notes, 1)
	require.Contains(t, rep.Notes[0], "is recorded as failed (\"forged\"), but its events say "+string(truth))
	var held []bundle.HeldRun
	for _, w := range rep.Worlds {
		for _, hr := range w.Runs {
			if hr.ID == r.ID {
				held = append(held, hr)
			}
		}
	}
	require.Len(t, held, 1)
	require.Equal(t, truth, held[0].Status)
	require.Equal(t, backend.RunFailed, held[0].RecordedStatus)
}
