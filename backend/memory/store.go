package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ducklm/backend"
	"ducklm/backend/chromem"
	"ducklm/backend/memorypolicy"
)

// MaxK is the most memories one retrieval returns.
const MaxK = 100

// Options configure Open.
type Options struct {
	Repo Repo
	// Embedder embeds texts and queries; nil means the built-in HashEmbedder.
	Embedder Embedder
	// SnapshotDir holds snapshots of the vector index that speed up the
	// start; "" keeps none. They are caches: the database is the truth.
	SnapshotDir string
	// Table is the write policy's thresholds; nil means memorypolicy.Thresholds.
	Table *memorypolicy.Table
	Log   func(msg string, args ...any)
	Now   func() time.Time
	// Shared says other processes write the table (a team's database):
	// each retrieval then leaves out the hits another process removed
	// (Remove records no event for Follow to see) and drops them from the
	// index.
	Shared bool
}

// Store is the memory store: memories in the database, their vectors in an
// in-memory chromem-go index built from it, retrieval by similarity, and
// Consider, which runs the write policy and applies its decision.
type Store struct {
	repo  Repo
	index *chromem.Index
	table memorypolicy.Table
	// policyPayload is the payload of the table's memory.policy event (its
	// digest and the table); policyOn holds the runs this store recorded it
	// on.
	policyPayload []byte
	policyOn      sync.Map // run id → true
	// realities caches the reality of the runs decided on: a stream's
	// reality is fixed when it is created (one read a run, not a decision).
	realities sync.Map // run id → backend.Reality
	snapDir   string
	// shared: other processes write the table (Options.Shared).
	shared bool
	log    func(string, ...any)
	now    func() time.Time

	view atomic.Pointer[view]
	// writeMu serialises decisions and writes, so a dedup lookup sees every
	// memory written before it and the index mirrors the database.
	writeMu sync.Mutex
	// known answers the exact dedup lookup for texts this store stored or
	// found (hashKey → memory id), under writeMu: nil when other processes
	// write the table (shared), where only the database knows. A data
	// directory's own database has one writing process, this one.
	known     map[string]string
	reindexMu sync.Mutex
	progress  atomic.Pointer[Progress]
	dirty     atomic.Bool // the database changed since the last snapshot
	stop      chan struct{}
	closeOnce sync.Once
	bg        sync.WaitGroup

	loadedFrom string
	loadTime   time.Duration
}

// view is the embedder in service and the index collection it fills.
type view struct {
	emb   Embedder
	model string
}

// Open loads the index of opts.Embedder's model, from a snapshot that
// matches the database or else from the database, and returns the store.
// Memories embedded with another model are stale until Reindex (or Repair)
// re-embeds them.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Repo == nil {
		return nil, backend.Errorf(backend.EINTERNAL, "the memory store needs a database")
	}
	s := &Store{repo: opts.Repo, index: chromem.New(), table: memorypolicy.Thresholds, snapDir: opts.SnapshotDir,
		log: opts.Log, now: opts.Now, stop: make(chan struct{}), shared: opts.Shared}
	if !s.shared {
		s.known = map[string]string{}
	}
	if opts.Table != nil {
		if err := opts.Table.Validate(); err != nil {
			return nil, err
		}
		s.table = *opts.Table
	}
	_, s.policyPayload = policyOf(s.table)
	if s.log == nil {
		s.log = func(string, ...any) {}
	}
	if s.now == nil {
		s.now = time.Now
	}
	emb := opts.Embedder
	if emb == nil {
		emb = HashEmbedder{}
	}
	start := time.Now()
	from, err := s.load(ctx, emb.Name())
	if err != nil {
		return nil, err
	}
	s.loadedFrom, s.loadTime = from, time.Since(start)
	s.view.Store(&view{emb: emb, model: emb.Name()})
	return s, nil
}

// Close waits for background work, stops a running reindex, and writes a
// fresh snapshot when the memories changed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.stop) })
	s.reindexMu.Lock()
	defer s.reindexMu.Unlock()
	s.bg.Wait()
	if !s.dirty.Load() || s.snapDir == "" {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	v := s.view.Load()
	st, err := s.repo.State(context.Background(), v.model)
	if err != nil {
		return err
	}
	docs := s.index.Docs(v.model)
	if int64(len(docs)) != st.Count {
		// The index does not mirror the table (memories of this model came
		// from elsewhere): a snapshot would lie, so leave none.
		s.removeSnapshot(v.model)
		return nil
	}
	if err := chromem.WriteSnapshot(s.snapshotPath(v.model), v.model, st.Digest(), docs); err != nil {
		s.log("write the vector snapshot", "err", err)
		return nil
	}
	s.dirty.Store(false)
	return nil
}

