package chromem_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/chromem"
)

// unitVecs returns n random unit vectors of d dimensions, the same for a seed.
func unitVecs(seed uint64, n, d int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i], _ = chromem.Normalise(v)
	}
	return out
}

func docs(vecs [][]float32) []chromem.Doc {
	out := make([]chromem.Doc, len(vecs))
	for i, v := range vecs {
		kind := []string{"fact", "hypothesis"}[i%2]
		out[i] = chromem.Doc{ID: fmt.Sprintf("d%03d", i), Vector: v, Meta: map[string]string{"type": kind}, Content: fmt.Sprintf("doc %d", i)}
	}
	return out
}

func TestIndexAddQueryFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ix := chromem.New()
	vecs := unitVecs(1, 50, 16)
	require.NoError(t, ix.Add(ctx, "m1", docs(vecs)))
	require.Equal(t, 50, ix.Count("m1"))
	require.Zero(t, ix.Count("m2"))

	hits, err := ix.Query(ctx, "m1", vecs[7], 3, nil)
	require.NoError(t, err)
	require.Len(t, hits, 3)
	require.Equal(t, "d007", hits[0].ID)
	require.InDelta(t, 1, hits[0].Similarity, 1e-6)
	require.Equal(t, "doc 7", hits[0].Content)
	require.GreaterOrEqual(t, hits[1].Similarity, hits[2].Similarity)

	hits, err = ix.Query(ctx, "m1", vecs[7], 100, map[string]string{"type": "fact"})
	require.NoError(t, err)
	require.Len(t, hits, 25, "k larger than the collection is clamped; the filter keeps the facts")
	for _, h := range hits {
		require.Equal(t, "fact", h.Meta["type"])
		require.NotEqual(t, "d007", h.ID)
	}

	none, err := ix.Query(ctx, "m2", vecs[0], 3, nil)
	require.NoError(t, err)
	require.Empty(t, none, "an unknown model has no documents")

	// Vectors of another model never meet these.
	require.NoError(t, ix.Add(ctx, "m2", docs(unitVecs(2, 5, 8))))
	require.Equal(t, []string{"m1", "m2"}, ix.Models())
	_, err = ix.Query(ctx, "m2", vecs[0], 3, nil)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "a 16-dimension query on an 8-dimension model")

	// Replacing metadata keeps the vector; deleting removes from every model.
	require.NoError(t, ix.SetMeta(ctx, "d001", map[string]string{"type": "fact"}))
	d, ok := ix.Get("m1", "d001")
	require.True(t, ok)
	require.Equal(t, vecs[1], d.Vector)
	require.Equal(t, "fact", d.Meta["type"])
	require.NoError(t, ix.Delete(ctx, "d001"))
	require.NoError(t, ix.Delete(ctx, "d001"), "deleting twice is harmless")
	require.Equal(t, 49, ix.Count("m1"))
	require.Equal(t, 4, ix.Count("m2"))
	_, ok = ix.Get("m2", "d001")
	require.False(t, ok)
	require.Len(t, ix.Docs("m1"), 49)
	require.Equal(t, "d000", ix.Docs("m1")[0].ID)

	ix.Drop("m2")
	require.Equal(t, []string{"m1"}, ix.Models())
}

func TestIndexRefusesBadVectors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ix := chromem.New()
	err := ix.Add(ctx, "m", []chromem.Doc{{ID: "a", Vector: []float32{3, 4}}})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "not unit length")
	require.NoError(t, ix.Add(ctx, "m", []chromem.Doc{{ID: "a", Vector: []float32{0.6, 0.8}}}))
	err = ix.Add(ctx, "m", []chromem.Doc{{ID: "b", Vector: []float32{1, 0, 0}}})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "another length")
	require.Equal(t, backend.EINVALID, backend.ErrorCode(ix.Add(ctx, "m", []chromem.Doc{{Vector: []float32{1, 0}}})), "no id")
	require.Equal(t, backend.EINVALID, backend.ErrorCode(ix.Add(ctx, "", []chromem.Doc{{ID: "a", Vector: []float32{1}}})), "no model")
	require.NoError(t, ix.Add(ctx, "m", nil))

	_, ok := chromem.Normalise([]float32{0, 0})
	require.False(t, ok)
	v, ok := chromem.Normalise([]float32{3, 4})
	require.True(t, ok)
	require.True(t, chromem.Unit(v))
}

func TestIndexOrdersTiesByID(t *testing.T) {
	t.Parallel()
	ix := chromem.New()
	v := []float32{1, 0}
	var ds []chromem.Doc
	for _, id := range []string{"c", "a", "d", "b"} {
		ds = append(ds, chromem.Doc{ID: id, Vector: v})
	}
	require.NoError(t, ix.Add(context.Background(), "m", ds))
	for i := 0; i < 20; i++ {
		hits, err := ix.Query(context.Background(), "m", v, 4, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c", "d"}, []string{hits[0].ID, hits[1].ID, hits[2].ID, hits[3].ID})
	}
}

func TestSnapshotRoundTripAndVerification(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "v.snap")
	want := docs(unitVecs(3, 40, 12))
	want[3].Meta = nil
	want[4].Content = ""
	_, err := chromem.ReadSnapshot(path, "m", "d1")
	require.True(t, errors.Is(err, fs.ErrNotExist))

	require.NoError(t, chromem.WriteSnapshot(path, "m", "d1", want))
	got, err := chromem.ReadSnapshot(path, "m", "d1")
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].ID, got[i].ID)
		require.Equal(t, want[i].Vector, got[i].Vector)
		require.Equal(t, want[i].Content, got[i].Content)
		require.Equal(t, len(want[i].Meta), len(got[i].Meta))
		for k, v := range want[i].Meta {
			require.Equal(t, v, got[i].Meta[k])
		}
	}

	mismatch := func(model, digest string) {
		t.Helper()
		_, err := chromem.ReadSnapshot(path, model, digest)
		require.ErrorIs(t, err, chromem.ErrSnapshotMismatch)
		require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
	}
	mismatch("other", "d1")
	mismatch("m", "d2")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, at := range []int{0, len(data) / 2, len(data) - 60} {
		bad := append([]byte(nil), data...)
		bad[at] ^= 0x01
		require.NoError(t, os.WriteFile(path, bad, 0o600))
		mismatch("m", "d1")
	}
	for _, n := range []int{0, 10, len(data) / 2, len(data) - 1} {
		require.NoError(t, os.WriteFile(path, data[:n], 0o600))
		mismatch("m", "d1")
	}

	require.NoError(t, chromem.WriteSnapshot(path, "empty", "d0", nil))
	got, err = chromem.ReadSnapshot(path, "empty", "d0")
	require.NoError(t, err)
	require.Empty(t, got)
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary files are left behind")
}
