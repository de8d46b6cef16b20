package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"ducklm/backend"
	"ducklm/backend/chromem"
	"ducklm/backend/memorypolicy"
)

// Candidate is something a run found that might be worth remembering.
type Candidate struct {
	Text string
	// Type is the proposed type; a world-local result is kept as a
	// hypothesis whatever is proposed.
	Type memorypolicy.Type
	// Reality of the content ("" means external_real); WorldID names the
	// simulated world of a world-local result.
	Reality backend.Reality
	WorldID string
	// RunID is the run the content came from: provenance, and the stream
	// the decision is recorded on. EventID is the event that holds it.
	RunID   string
	EventID string
	// CriticScore (0..1) is the critic's score of the step; RuntimeWeight
	// (0..1) is how much the runtime values this kind of source.
	CriticScore   float64
	RuntimeWeight float64
	// Tick is the run's world-local time, stamped on the decision's event.
	Tick int64
	// URL and ObservedAt name the URL that answered and when, for a
	// server's answer (Provenance.URL, ObservedAt).
	URL        string
	ObservedAt time.Time
}

func (c Candidate) reality() backend.Reality {
	if c.Reality == "" {
		return backend.ExternalReal
	}
	return c.Reality
}

func (c Candidate) provenance() Provenance {
	return Provenance{RunID: c.RunID, EventID: c.EventID, Reality: c.reality(), WorldID: c.WorldID, URL: c.URL, ObservedAt: c.ObservedAt}
}

// Evaluation is a decision with what it was made from; nothing is written.
type Evaluation struct {
	Input       memorypolicy.Input    `json:"input"`
	Decision    memorypolicy.Decision `json:"decision"`
	Text        string                `json:"-"` // redacted, as it would be stored
	ContentHash string                `json:"contentHash"`
	Model       string                `json:"embeddingModel,omitempty"` // "" when no embedding was needed
	vector      []float32
}

// Decided is what Consider did.
type Decided struct {
	Evaluation
	// MemoryID is the memory stored or merged into.
	MemoryID string `json:"memoryId,omitempty"`
	// EventID is the recorded memory.decided (or memory.skipped) event.
	EventID string `json:"eventId,omitempty"`
	// Skipped says why a write could not be made ("" when it was, or when
	// the policy itself decided to skip).
	Skipped string `json:"skipped,omitempty"`
}

// DecidedPayload is the payload of a memory.decided event: every policy
// input, the table, and the outcome. Table.Decide(Input) == Decision.
// A decision says each thing once: the table by digest (its memory.policy
// event), the outcome not at all (the table's for the input), the source
// not at all when it is the event's own stream, cause (the step's result)
// and reality. ReadDecided fills all three in; decisions recorded before
// hold them inline and read the same.
//
// Nor does it repeat what the event or the memory it names says (see
// compact): the input's reality when it is the event's, the nearest
// memory when it is the one merged into (ReadDecided gives both back), and
// the content hash and embedding model when the memory's row holds them
// (a store, an exact duplicate: ReadDecided leaves them empty, Get gives
// the memory's).
type DecidedPayload struct {
	Input memorypolicy.Input `json:"input"`
	// Table is the policy's table: inline in decisions recorded before
	// runs recorded it once; ReadDecided fills it in from TableDigest.
	Table *memorypolicy.Table `json:"table,omitempty"`
	// TableDigest names the run's memory.policy event that holds the table;
	// absent, the table is the one of the run's latest memory.policy event
	// before the decision (a store records its table on a run before its
	// first decision there, again after each start).
	TableDigest string `json:"tableDigest,omitempty"`
	// Decision is the outcome: absent when the table (by digest) gives it.
	Decision memorypolicy.Decision `json:"decision,omitzero"`
	MemoryID string                `json:"memoryId,omitempty"` // set when a memory was stored or merged into
	// ContentHash is the hash of the (redacted) candidate's text, and
	// EmbeddingModel the model that embedded it for the dedup lookup: both
	// empty when MemoryID names a memory whose row holds them (its hash for
	// a store or an exact duplicate, its model for every store and merge).
	ContentHash    string `json:"contentHash,omitempty"`
	EmbeddingModel string `json:"embeddingModel,omitempty"`
	// Source is where the content came from: absent when the event's own
	// stream, causation and reality say it.
	Source Provenance `json:"source,omitzero"`
}

