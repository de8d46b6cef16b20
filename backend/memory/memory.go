package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"ducklm/backend"
	"ducklm/backend/memorypolicy"
)

// Event types the store records on a run's stream.
const (
	// EvDecided records one write decision with every policy input, the
	// policy table (by the digest of an EvPolicy event of the same run;
	// inline in decisions recorded before) and the outcome, so it can be
	// replayed.
	EvDecided = "memory.decided"
	// EvPolicy records the write policy's table the run's decisions name:
	// once per run and process (a restarted ducklm records the same table
	// again, under the same digest), before the first decision naming it.
	EvPolicy = "memory.policy"
	// EvSkipped records a write the store could not make (the embedder or
	// the database failed) and why; the run goes on.
	EvSkipped = "memory.skipped"
)

// Provenance says where a memory came from.
type Provenance struct {
	RunID   string          `json:"runId,omitempty"`
	EventID string          `json:"eventId,omitempty"`
	Reality backend.Reality `json:"reality"`
	// WorldID names the simulated world of a world-local result.
	WorldID string `json:"worldId,omitempty"`
	// URL and ObservedAt say, for what a server answered (web_fetch,
	// browser), which URL answered and when: the fact is about that URL at
	// that time.
	URL        string    `json:"url,omitempty"`
	ObservedAt time.Time `json:"observedAt,omitzero"`
}

// Source is one provenance merged into a memory, with how it was judged.
type Source struct {
	Provenance
	CriticScore float64   `json:"criticScore"`
	Worth       float64   `json:"worth"`
	AddedAt     time.Time `json:"addedAt"`
}

// Memory is one stored memory. Its text is already redacted.
type Memory struct {
	ID          string            `json:"id"`
	Text        string            `json:"text"`
	Type        memorypolicy.Type `json:"type"`
	Model       string            `json:"embeddingModel"`
	Vector      []float32         `json:"-"` // unit length
	ContentHash string            `json:"contentHash"`
	Provenance  Provenance        `json:"provenance"`
	Weight      float64           `json:"weight"`
	MergedCount int               `json:"mergedCount"`
	CreatedAt   time.Time         `json:"createdAt"`
	MergedAt    time.Time         `json:"mergedAt,omitzero"`
	UpdatedAt   time.Time         `json:"updatedAt"`
	// Sources lists every provenance, the first one included (Get fills
	// it; listings leave it empty).
	Sources []Source `json:"sources,omitempty"`
}

// Filter narrows retrieval and listing. Zero fields do not filter.
type Filter struct {
	Type    memorypolicy.Type `json:"type,omitempty"`
	Reality backend.Reality   `json:"reality,omitempty"`
	// RunID selects memories that first came from this run.
	RunID string `json:"runId,omitempty"`
	// MinSimilarity, when not 0, drops retrieved memories less similar
	// than this.
	MinSimilarity float64 `json:"minSimilarity,omitempty"`
}

// Validate checks the filter's values.
func (f Filter) Validate() error {
	if f.Type != "" && !f.Type.Valid() {
		return backend.Errorf(backend.EINVALID, "memory type %q is not one of fact, observation, procedure, hypothesis, preference", f.Type)
	}
	if f.Reality != "" && !f.Reality.Valid() {
		return backend.Errorf(backend.EINVALID, "reality %q is not external_real or world_local", f.Reality)
	}
	if f.RunID != "" {
		if err := backend.CheckID(f.RunID, backend.KindRun); err != nil {
			return err
		}
	}
	return nil
}

// ListQuery selects memories for a listing, newest first.
type ListQuery struct {
	Filter
	Limit int // 0: all
	// Before, when set, lists only what comes after that cursor in the
	// listing's order (the next page).
	Before Cursor
}

// Embedding is one memory's vector under a model.
type Embedding struct {
	ID     string
	Vector []float32
}

