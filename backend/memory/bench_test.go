package memory_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	cg "github.com/philippgille/chromem-go"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/store"
)

// The memory benchmarks compare ducklm's API with raw chromem-go on the
// same vectors, measured interleaved in one run so the ratio is what to
// read (see scripts/bench.sh). Their databases are built once per process.

var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchText is the i-th synthetic memory: 12 to 18 words from a vocabulary
// of 4,000, like a sentence a run might keep.
func benchText(r *rand.Rand) string {
	n := 12 + r.IntN(7)
	w := make([]string, n)
	for i := range w {
		k := r.IntN(4000)
		w[i] = benchSyllables[k%20] + benchSyllables[(k/20)%20] + benchSyllables[k/400]
	}
	return strings.Join(w, " ")
}

var benchSyllables = strings.Fields("ka lo mi nu pe ra si to vu we xa yo za be co di fu ga he ji")

var benchDBs sync.Map // size → *benchDB

type benchDB struct {
	path string
	err  error
	once sync.Once
}

// benchDatabase returns a database file holding n memories embedded with
// the built-in embedder, inserted in one transaction.
func benchDatabase(b *testing.B, n int) string {
	b.Helper()
	v, _ := benchDBs.LoadOrStore(n, &benchDB{})
	bd := v.(*benchDB)
	bd.once.Do(func() { bd.path, bd.err = buildBenchDB(n) })
	require.NoError(b, bd.err)
	return bd.path
}

func buildBenchDB(n int) (string, error) {
	if benchDir == "" {
		d, err := os.MkdirTemp("", "ducklm-memory-bench-*")
		if err != nil {
			return "", err
		}
		benchDir = d
	}
	dir := filepath.Join(benchDir, fmt.Sprint(n))
	path := filepath.Join(dir, "ducklm.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(7, 7))
	texts := make([]string, n)
	for i := range texts {
		texts[i] = benchText(r)
	}
	vecs, err := memory.HashEmbedder{}.Embed(context.Background(), texts)
	if err != nil {
		return "", err
	}
	tx, err := db.SQL.Begin()
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	// Multi-row INSERTs: the driver parses every statement it executes.
	const rowsPer = 32
	insert := "INSERT INTO memories (id, text, type, embedding_model, embedding, dims, content_hash, run_id, event_id, " +
		"reality, world_id, weight, merged_count, created_at, merged_at, updated_at) VALUES " +
		strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?,?,?,?,?,0,?,0,?),", rowsPer), ",")
	run := backend.NewID(backend.KindRun)
	now := time.Now().UnixMicro()
	var args []any
	for i, text := range texts {
		blob := make([]byte, 4*len(vecs[i]))
		for j, f := range vecs[i] {
			binary.LittleEndian.PutUint32(blob[4*j:], math.Float32bits(f))
		}
		typ, reality, world := string(mp.Types()[i%4]), string(backend.ExternalReal), "" // facts, observations, procedures, hypotheses
		if typ == string(mp.Hypothesis) {
			reality, world = string(backend.WorldLocal), backend.NewID(backend.KindWorld)
		}
		args = append(args, backend.NewID(backend.KindMemory), text, typ, memory.HashModel, blob, len(vecs[i]), memory.ContentHash(text),
			run, backend.NewID(backend.KindEvent), reality, world, 0.8, now, now)
		if len(args) == 14*rowsPer || i == len(texts)-1 {
			q := insert
			if len(args) < 14*rowsPer {
				q = q[:strings.Index(q, "VALUES ")+7] + strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?,?,?,?,?,0,?,0,?),", len(args)/14), ",")
			}
			if _, err := tx.Exec(q, args...); err != nil {
				return "", err
			}
			args = args[:0]
		}
	}
	return path, tx.Commit()
}

type benchStore struct {
	ctx   context.Context
	db    *store.DB
	repo  *store.Memories
	store *memory.Store
}

func openBench(b *testing.B, n int, snapshots string) *benchStore {
	b.Helper()
	db, err := store.Open(context.Background(), benchDatabase(b, n))
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	bs := &benchStore{ctx: context.Background(), db: db, repo: store.NewMemories(db, store.NewLedger(db))}
	bs.store, err = memory.Open(bs.ctx, memory.Options{Repo: bs.repo, SnapshotDir: snapshots})
	require.NoError(b, err)
	b.Cleanup(func() { bs.store.Close() })
	return bs
}