// load fills the index with model's memories and says where from.
func (s *Store) load(ctx context.Context, model string) (string, error) {
	path := s.snapshotPath(model)
	if path != "" {
		st, err := s.repo.State(ctx, model)
		if err != nil {
			return "", err
		}
		docs, err := chromem.ReadSnapshot(path, model, st.Digest())
		if err == nil {
			return "snapshot", s.index.Add(ctx, model, docs)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			s.log("rebuilding the vector index from the database", "reason", backend.ErrorMessage(err))
		}
	}
	docs, st, consistent, err := s.loadFromDB(ctx, model)
	if err != nil {
		return "", err
	}
	switch {
	case path == "":
	case consistent:
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			if err := chromem.WriteSnapshot(path, model, st.Digest(), docs); err != nil {
				s.log("write the vector snapshot", "err", err)
			}
		}()
	default:
		s.dirty.Store(true) // the table moved during the load: snapshot at Close
	}
	return "database", nil
}

// loadBatch is how many documents the database scan hands to the index at
// a time: the scan and the index build run side by side.
const loadBatch = 4096

// loadFromDB reads model's memories from the database into the index and
// returns them with the state they make up.
func (s *Store) loadFromDB(ctx context.Context, model string) ([]chromem.Doc, IndexState, bool, error) {
	batches := make(chan []chromem.Doc, 4)
	added := make(chan error, 1)
	go func() {
		var err error
		for b := range batches {
			if err == nil {
				err = s.index.Add(ctx, model, b)
			}
		}
		added <- err
	}()
	var all []chromem.Doc
	batch := make([]chromem.Doc, 0, loadBatch)
	st, consistent, err := s.repo.Load(ctx, model, func(m Memory) error {
		batch = append(batch, docFor(m))
		if len(batch) == loadBatch {
			all = append(all, batch...)
			batches <- batch
			batch = make([]chromem.Doc, 0, loadBatch)
		}
		return nil
	})
	all = append(all, batch...)
	batches <- batch
	close(batches)
	if aerr := <-added; err == nil {
		err = aerr
	}
	return all, st, consistent, err
}

func (s *Store) snapshotPath(model string) string {
	if s.snapDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(model))
	return filepath.Join(s.snapDir, "vectors-"+hex.EncodeToString(sum[:8])+".snap")
}

func (s *Store) removeSnapshot(model string) {
	if p := s.snapshotPath(model); p != "" {
		_ = os.Remove(p)
	}
}

// Index metadata keys. type, reality and run are filterable; the rest of
// the provenance rides in "p" so each document's map stays small.
const (
	metaType    = "type"
	metaReality = "reality"
	metaRun     = "run"
	metaRest    = "p"
)

func metaFor(m Memory) map[string]string {
	rest := strings.Join([]string{m.Provenance.EventID, m.Provenance.WorldID,
		strconv.FormatFloat(m.Weight, 'g', -1, 64), strconv.Itoa(m.MergedCount),
		strconv.FormatInt(m.CreatedAt.UnixMicro(), 10), strconv.FormatInt(optMicros(m.MergedAt), 10)}, "|")
	return map[string]string{metaType: string(m.Type), metaReality: string(m.Provenance.Reality), metaRun: m.Provenance.RunID, metaRest: rest}
}

func optMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func docFor(m Memory) chromem.Doc {
	return chromem.Doc{ID: m.ID, Vector: m.Vector, Meta: metaFor(m), Content: m.Text}
}

// Retrieved is one memory found by Retrieve, with its provenance.
type Retrieved struct {
	ID          string            `json:"id"`
	Text        string            `json:"text"`
	Type        memorypolicy.Type `json:"type"`
	Provenance  Provenance        `json:"provenance"`
	Weight      float64           `json:"weight"`
	MergedCount int               `json:"mergedCount"`
	CreatedAt   time.Time         `json:"createdAt"`
	MergedAt    time.Time         `json:"mergedAt,omitzero"`
	Similarity  float64           `json:"similarity"`
	Model       string            `json:"embeddingModel"`
}

func retrieved(h chromem.Hit, model string) Retrieved {
	r := Retrieved{ID: h.ID, Text: h.Content, Type: memorypolicy.Type(h.Meta[metaType]), Similarity: float64(h.Similarity), Model: model,
		Provenance: Provenance{RunID: h.Meta[metaRun], Reality: backend.Reality(h.Meta[metaReality])}}
	p := strings.Split(h.Meta[metaRest], "|")
	if len(p) == 6 {
		r.Provenance.EventID, r.Provenance.WorldID = p[0], p[1]
		r.Weight, _ = strconv.ParseFloat(p[2], 64)
		r.MergedCount, _ = strconv.Atoi(p[3])
		created, _ := strconv.ParseInt(p[4], 10, 64)
		merged, _ := strconv.ParseInt(p[5], 10, 64)
		r.CreatedAt = time.UnixMicro(created).UTC()
		if merged != 0 {
			r.MergedAt = time.UnixMicro(merged).UTC()
		}
	}
	return r
}

