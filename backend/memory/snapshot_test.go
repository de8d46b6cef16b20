package memory_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/store"
)

var words = []string{"nginx", "port", "backup", "disk", "cron", "postgres", "deploy", "release", "cache", "log",
	"user", "prefers", "kernel", "service", "timer", "bucket", "token", "build", "test", "host", "network", "dns",
	"certificate", "renewal", "memory", "swap", "queue", "worker", "retry", "timeout"}

// seed stores n distinct memories straight through the repository (no
// events), embedded with emb, and returns their ids.
func seed(t *testing.T, f *fixture, n int, emb memory.Embedder) []string {
	t.Helper()
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory %d: the %s %s uses %s with %s on %s", i,
			words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)], words[(i/11)%len(words)], words[(i/13)%len(words)])
	}
	vecs, err := emb.Embed(f.ctx, texts)
	require.NoError(t, err)
	ids := make([]string, n)
	now := time.Now().UTC()
	for i, text := range texts {
		ids[i] = backend.NewID(backend.KindMemory)
		typ := mp.Types()[i%len(mp.Types())]
		prov := memory.Provenance{RunID: f.run, Reality: backend.ExternalReal}
		if typ == mp.Hypothesis {
			prov.Reality, prov.WorldID = backend.WorldLocal, backend.NewID(backend.KindWorld)
		}
		require.NoError(t, f.repo.Insert(f.ctx, memory.Memory{ID: ids[i], Text: text, Type: typ, Model: emb.Name(), Vector: vecs[i],
			ContentHash: memory.ContentHash(text), Provenance: prov, Weight: 0.8, CreatedAt: now, UpdatedAt: now}, "", nil))
	}
	return ids
}

var probes = []string{"nginx port", "backup to the bucket", "the user prefers", "dns certificate renewal", "worker retry timeout"}

// answers runs the probe queries (unfiltered and filtered) on s.
func answers(t *testing.T, s *memory.Store) [][]memory.Retrieved {
	t.Helper()
	var out [][]memory.Retrieved
	for _, q := range probes {
		for _, flt := range []memory.Filter{{}, {Type: mp.Fact}, {Reality: backend.WorldLocal}} {
			r, err := s.Retrieve(t.Context(), q, 10, flt)
			require.NoError(t, err)
			out = append(out, r)
		}
	}
	return out
}

// sameAnswers compares answers exactly, except which of several memories
// tied at the last place made the cut.
func sameAnswers(t *testing.T, want, got [][]memory.Retrieved) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		require.Len(t, g, len(w))
		if len(w) == 0 {
			continue
		}
		last := w[len(w)-1].Similarity
		for j := range w {
			require.Equal(t, w[j].Similarity, g[j].Similarity)
			if w[j].Similarity != last {
				require.Equal(t, w[j], g[j])
			}
		}
	}
}

func loadedFrom(t *testing.T, s *memory.Store) string {
	t.Helper()
	st, err := s.Status(t.Context())
	require.NoError(t, err)
	return st.LoadedFrom
}

