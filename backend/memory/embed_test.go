package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/chromem"
	"ducklm/backend/memory"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashEmbedder(t *testing.T) {
	t.Parallel()
	e := memory.HashEmbedder{}
	require.Equal(t, "ducklm-hash-384", e.Name())
	require.Equal(t, memory.HashModel, e.Name())
	texts := []string{
		"the nginx service listens on port 8080",
		"The nginx service listens on port 8080.",
		"nginx listens on port 8080",
		"the backup job runs every night at two",
	}
	vecs, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	for _, v := range vecs {
		require.Len(t, v, 384)
		require.True(t, chromem.Unit(v))
	}
	again, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Equal(t, vecs, again, "deterministic")
	require.InDelta(t, 1, dot(vecs[0], vecs[1]), 1e-6, "case and punctuation do not matter")
	require.Greater(t, dot(vecs[0], vecs[2]), 0.6, "a paraphrase is close")
	require.Less(t, dot(vecs[0], vecs[3]), 0.3, "an unrelated text is far")

	small := memory.HashEmbedder{Dims: 64}
	require.Equal(t, "ducklm-hash-64", small.Name())
	v, err := small.Embed(context.Background(), []string{"!!!"})
	require.NoError(t, err, "punctuation alone still embeds")
	require.Len(t, v[0], 64)
	_, err = small.Embed(context.Background(), []string{"   "})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

func TestEmbedderFor(t *testing.T) {
	t.Parallel()
	require.Equal(t, memory.HashEmbedder{}, memory.EmbedderFor("", nil))
	require.Equal(t, memory.HashEmbedder{Dims: 128}, memory.EmbedderFor("ducklm-hash-128", nil))
	c := ollama.New(ollamatest.NewServer(t).URL(), nil)
	e := memory.EmbedderFor("nomic-embed-text", c)
	require.Equal(t, memory.OllamaEmbedder{Client: c, Model: "nomic-embed-text"}, e)
	require.Equal(t, "nomic-embed-text:latest", e.Name())
	require.Equal(t, "library/bge-m3:567m", memory.OllamaEmbedder{Model: "library/bge-m3:567m"}.Name())
}

func TestOllamaEmbedder(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServerWith(t, ollamatest.Options{EmbedDims: 16})
	e := memory.OllamaEmbedder{Client: ollama.New(srv.URL(), nil), Model: "nomic-embed-text"}
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory number %d", i)
	}
	vecs, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vecs, 150)
	for i, v := range vecs {
		require.Len(t, v, 16)
		require.True(t, chromem.Unit(v))
		want := ollamatest.Vector("nomic-embed-text:latest", texts[i], 16)
		for j := range v {
			require.InDelta(t, want[j], v[j], 1e-6)
		}
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 3, "150 texts go in batches of 64")
	for _, r := range reqs {
		require.Equal(t, "/api/embed", r.Path)
		require.Equal(t, "nomic-embed-text:latest", r.Embed.Model, "asked for by its full name")
	}

	// Vectors that are not unit length are scaled before they go anywhere.
	srv.OnEmbed(func(model, input string) ([]float32, error) { return []float32{3, 4}, nil })
	vecs, err = e.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
	require.InDelta(t, 0.6, vecs[0][0], 1e-6)
	require.InDelta(t, 0.8, vecs[0][1], 1e-6)

	srv.OnEmbed(func(model, input string) ([]float32, error) { return []float32{0, 0}, nil })
	_, err = e.Embed(context.Background(), []string{"x"})
	require.Equal(t, backend.EINTERNAL, backend.ErrorCode(err), "a zero vector is refused")

	srv.OnEmbed(func(model, input string) ([]float32, error) {
		v := make([]float32, len(input))
		for i := range v {
			v[i] = 1
		}
		return v, nil
	})
	_, err = e.Embed(context.Background(), []string{"ab", "abc"})
	require.Error(t, err, "vectors of different lengths are refused")

	srv.OnEmbed(nil)
	_, err = memory.OllamaEmbedder{Client: e.Client, Model: "not-installed"}.Embed(context.Background(), []string{"x"})
	require.Error(t, err)
	require.Contains(t, backend.ErrorMessage(err), "not-installed")

	srv.Fail("/api/embed", 500, "the runner crashed")
	_, err = e.Embed(context.Background(), []string{"x"})
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))

	_, err = memory.OllamaEmbedder{Model: "x"}.Embed(context.Background(), []string{"x"})
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err), "no client")
}