// SkippedPayload is the payload of a memory.skipped event.
type SkippedPayload struct {
	// Stage is where the write failed: "embed", "lookup" or "write".
	Stage          string                 `json:"stage"`
	Reason         string                 `json:"reason"`
	Code           string                 `json:"code"`
	Input          *memorypolicy.Input    `json:"input,omitempty"`
	Decision       *memorypolicy.Decision `json:"decision,omitempty"`
	ContentHash    string                 `json:"contentHash"`
	EmbeddingModel string                 `json:"embeddingModel,omitempty"`
	Source         Provenance             `json:"source"`
}

// Evaluate runs the secret scan, the dedup lookup and the write policy on
// c without writing anything.
func (s *Store) Evaluate(ctx context.Context, c Candidate) (Evaluation, error) {
	ev, stage, _, err := s.evaluate(ctx, c, false)
	if err != nil {
		return ev, backend.Wrap(err, backend.ErrorCode(err), "the memory %s failed", stage)
	}
	return ev, nil
}

// evaluate decides about c. With lock set it takes writeMu for the dedup
// lookup (the embedding, which may be slow, runs before) and reports
// whether it returns holding it.
func (s *Store) evaluate(ctx context.Context, c Candidate, lock bool) (ev Evaluation, stage string, locked bool, err error) {
	scan := ScanSecrets(c.Text)
	text := strings.TrimSpace(scan.Redacted)
	ev = Evaluation{Text: text, ContentHash: ContentHash(text)}
	ev.Input = memorypolicy.Input{CriticScore: finite(c.CriticScore), MemoryType: c.Type, RuntimeWeight: finite(c.RuntimeWeight),
		Reality: c.reality(), WorldID: c.WorldID, TextRunes: utf8.RuneCountInString(text), Safety: scan.Safety()}
	// Dedup only turns a store into a merge: what the policy skips without
	// it, it skips with it, so junk never costs an embedding.
	if ev.Decision = s.table.Decide(ev.Input); ev.Decision.Action == memorypolicy.Skip {
		return ev, "", false, nil
	}
	for {
		v := s.view.Load()
		vecs, err := v.emb.Embed(ctx, []string{text})
		if err != nil {
			return ev, "embed", false, err
		}
		if lock {
			s.writeMu.Lock()
			if s.view.Load() != v { // a reindex switched models meanwhile
				s.writeMu.Unlock()
				continue
			}
		}
		ev.Model, ev.vector = v.model, vecs[0]
		break
	}
	dedup, err := s.dedup(ctx, ev, memorypolicy.EffectiveType(c.Type, c.reality()), c.reality(), lock)
	if err != nil {
		return ev, "lookup", lock, err
	}
	ev.Input.Dedup = dedup
	ev.Decision = s.table.Decide(ev.Input)
	return ev, "", lock, nil
}

// finite keeps a non-finite score recordable in JSON: it becomes -1, which
// the policy refuses as out of range, as it would have refused NaN.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return -1
	}
	return v
}