// Retrieve returns up to k memories most similar to query that pass the
// filter, most similar first, each with its provenance. It reads only the
// in-memory index; a running reindex never blocks it.
func (s *Store) Retrieve(ctx context.Context, query string, k int, f Filter) ([]Retrieved, error) {
	if k <= 0 || k > MaxK {
		return nil, backend.Errorf(backend.EINVALID, "a memory search returns 1 to %d results, not %d", MaxK, k)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, backend.Errorf(backend.EINVALID, "a memory search needs a query")
	}
	v := s.view.Load()
	vecs, err := v.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	var where map[string]string
	if f.Type != "" || f.Reality != "" || f.RunID != "" {
		where = map[string]string{}
		if f.Type != "" {
			where[metaType] = string(f.Type)
		}
		if f.Reality != "" {
			where[metaReality] = string(f.Reality)
		}
		if f.RunID != "" {
			where[metaRun] = f.RunID
		}
	}
	hits, err := s.index.Query(ctx, v.model, vecs[0], k, where)
	if err != nil {
		return nil, err
	}
	out := make([]Retrieved, 0, len(hits))
	for _, h := range hits {
		if f.MinSimilarity != 0 && float64(h.Similarity) < f.MinSimilarity {
			break
		}
		out = append(out, retrieved(h, v.model))
	}
	if s.shared {
		return s.stillStored(ctx, out)
	}
	return out, nil
}

// stillStored leaves out of out the memories no longer stored (another
// process removed them) and drops them from the index: one indexed read.
func (s *Store) stillStored(ctx context.Context, out []Retrieved) ([]Retrieved, error) {
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.ID
	}
	stored, err := s.repo.Stored(ctx, ids)
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, r := range out {
		if stored[r.ID] {
			kept = append(kept, r)
			continue
		}
		s.writeMu.Lock()
		if err := s.index.Delete(ctx, r.ID); err == nil {
			s.dirty.Store(true)
		}
		s.writeMu.Unlock()
	}
	return kept, nil
}

// Get returns one memory with all its provenance, from the database.
func (s *Store) Get(ctx context.Context, id string) (Memory, error) { return s.repo.Get(ctx, id) }

// List returns memories newest first, from the database.
func (s *Store) List(ctx context.Context, q ListQuery) ([]Memory, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return s.repo.List(ctx, q)
}

// Remove deletes a memory from the database and the index.
func (s *Store) Remove(ctx context.Context, id string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.repo.Delete(ctx, id); err != nil {
		return err
	}
	s.dirty.Store(true)
	for k, known := range s.known {
		if known == id {
			delete(s.known, k)
		}
	}
	return s.index.Delete(ctx, id)
}

// hashKey is what the exact dedup lookup matches: a content hash within a
// type and a reality.
func hashKey(hash string, typ memorypolicy.Type, reality backend.Reality) string {
	return hash + "\x00" + string(typ) + "\x00" + string(reality)
}

// Model returns the embedding model in service.
func (s *Store) Model() string { return s.view.Load().model }

// Embedder returns the embedder in service.
func (s *Store) Embedder() Embedder { return s.view.Load().emb }

// Status describes the store.
type Status struct {
	Model      string        `json:"model"`
	Indexed    int           `json:"indexed"`
	Stale      int64         `json:"stale"`      // memories not yet embedded with Model
	LoadedFrom string        `json:"loadedFrom"` // "snapshot" or "database"
	LoadTime   time.Duration `json:"loadTimeNs"`
	Reindex    *Progress     `json:"reindex,omitempty"`
}

// Progress is the state of the latest reindex.
type Progress struct {
	Model   string `json:"model"`
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Running bool   `json:"running"`
	Error   string `json:"error,omitempty"`
}

// Status returns the store's status.
func (s *Store) Status(ctx context.Context) (Status, error) {
	v := s.view.Load()
	st := Status{Model: v.model, Indexed: s.index.Count(v.model), LoadedFrom: s.loadedFrom, LoadTime: s.loadTime, Reindex: s.progress.Load()}
	_, stale, err := s.repo.Stale(ctx, v.model, "", 0)
	st.Stale = stale
	return st, err
}

// streamReality returns run's stream's reality ("" before its first
// event), from the cache once known.
func (s *Store) streamReality(ctx context.Context, run string) (backend.Reality, error) {
	if r, ok := s.realities.Load(run); ok {
		return r.(backend.Reality), nil
	}
	r, err := s.repo.StreamReality(ctx, run)
	if err == nil && r != "" {
		s.realities.Store(run, r)
	}
	return r, err
}
