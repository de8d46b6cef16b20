package chromem

import (
	"context"
	"math"
	"runtime"
	"sort"
	"sync"

	cg "github.com/philippgille/chromem-go"

	"ducklm/backend"
)

// Doc is one document of a collection.
type Doc struct {
	ID string
	// Vector must have unit length (see Normalise).
	Vector []float32
	// Meta is matched exactly by a query's where.
	Meta    map[string]string
	Content string
}

// Hit is one query result.
type Hit struct {
	ID         string
	Meta       map[string]string
	Content    string
	Similarity float32 // cosine similarity, -1..1
}

// Index holds one in-memory chromem-go collection per embedding model.
// It is safe for concurrent use: queries run in parallel with adds.
type Index struct {
	db *cg.DB

	mu   sync.Mutex
	cols map[string]*collection
}

type collection struct {
	c    *cg.Collection
	dims int

	// rw keeps a query's count and chromem's own in step: deletes take it
	// exclusively, queries and adds share it.
	rw sync.RWMutex

	mu   sync.Mutex
	docs map[string]Doc // what chromem holds, for Get and snapshots
}

// New returns an empty index.
func New() *Index {
	return &Index{db: cg.NewDB(), cols: map[string]*collection{}}
}

// noEmbed refuses to embed: every vector reaches the index precomputed.
func noEmbed(context.Context, string) ([]float32, error) {
	return nil, backend.Errorf(backend.EINTERNAL, "the vector index does not embed text; pass vectors")
}

func (ix *Index) collection(model string, create bool) (*collection, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if c, ok := ix.cols[model]; ok || !create {
		return c, nil
	}
	if model == "" {
		return nil, backend.Errorf(backend.EINVALID, "a vector collection needs an embedding model name")
	}
	c, err := ix.db.CreateCollection(model, nil, noEmbed)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot create the vector collection for %s", model)
	}
	col := &collection{c: c, docs: map[string]Doc{}}
	ix.cols[model] = col
	return col, nil
}

// unitTolerance is how far from 1 a vector's length may be. chromem-go
// renormalises (a copy per document) beyond 1e-6; the vectors ducklm makes
// are within 1e-7.
const unitTolerance = 1e-3

// Unit reports whether v has unit length.
func Unit(v []float32) bool {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return len(v) > 0 && math.Abs(math.Sqrt(s)-1) < unitTolerance
}

// Normalise scales v to unit length in place and returns it; it returns
// false for a zero or non-finite vector.
func Normalise(v []float32) ([]float32, bool) {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	n := math.Sqrt(s)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return v, false
	}
	for i, f := range v {
		v[i] = float32(float64(f) / n)
	}
	return v, true
}

// Add adds docs to model's collection (creating it), replacing documents
// with the same ids. All vectors of a model must have one length.
func (ix *Index) Add(ctx context.Context, model string, docs []Doc) error {
	if len(docs) == 0 {
		return nil
	}
	col, err := ix.collection(model, true)
	if err != nil {
		return err
	}
	col.mu.Lock()
	for _, d := range docs {
		if err := col.check(model, d); err != nil {
			col.mu.Unlock()
			return err
		}
	}
	col.mu.Unlock()
	col.rw.RLock()
	defer col.rw.RUnlock()
	// A pool of one goroutine per CPU: chromem-go's AddDocuments starts one
	// goroutine per document, which costs more than adding it.
	workers := min(runtime.GOMAXPROCS(0), len(docs))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int, 256)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := col.c.AddDocument(ctx, cg.Document{ID: docs[i].ID, Embedding: docs[i].Vector, Metadata: docs[i].Meta, Content: docs[i].Content}); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	for i := range docs {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		return backend.Wrap(first, backend.EINTERNAL, "cannot add to the vector collection %s", model)
	}
	col.mu.Lock()
	if len(col.docs) == 0 && len(docs) > 64 {
		col.docs = make(map[string]Doc, len(docs))
	}
	for _, d := range docs {
		col.docs[d.ID] = d
	}
	col.mu.Unlock()
	return nil
}