// dedup looks for the same content first, then for the nearest vector,
// among memories of the same type and reality: a hypothesis never merges
// into a fact.
//
// locked says the caller holds writeMu: the store then answers the exact
// lookup from the memories it knows (Store.known), and asks the database
// only for a text it has not seen.
func (s *Store) dedup(ctx context.Context, ev Evaluation, typ memorypolicy.Type, reality backend.Reality, locked bool) (memorypolicy.Dedup, error) {
	key := hashKey(ev.ContentHash, typ, reality)
	id, found := "", false
	if locked && s.known != nil {
		id, found = s.known[key]
	}
	if !found {
		var err error
		if id, found, err = s.repo.FindByHash(ctx, ev.ContentHash, typ, reality); err != nil {
			return memorypolicy.Dedup{}, err
		}
		if found && locked && s.known != nil {
			s.known[key] = id
		}
	}
	if found {
		return memorypolicy.Dedup{ExactMatch: true, NearestID: id, NearestSimilarity: 1}, nil
	}
	hits, err := s.index.Query(ctx, ev.Model, ev.vector, 1, map[string]string{metaType: string(typ), metaReality: string(reality)})
	if err != nil || len(hits) == 0 {
		return memorypolicy.Dedup{}, err
	}
	return memorypolicy.Dedup{NearestID: hits[0].ID, NearestSimilarity: max(-1, min(1, float64(hits[0].Similarity)))}, nil
}

// Consider runs the write policy on c and applies its decision: store a new
// memory, merge into an existing one, or skip. The decision is recorded as
// a memory.decided event on c's run stream, in the same transaction as the
// write. When the embedder or the database fails, nothing is written, a
// memory.skipped event says why (if the ledger still works), and the error
// is returned: the run goes on without the memory.
func (s *Store) Consider(ctx context.Context, c Candidate) (Decided, error) {
	p, err := s.Decide(ctx, c)
	if err != nil {
		return Decided{}, err
	}
	return p.Apply(ctx, p.Decision())
}

// Pending is the write policy's verdict on one candidate, not applied yet:
// the caller (the runtime loop) takes its Decision and applies it. Until
// Apply, the store's writes wait (the dedup lookup stays true), so Apply
// must follow.
type Pending struct {
	s      *Store
	c      Candidate
	ev     Evaluation
	stage  string // where evaluating failed ("" when it did not)
	err    error
	locked bool
	once   sync.Once
}

// Decide runs the secret scan, the dedup lookup and the write policy on c
// and returns the verdict; nothing is written.
func (s *Store) Decide(ctx context.Context, c Candidate) (*Pending, error) {
	if err := backend.CheckID(c.RunID, backend.KindRun); err != nil {
		return nil, backend.Wrap(err, backend.EINVALID, "a memory candidate needs the run it came from")
	}
	p := &Pending{s: s, c: c}
	p.ev, p.stage, p.locked, p.err = s.evaluate(ctx, c, true)
	return p, nil
}

// Decision is the policy's decision as a decision object: store_memory
// (a store or a merge) or a noop that skips, with the policy's decision as
// its payload. When the candidate could not be evaluated (the embedder or
// the database failed) it is a noop that says so: the write is skipped and
// the run goes on.
func (p *Pending) Decision() backend.Decision {
	if p.err != nil {
		return backend.NewDecision(backend.DecisionNoop, struct{}{}, 1,
			"the memory was not written: "+stageNames[p.stage]+" failed: "+backend.ErrorMessage(p.err))
	}
	return p.ev.Decision.Object()
}