// IndexState describes the memories embedded with one model, so a snapshot
// of the index can be checked against the database.
type IndexState struct {
	Model      string `json:"model"`
	Count      int64  `json:"count"`
	Generation int64  `json:"generation"` // advanced by every change to memories
	MaxUpdated int64  `json:"maxUpdated"` // latest updated_at, µs
}

// Digest identifies the state; equal digests mean the same rows.
func (s IndexState) Digest() string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d", s.Model, s.Count, s.Generation, s.MaxUpdated))
	return hex.EncodeToString(sum[:])
}

// Repo is what the store needs of the database, the memories' source of
// truth. Writes that carry events append them to stream in the same
// transaction, so a memory and the decision that wrote it commit together.
type Repo interface {
	// Insert stores a new memory (its first source included).
	Insert(ctx context.Context, m Memory, stream string, events []backend.Event) error
	// Merge folds src into memory id, raising its weight to weight, and
	// returns the memory as stored (without its vector).
	Merge(ctx context.Context, id string, src Source, weight float64, at time.Time, stream string, events []backend.Event) (Memory, error)
	// PrepareInsert and PrepareMerge prepare Insert's and Merge's rows (no
	// events) for an append to a run's stream to write in its transaction:
	// a decision carried by the event of its cause (carry.go). merged
	// receives the memory as stored after the merge.
	PrepareInsert(m Memory) backend.Prepared
	PrepareMerge(id string, src Source, weight float64, at time.Time, merged *Memory) backend.Prepared
	// Record appends events alone.
	Record(ctx context.Context, stream string, events []backend.Event) error
	// StreamReality returns a stream's reality ("" for a stream not yet created).
	StreamReality(ctx context.Context, stream string) (backend.Reality, error)
	// Get returns a memory with its sources and vector.
	Get(ctx context.Context, id string) (Memory, error)
	// FindByHash returns the id of the oldest memory of that type and
	// reality with that content hash, if one exists (the dedup lookup of
	// every decision: it reads no more than the id).
	FindByHash(ctx context.Context, hash string, typ memorypolicy.Type, reality backend.Reality) (id string, found bool, err error)
	// List returns memories (without vectors or sources), newest first.
	List(ctx context.Context, q ListQuery) ([]Memory, error)
	// Delete removes a memory and its sources.
	Delete(ctx context.Context, id string) error
	// Stored returns which of ids are still stored.
	Stored(ctx context.Context, ids []string) (map[string]bool, error)
	// Load calls fn for every memory embedded with model (vector included,
	// content hash and sources left out) and returns the state those rows
	// make up; consistent is false when the table changed during the scan.
	Load(ctx context.Context, model string, fn func(Memory) error) (state IndexState, consistent bool, err error)
	// State returns the state of the memories embedded with model.
	State(ctx context.Context, model string) (IndexState, error)
	// Stale returns up to limit memories not embedded with model whose id
	// is after after, in id order (no vectors), and, when after is "", how
	// many there are in all (else -1).
	Stale(ctx context.Context, model, after string, limit int) ([]Memory, int64, error)
	// SetEmbeddings stores vectors under model and returns the memories it
	// changed (vectors included; a memory deleted meanwhile is left out).
	SetEmbeddings(ctx context.Context, model string, vecs []Embedding, at time.Time) ([]Memory, error)
	// ActiveModel returns the model the index was last completely built
	// with ("" before the first reindex); SetActiveModel records it.
	ActiveModel(ctx context.Context) (string, error)
	SetActiveModel(ctx context.Context, model string) error
}

// Normalise returns the form of text that content hashes are taken of:
// Unicode NFKC, lower case, runs of white space as one space, trimmed.
func Normalise(text string) string {
	text = strings.ToLower(norm.NFKC.String(text))
	var b strings.Builder
	b.Grow(len(text))
	space := false
	for _, r := range text {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ContentHash returns the hex sha256 of the normalised text.
func ContentHash(text string) string {
	sum := sha256.Sum256([]byte(Normalise(text)))
	return hex.EncodeToString(sum[:])
}