// check validates d against the collection; col.mu is held.
func (col *collection) check(model string, d Doc) error {
	if d.ID == "" {
		return backend.Errorf(backend.EINVALID, "a vector document needs an id")
	}
	if !Unit(d.Vector) {
		return backend.Errorf(backend.EINVALID, "the vector of %s is not unit length; vectors are normalised before they reach the index", d.ID)
	}
	if col.dims == 0 {
		col.dims = len(d.Vector)
	}
	if len(d.Vector) != col.dims {
		return backend.Errorf(backend.EINVALID, "the vector of %s has %d dimensions, but %s vectors have %d", d.ID, len(d.Vector), model, col.dims)
	}
	return nil
}

// Get returns a document of model's collection.
func (ix *Index) Get(model, id string) (Doc, bool) {
	col, _ := ix.collection(model, false)
	if col == nil {
		return Doc{}, false
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	d, ok := col.docs[id]
	return d, ok
}

// SetMeta replaces the metadata of document id in every collection that
// holds it (its vector and content stay).
func (ix *Index) SetMeta(ctx context.Context, id string, meta map[string]string) error {
	for _, model := range ix.Models() {
		if d, ok := ix.Get(model, id); ok {
			d.Meta = meta
			if err := ix.Add(ctx, model, []Doc{d}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete removes document id from every collection.
func (ix *Index) Delete(ctx context.Context, id string) error {
	for _, model := range ix.Models() {
		col, _ := ix.collection(model, false)
		if col == nil {
			continue
		}
		col.rw.Lock()
		col.mu.Lock()
		_, ok := col.docs[id]
		delete(col.docs, id)
		col.mu.Unlock()
		var err error
		if ok {
			err = col.c.Delete(ctx, nil, nil, id)
		}
		col.rw.Unlock()
		if err != nil {
			return backend.Wrap(err, backend.EINTERNAL, "cannot remove %s from the vector index", id)
		}
	}
	return nil
}

// Query returns up to k documents of model's collection most similar to
// vec (unit length) whose metadata matches every pair of where, most
// similar first (equal similarities by id). Which of several documents
// tied at the k-th place makes the cut is chromem-go's choice.
func (ix *Index) Query(ctx context.Context, model string, vec []float32, k int, where map[string]string) ([]Hit, error) {
	col, _ := ix.collection(model, false)
	if col == nil || k <= 0 {
		return nil, nil
	}
	col.rw.RLock()
	defer col.rw.RUnlock()
	n := col.c.Count()
	if n == 0 {
		return nil, nil
	}
	if len(vec) != col.dims {
		return nil, backend.Errorf(backend.EINVALID, "the query vector has %d dimensions, but %s vectors have %d", len(vec), model, col.dims)
	}
	if len(where) == 0 {
		where = nil
	}
	res, err := col.c.QueryEmbedding(ctx, vec, min(k, n), where, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, backend.Wrap(ctx.Err(), backend.EUNAVAILABLE, "the vector query was cancelled")
		}
		return nil, backend.Wrap(err, backend.EINTERNAL, "the vector query on %s failed", model)
	}
	out := make([]Hit, len(res))
	for i, r := range res {
		out[i] = Hit{ID: r.ID, Meta: r.Metadata, Content: r.Content, Similarity: r.Similarity}
	}
	// chromem-go orders equal similarities at random; by id they are stable.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Similarity != out[j].Similarity {
			return out[i].Similarity > out[j].Similarity
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Count returns the number of documents of model.
func (ix *Index) Count(model string) int {
	col, _ := ix.collection(model, false)
	if col == nil {
		return 0
	}
	return col.c.Count()
}

// Drop removes model's collection.
func (ix *Index) Drop(model string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if _, ok := ix.cols[model]; ok {
		delete(ix.cols, model)
		_ = ix.db.DeleteCollection(model)
	}
}

// Models lists the models that have a collection, sorted.
func (ix *Index) Models() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make([]string, 0, len(ix.cols))
	for m := range ix.cols {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Docs returns model's documents sorted by id.
func (ix *Index) Docs(model string) []Doc {
	col, _ := ix.collection(model, false)
	if col == nil {
		return nil
	}
	col.mu.Lock()
	out := make([]Doc, 0, len(col.docs))
	for _, d := range col.docs {
		out = append(out, d)
	}
	col.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
