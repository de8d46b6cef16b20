package memory_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
)

// gated embeds like inner but, once armed, waits at each call for a
// signal, and fails after failAfter calls when set.
type gated struct {
	inner     memory.Embedder
	gate      chan struct{}
	calls     atomic.Int32
	failAfter int32
}

func (g *gated) Name() string { return g.inner.Name() }

func (g *gated) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	n := g.calls.Add(1)
	if g.failAfter > 0 && n > g.failAfter {
		return nil, backend.Errorf(backend.EUNAVAILABLE, "the embedding model went away")
	}
	if g.gate != nil && n > 1 { // the first call is the reindex's probe
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.inner.Embed(ctx, texts)
}

func modelCounts(t *testing.T, f *fixture) map[string]int {
	t.Helper()
	rows, err := f.db.SQL.Query("SELECT embedding_model, count(*) FROM memories GROUP BY embedding_model")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var m string
		var n int
		require.NoError(t, rows.Scan(&m, &n))
		out[m] = n
	}
	return out
}

// A reindex re-embeds in the background while the old index keeps
// answering; writes made meanwhile reach the new index; then it switches.
func TestReindexServesReadsAndSwitches(t *testing.T) {
	t.Parallel()
	f := setup(t)
	seed(t, f, 200, memory.HashEmbedder{})
	require.NoError(t, f.store.Close())
	s := f.open(t, nil)

	target := &gated{inner: memory.HashEmbedder{Dims: 128}, gate: make(chan struct{})}
	var progress [][2]int
	done := make(chan error, 1)
	go func() {
		done <- s.Reindex(f.ctx, target, func(d, total int) { progress = append(progress, [2]int{d, total}) })
	}()

	// While the first batch waits, reads answer from the old index, a
	// second reindex is refused, and a new memory is written.
	target.gate <- struct{}{}
	got, err := s.Retrieve(f.ctx, "nginx port", 10, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, got, 10)
	require.Equal(t, memory.HashModel, got[0].Model)
	err = s.Reindex(f.ctx, memory.HashEmbedder{Dims: 64}, nil)
	require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))
	d, err := s.Consider(f.ctx, f.candidate("The certificate renewal timer fires every Monday at 04:00."))
	require.NoError(t, err)
	require.Equal(t, memory.HashModel, d.Model, "written with the model in service")
	st, err := s.Status(f.ctx)
	require.NoError(t, err)
	require.True(t, st.Reindex.Running)
	require.Equal(t, "ducklm-hash-128", st.Reindex.Model)

	close(target.gate)
	require.NoError(t, <-done)

	require.Equal(t, "ducklm-hash-128", s.Model())
	require.Equal(t, map[string]int{"ducklm-hash-128": 201}, modelCounts(t, f))
	active, err := f.repo.ActiveModel(f.ctx)
	require.NoError(t, err)
	require.Equal(t, "ducklm-hash-128", active)
	st, err = s.Status(f.ctx)
	require.NoError(t, err)
	require.Equal(t, 201, st.Indexed)
	require.Zero(t, st.Stale)
	require.False(t, st.Reindex.Running)
	require.Equal(t, [2]int{0, 200}, progress[0])
	require.Equal(t, [2]int{201, 201}, progress[len(progress)-1])
	for i := 1; i < len(progress); i++ {
		require.GreaterOrEqual(t, progress[i][0], progress[i-1][0])
	}

	got, err = s.Retrieve(f.ctx, "certificate renewal timer", 1, memory.Filter{})
	require.NoError(t, err)
	require.Equal(t, d.MemoryID, got[0].ID, "the write made during the reindex is in the new index")
	require.Equal(t, "ducklm-hash-128", got[0].Model)

	// A restart with the new embedder loads everything.
	require.NoError(t, s.Close())
	s2 := f.open(t, memory.HashEmbedder{Dims: 128})
	st, err = s2.Status(f.ctx)
	require.NoError(t, err)
	require.Equal(t, 201, st.Indexed)
}