// A lost, damaged, truncated or stale snapshot is rebuilt from the database
// and answers exactly as before.
func TestSnapshotIsRebuiltFromTheDatabase(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, f.store.Close())
	seed(t, f, 300, memory.HashEmbedder{})

	first := f.open(t, nil)
	require.Equal(t, "database", loadedFrom(t, first))
	want := answers(t, first)
	require.NotEmpty(t, want[0])
	require.NoError(t, first.Close()) // waits for the snapshot it started
	snaps, err := filepath.Glob(filepath.Join(f.dir, "memory", "vectors-*.snap"))
	require.NoError(t, err)
	require.Len(t, snaps, 1)
	snap := snaps[0]

	reopen := func(how string) {
		t.Helper()
		s := f.open(t, nil)
		require.Equal(t, how, loadedFrom(t, s))
		sameAnswers(t, want, answers(t, s))
		require.NoError(t, s.Close())
	}
	reopen("snapshot")

	data, err := os.ReadFile(snap)
	require.NoError(t, err)
	damaged := append([]byte(nil), data...)
	damaged[len(damaged)/2] ^= 0xff
	require.NoError(t, os.WriteFile(snap, damaged, 0o600))
	reopen("database")
	reopen("snapshot") // rewritten by the rebuild

	require.NoError(t, os.WriteFile(snap, data[:len(data)/3], 0o600))
	reopen("database")

	require.NoError(t, os.Remove(snap))
	reopen("database")

	require.NoError(t, os.WriteFile(snap, []byte("not a snapshot"), 0o600))
	reopen("database")

	// The database changed behind the snapshot's back: the snapshot is
	// stale, and the rebuild reflects the change.
	reopen("snapshot")
	var gone string
	require.NoError(t, f.db.SQL.QueryRow("SELECT id FROM memories ORDER BY id LIMIT 1").Scan(&gone))
	_, err = f.db.SQL.Exec("DELETE FROM memories WHERE id = ?", gone)
	require.NoError(t, err)
	s := f.open(t, nil)
	require.Equal(t, "database", loadedFrom(t, s))
	for _, rs := range answers(t, s) {
		for _, r := range rs {
			require.NotEqual(t, gone, r.ID)
		}
	}
}

// Writes mark the snapshot stale; Close writes a fresh one that the next
// start uses.
func TestCloseSnapshotsAfterWrites(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.consider(t, f.candidate("The mail relay accepts connections on port 587 only."))
	require.NoError(t, f.store.Close())
	s := f.open(t, nil)
	require.Equal(t, "snapshot", loadedFrom(t, s))
	got, err := s.Retrieve(f.ctx, "mail relay port", 1, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "The mail relay accepts connections on port 587 only.", got[0].Text)
}

// A table large enough to be read on several connections loads every
// memory once, gaps in its rowids included, and answers as the snapshot does.
func TestLargeTableLoadsInParallel(t *testing.T) {
	t.Parallel()
	path, err := buildBenchDB(6_000)
	require.NoError(t, err)
	db, err := store.Open(t.Context(), path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.SQL.Exec("DELETE FROM memories WHERE rowid % 7 = 3 OR rowid BETWEEN 3000 AND 3300")
	require.NoError(t, err)
	var want int
	require.NoError(t, db.SQL.QueryRow("SELECT count(*) FROM memories").Scan(&want))
	repo := store.NewMemories(db, store.NewLedger(db))

	seen := map[string]bool{}
	st, consistent, err := repo.Load(t.Context(), memory.HashModel, func(m memory.Memory) error {
		require.False(t, seen[m.ID], "loaded twice")
		seen[m.ID] = true
		require.Len(t, m.Vector, memory.HashDims)
		return nil
	})
	require.NoError(t, err)
	require.True(t, consistent)
	require.Len(t, seen, want)
	state, err := repo.State(t.Context(), memory.HashModel)
	require.NoError(t, err)
	require.Equal(t, state, st, "the scan's state is the table's")

	snaps := filepath.Join(t.TempDir(), "snap")
	fromDB, err := memory.Open(t.Context(), memory.Options{Repo: repo, SnapshotDir: snaps})
	require.NoError(t, err)
	require.Equal(t, "database", loadedFrom(t, fromDB))
	ask := func(s *memory.Store) [][]memory.Retrieved {
		r, err := s.Retrieve(t.Context(), benchQueries[0], 10, memory.Filter{})
		require.NoError(t, err)
		return [][]memory.Retrieved{r}
	}
	want2 := ask(fromDB)
	require.NoError(t, fromDB.Close())
	fromSnap, err := memory.Open(t.Context(), memory.Options{Repo: repo, SnapshotDir: snaps})
	require.NoError(t, err)
	defer fromSnap.Close()
	require.Equal(t, "snapshot", loadedFrom(t, fromSnap))
	sameAnswers(t, want2, ask(fromSnap))
}