// Apply carries out d, which must be this verdict's Decision: the write and
// its memory.decided event, or the record of a skip. It releases the
// store's writes.
func (p *Pending) Apply(ctx context.Context, applied backend.Decision) (Decided, error) {
	defer p.release()
	s, c, ev := p.s, p.c, p.ev
	// The decision is recorded even when the caller was cancelled meanwhile.
	wctx := context.WithoutCancel(ctx)
	if want := p.Decision(); applied.Type != want.Type || !bytes.Equal(applied.Payload, want.Payload) {
		return Decided{Evaluation: ev}, backend.Errorf(backend.EINVALID, "the memory decision applied (%s) is not the write policy's (%s)", applied.Type, want.Type)
	}
	if p.err != nil {
		return s.skipped(wctx, c, ev, p.stage, p.err)
	}
	reality, err := s.streamReality(wctx, c.RunID)
	if err != nil {
		return s.skipped(wctx, c, ev, "write", err)
	}
	if reality == "" {
		reality = backend.ExternalReal
	}
	d := Decided{Evaluation: ev}
	w := p.plan(reality, causeOf(c))
	e := decisionEvent(EvDecided, w.payload, reality, c)
	switch {
	case w.stored != nil:
		d.MemoryID = w.stored.ID
		if err := s.recordWithPolicy(c, reality, e, func(events []backend.Event) error {
			return s.repo.Insert(wctx, *w.stored, c.RunID, events)
		}); err != nil {
			return s.skipped(wctx, c, ev, "write", err)
		}
		s.indexStored(wctx, *w.stored)
	case w.mergeInto != "":
		d.MemoryID = w.mergeInto
		var m Memory
		if err := s.recordWithPolicy(c, reality, e, func(events []backend.Event) (err error) {
			m, err = s.repo.Merge(wctx, w.mergeInto, w.src, ev.Decision.Worth, w.now, c.RunID, events)
			return err
		}); err != nil {
			return s.skipped(wctx, c, ev, "write", err)
		}
		s.indexMerged(wctx, m)
	default:
		if err := s.recordWithPolicy(c, reality, e, func(events []backend.Event) error {
			return s.repo.Record(wctx, c.RunID, events)
		}); err != nil {
			return d, err
		}
	}
	d.EventID = e.ID
	return d, nil
}

// plannedWrite is what applying a verdict writes: its decision as recorded
// (compact), and a new memory or a source merged into one (neither for a
// skip).
type plannedWrite struct {
	payload   DecidedPayload
	stored    *Memory
	mergeInto string
	src       Source
	now       time.Time
}

// plan returns what applying this verdict writes, for a decision recorded
// on a stream of reality whose event's cause is cause. By reference: the
// table gives the decision, the event the source.
func (p *Pending) plan(reality backend.Reality, cause string) plannedWrite {
	s, c, ev := p.s, p.c, p.ev
	w := plannedWrite{now: s.now().UTC(),
		payload: DecidedPayload{Input: ev.Input, ContentHash: ev.ContentHash, EmbeddingModel: ev.Model}}
	if prov := c.provenance(); prov != (Provenance{RunID: c.RunID, EventID: cause, Reality: reality}) {
		w.payload.Source = prov
	}
	w.src = Source{Provenance: c.provenance(), CriticScore: c.CriticScore, Worth: ev.Decision.Worth, AddedAt: w.now}
	switch ev.Decision.Action {
	case memorypolicy.Store:
		w.stored = &Memory{ID: backend.NewID(backend.KindMemory), Text: ev.Text, Type: ev.Decision.StoreAs, Model: ev.Model, Vector: ev.vector,
			ContentHash: ev.ContentHash, Provenance: c.provenance(), Weight: ev.Decision.Worth, CreatedAt: w.now, UpdatedAt: w.now,
			Sources: []Source{w.src}}
		w.payload.MemoryID = w.stored.ID
	case memorypolicy.Merge:
		w.mergeInto, w.payload.MemoryID = ev.Decision.MergeInto, ev.Decision.MergeInto
	}
	w.payload = w.payload.compact(reality, ev.Decision)
	return w
}

// indexStored brings a memory just stored into the index; indexMerged
// updates a memory just merged into.
func (s *Store) indexStored(ctx context.Context, m Memory) {
	s.dirty.Store(true)
	if s.known != nil {
		// Stored because no memory had its text: it is the oldest that has.
		s.known[hashKey(m.ContentHash, m.Type, m.Provenance.Reality)] = m.ID
	}
	if err := s.index.Add(ctx, m.Model, []chromem.Doc{docFor(m)}); err != nil {
		s.log("index a stored memory", "memory", m.ID, "err", err)
	}
}