// rawCollection is what a program using chromem-go directly would build:
// the same vectors and texts, the same embedding function for queries.
func rawCollection(b *testing.B, bs *benchStore) *cg.Collection {
	b.Helper()
	embed := func(ctx context.Context, text string) ([]float32, error) {
		v, err := memory.HashEmbedder{}.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return v[0], nil
	}
	col, err := cg.NewDB().CreateCollection("raw", nil, embed)
	require.NoError(b, err)
	var docs []cg.Document
	_, _, err = bs.repo.Load(bs.ctx, memory.HashModel, func(m memory.Memory) error {
		docs = append(docs, cg.Document{ID: m.ID, Embedding: m.Vector, Content: m.Text})
		return nil
	})
	require.NoError(b, err)
	require.NoError(b, col.AddDocuments(bs.ctx, docs, runtime.GOMAXPROCS(0)))
	return col
}

// cpuTime is the CPU time this process has used: on a busy machine it
// shows the work an operation does when its wall time shows the wait.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchQueries = []string{"kaloka miraza", "nupe sito vuwe", "the yozabe codi", "fuga heji kalo", "ra si to vu we xa",
	"mikaka lolo", "zabe coxa yoyo", "dijika hefu"}

// BenchmarkRetrieve is a top-10 query through Store.Retrieve and through
// raw chromem-go, interleaved: ns/query of each and their ratio.
func BenchmarkRetrieve(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			bs := openBench(b, n, "")
			col := rawCollection(b, bs)
			var ours, raw time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := benchQueries[i%len(benchQueries)]
				run := func(f func()) time.Duration { t := time.Now(); f(); return time.Since(t) }
				a := func() {
					if _, err := bs.store.Retrieve(bs.ctx, q, 10, memory.Filter{}); err != nil {
						b.Fatal(err)
					}
				}
				c := func() {
					if _, err := col.Query(bs.ctx, q, 10, nil, nil); err != nil {
						b.Fatal(err)
					}
				}
				if i%2 == 0 {
					ours += run(a)
					raw += run(c)
				} else {
					raw += run(c)
					ours += run(a)
				}
			}
			b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ducklm-ns/query")
			b.ReportMetric(float64(raw.Nanoseconds())/float64(b.N), "raw-ns/query")
			b.ReportMetric(float64(ours)/float64(raw), "ducklm/raw")
		})
	}
}

// BenchmarkOpen100k is the start-up of a store of 100k memories: the index
// built from the database, and loaded from a snapshot that matches it.
func BenchmarkOpen100k(b *testing.B) {
	const n = 100_000
	path := benchDatabase(b, n)
	snaps := filepath.Join(filepath.Dir(path), "snapshots")
	for _, from := range []string{"database", "snapshot"} {
		b.Run("from="+from, func(b *testing.B) {
			db, err := store.Open(context.Background(), path)
			require.NoError(b, err)
			defer db.Close()
			repo := store.NewMemories(db, store.NewLedger(db))
			opts := memory.Options{Repo: repo}
			if from == "snapshot" {
				opts.SnapshotDir = snaps
				s, err := memory.Open(context.Background(), opts) // writes the snapshot
				require.NoError(b, err)
				require.NoError(b, s.Close())
			}
			var total, cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				start, startCPU := time.Now(), cpuTime()
				s, err := memory.Open(context.Background(), opts)
				total, cpu = total+time.Since(start), cpu+cpuTime()-startCPU
				b.StopTimer()
				require.NoError(b, err)
				st, err := s.Status(context.Background())
				require.NoError(b, err)
				require.Equal(b, n, st.Indexed)
				require.Equal(b, from, st.LoadedFrom)
				require.NoError(b, s.Close())
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/open")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/open")
		})
	}
}

// BenchmarkDecide is one write decision of Consider without its write: the
// secret scan, the embedding, the dedup lookup (content hash, then the
// nearest vector) and the policy.
func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			bs := openBench(b, n, "")
			r := rand.New(rand.NewPCG(99, 1))
			cands := make([]memory.Candidate, 64)
			for i := range cands {
				cands[i] = memory.Candidate{Text: benchText(r), Type: mp.Observation, RunID: backend.NewID(backend.KindRun), CriticScore: 0.9, RuntimeWeight: 0.8}
			}
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				ev, err := bs.store.Evaluate(bs.ctx, cands[i%len(cands)])
				total += time.Since(start)
				if err != nil || ev.Decision.Action == mp.Skip {
					b.Fatal(err, ev.Decision.Reason)
				}
			}
			b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "ms/decision")
		})
	}
}