// An interrupted reindex leaves the old index serving; memories it had
// converted are stale for the old model until Repair re-embeds them.
func TestInterruptedReindexIsRepaired(t *testing.T) {
	t.Parallel()
	f := setup(t)
	seed(t, f, 150, memory.HashEmbedder{})
	require.NoError(t, f.store.Close())
	s := f.open(t, nil)
	before, err := s.Retrieve(f.ctx, "backup to the bucket", 10, memory.Filter{})
	require.NoError(t, err)

	err = s.Reindex(f.ctx, &gated{inner: memory.HashEmbedder{Dims: 64}, failAfter: 3}, nil)
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))
	require.Equal(t, memory.HashModel, s.Model(), "the old model still serves")
	after, err := s.Retrieve(f.ctx, "backup to the bucket", 10, memory.Filter{})
	require.NoError(t, err)
	require.Equal(t, before, after, "the old index is intact")
	require.Equal(t, map[string]int{memory.HashModel: 22, "ducklm-hash-64": 128}, modelCounts(t, f))
	st, err := s.Status(f.ctx)
	require.NoError(t, err)
	require.Contains(t, st.Reindex.Error, "went away")
	require.NoError(t, s.Close())

	s2 := f.open(t, nil)
	st, err = s2.Status(f.ctx)
	require.NoError(t, err)
	require.Equal(t, 22, st.Indexed)
	require.EqualValues(t, 128, st.Stale)
	require.NoError(t, s2.Repair(f.ctx))
	st, err = s2.Status(f.ctx)
	require.NoError(t, err)
	require.Equal(t, 150, st.Indexed)
	require.Zero(t, st.Stale)
	again, err := s2.Retrieve(f.ctx, "backup to the bucket", 10, memory.Filter{})
	require.NoError(t, err)
	require.Equal(t, before, again, "re-embedding with the same model gives the same answers")
}

func TestReindexToOllama(t *testing.T) {
	t.Parallel()
	f := setup(t)
	seed(t, f, 100, memory.HashEmbedder{})
	srv := ollamatest.NewServerWith(t, ollamatest.Options{EmbedDims: 32})
	emb := memory.OllamaEmbedder{Client: ollama.New(srv.URL(), nil), Model: "nomic-embed-text"}

	missing := memory.OllamaEmbedder{Client: emb.Client, Model: "no-such-model"}
	require.Error(t, f.store.Reindex(f.ctx, missing, nil), "a missing model fails before anything changes")
	require.Equal(t, map[string]int{memory.HashModel: 100}, modelCounts(t, f))

	require.NoError(t, f.store.Reindex(f.ctx, emb, nil))
	require.Equal(t, "nomic-embed-text:latest", f.store.Model())
	require.Equal(t, map[string]int{"nomic-embed-text:latest": 100}, modelCounts(t, f))
	got, err := f.store.Retrieve(f.ctx, "memory 7: the release backup uses port with nginx on nginx", 1, memory.Filter{})
	require.NoError(t, err)
	require.InDelta(t, 1, got[0].Similarity, 1e-5, "the fake model embeds equal texts equally")
	require.Len(t, srv.Requests(), 1+1+2+1, "the refused probe, the probe, batches of 64 and 36, the query")
}

// Retrieval, writes, removal and a reindex run together without races.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	f := setup(t)
	seed(t, f, 100, memory.HashEmbedder{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := f.store.Retrieve(f.ctx, probes[i%len(probes)], 5, memory.Filter{Type: mp.Fact}); err != nil {
					errs <- err
				}
				c := f.candidate(probes[i%len(probes)] + " is something a worker noticed in step " + string(rune('a'+w)))
				if _, err := f.store.Consider(f.ctx, c); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := f.store.Reindex(f.ctx, memory.HashEmbedder{Dims: 96}, nil); err != nil && backend.ErrorCode(err) != backend.ECONFLICT {
			errs <- err
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	counts := modelCounts(t, f)
	require.Len(t, counts, 1, "every memory ends up under one model: %v", counts)
	st, err := f.store.Status(f.ctx)
	require.NoError(t, err)
	require.Equal(t, counts[st.Model], st.Indexed)
}