func (s *Store) indexMerged(ctx context.Context, m Memory) {
	s.dirty.Store(true)
	if err := s.index.SetMeta(ctx, m.ID, metaFor(m)); err != nil {
		s.log("index a merged memory", "memory", m.ID, "err", err)
	}
}

// Drop lets the store's writes go without applying the verdict: nothing
// is written or recorded.
func (p *Pending) Drop() { p.release() }

func (p *Pending) release() {
	p.once.Do(func() {
		if p.locked {
			p.s.writeMu.Unlock()
		}
	})
}

// recordWithPolicy has write record the decision event e, after the
// policy's table when this store has not recorded it on the run yet (in the
// same transaction: a decision never names a table that is not there).
func (s *Store) recordWithPolicy(c Candidate, reality backend.Reality, e backend.Event, write func([]backend.Event) error) error {
	if _, had := s.policyOn.LoadOrStore(c.RunID, true); had {
		return write([]backend.Event{e})
	}
	p := backend.Event{ID: backend.NewID(backend.KindEvent), Type: EvPolicy, Payload: s.policyPayload, Reality: reality,
		WorldLocalTime: e.WorldLocalTime}
	if err := write([]backend.Event{p, e}); err != nil {
		s.policyOn.Delete(c.RunID)
		return err
	}
	return nil
}

// PolicyPayload is the payload of a memory.policy event.
type PolicyPayload struct {
	// Digest names the table in the decisions that use it: sha256 of the
	// table's JSON.
	Digest string             `json:"digest"`
	Table  memorypolicy.Table `json:"table"`
}

// policyOf returns a table's digest and its memory.policy payload.
func policyOf(t memorypolicy.Table) (string, json.RawMessage) {
	data, _ := json.Marshal(t) // maps marshal in key order: one table, one digest
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	payload, _ := json.Marshal(PolicyPayload{Digest: digest, Table: t})
	return digest, payload
}

// compact leaves out of a decision's payload p what the event recording it
// (of reality), its run or the memory it names says: the table's digest
// (the run's latest memory.policy holds the table); the input's reality
// when it is the event's; the content hash and embedding model when the memory's row
// holds them; the nearest memory when it is the memory merged into.
// ReadDecided restores the reality and the nearest memory, so the table
// still gives decision d for the input read back. A nearest memory
// ReadDecided would restore where there was none (a store with a
// similarity and no memory named, which dedup never gives) keeps the
// outcome inline, and ReadDecided restores nothing into such a decision.
func (p DecidedPayload) compact(reality backend.Reality, d memorypolicy.Decision) DecidedPayload {
	// The store recorded its table on the run before this decision (again
	// after each start): the run's latest.
	p.TableDigest = ""
	if p.Input.Reality == reality {
		p.Input.Reality = ""
	}
	if p.MemoryID == "" {
		return p
	}
	p.EmbeddingModel = ""
	if d.Action == memorypolicy.Store || p.Input.Dedup.ExactMatch {
		p.ContentHash = "" // the memory's own: stored as it, or found by it
	}
	switch dd := &p.Input.Dedup; {
	case !nearestLeftOut(p.MemoryID, *dd):
	case dd.NearestID == p.MemoryID:
		dd.NearestID = ""
	case dd.NearestID == "":
		p.Decision = d
	}
	return p
}

// nearestLeftOut says whether a decision naming memory id with dedup dd may
// have left out its nearest memory, id (see compact).
func nearestLeftOut(id string, dd memorypolicy.Dedup) bool {
	return id != "" && (dd.ExactMatch || dd.NearestSimilarity > 0)
}

// ReadDecided returns the memory decisions among a run's events in order
// (memory.decided events, and decisions carried by the event of their
// cause), each with its policy table: inline in decisions recorded before
// runs recorded it once, else from the run's memory.policy event its
// digest names. A digest no event holds is an error.
func ReadDecided(events []backend.Event) ([]DecidedPayload, error) {
	tables := map[string]*memorypolicy.Table{}
	var latest *memorypolicy.Table
	var out []DecidedPayload
	for _, e := range events {
		if e.Type == EvPolicy {
			var p PolicyPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				return nil, backend.Wrap(err, backend.EINVALID, "event %d (memory.policy) is not a policy table", e.Seq)
			}
			tables[p.Digest], latest = &p.Table, &p.Table
			continue
		}
		p, ok := DecidedIn(e)
		if !ok {
			if e.Type == EvDecided {
				return nil, backend.Errorf(backend.EINVALID, "event %d (memory.decided) is not a memory decision", e.Seq)
			}
			continue
		}
		switch {
		case p.Table != nil:
		case p.TableDigest == "":
			if p.Table = latest; p.Table == nil {
				return nil, backend.Errorf(backend.EINVALID, "event %d (%s) is a memory decision with no memory.policy event before it", e.Seq, e.Type)
			}
		default:
			if p.Table = tables[p.TableDigest]; p.Table == nil {
				return nil, backend.Errorf(backend.EINVALID, "event %d (%s) names the policy table %s, which no earlier memory.policy event of its run holds", e.Seq, e.Type, p.TableDigest)
			}
		}
		if p.Input.Reality == "" {
			p.Input.Reality = e.Reality
		}
		if p.Decision == (memorypolicy.Decision{}) {
			if dd := &p.Input.Dedup; dd.NearestID == "" && nearestLeftOut(p.MemoryID, *dd) {
				dd.NearestID = p.MemoryID
			}
			p.Decision = p.Table.Decide(p.Input)
		}
		if p.Source == (Provenance{}) {
			cause := e.CausationID
			if e.Type != EvDecided {
				cause = e.ID // a carried decision's cause is its event
			}
			p.Source = Provenance{RunID: e.Stream, EventID: cause, Reality: e.Reality}
		}
		out = append(out, p)
	}
	return out, nil
}

// skipped records why a write could not be made and returns the error.
func (s *Store) skipped(ctx context.Context, c Candidate, ev Evaluation, stage string, cause error) (Decided, error) {
	d := Decided{Evaluation: ev, Skipped: backend.ErrorMessage(cause)}
	p := SkippedPayload{Stage: stage, Reason: d.Skipped, Code: backend.ErrorCode(cause), ContentHash: ev.ContentHash,
		EmbeddingModel: ev.Model, Source: c.provenance()}
	p.Input = &ev.Input
	if stage != "embed" {
		p.Decision = &ev.Decision
	}
	err := backend.Wrap(cause, backend.ErrorCode(cause), "the memory was not written: %s failed", stageNames[stage])
	reality, rerr := s.streamReality(ctx, c.RunID)
	if rerr != nil {
		return d, err
	}
	if reality == "" {
		reality = backend.ExternalReal
	}
	e := decisionEvent(EvSkipped, p, reality, c)
	if rerr := s.repo.Record(ctx, c.RunID, []backend.Event{e}); rerr == nil {
		d.EventID = e.ID
	} else {
		s.log("record a skipped memory write", "run", c.RunID, "err", rerr)
	}
	return d, err
}

var stageNames = map[string]string{"embed": "embedding the text", "lookup": "looking for duplicates", "write": "writing to the database"}

func decisionEvent(typ string, payload any, reality backend.Reality, c Candidate) backend.Event {
	data, _ := json.Marshal(payload)
	e := backend.Event{ID: backend.NewID(backend.KindEvent), Type: typ, Payload: data, Reality: reality, WorldLocalTime: max(c.Tick, 0)}
	e.CausationID = causeOf(c)
	return e
}

// causeOf is the causation a decision's event records: the event that
// holds the candidate's content, when it names one.
func causeOf(c Candidate) string {
	if backend.CheckID(c.EventID, backend.KindEvent) == nil {
		return c.EventID
	}
	return ""
}
