package runtime

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/memory"
)

// A task run's checkpoint is exact without holding the whole state: its
// record names a base, a blob with the whole run state folded to some seq B
// of the same run, and the checkpoint's own ledger seq L >= B. The state at
// the checkpoint is the base folded with the run's events B+1..L, which the
// ledger keeps forever. The driver writes a new base when the events since
// the last one outweigh it (rebaseAfter), so a step's checkpoint costs a row
// and an event in the step's own commit, and the bytes of bases stay
// proportional to the run's events. A checkpoint written before bases
// (docs/checkpoints.md) is the same thing with B = L-1: one reader serves
// both. Every reader of a checkpoint goes through stateAt or Load.

// base is a stored whole state of a run, folded to seq.
type base struct {
	ref backend.BlobRef
	seq int64
}

// runMemo is what the controller keeps of a run between its events.
type runMemo struct {
	// mu is held across every append of the run, so head stays exact.
	mu sync.Mutex
	// head is the light fold (status, error, clock) after the run's last
	// event as this process knows it; nil until known.
	head *RunState
	// base is the run's newest base; nil until one is written or read.
	base *base
	// recent are the run's last events as this process appended them, in
	// seq order up to head: the driver folds them without reading them back.
	recent []backend.Event
	// tail are the run's last events from every writer in this process,
	// when the ledger reports its commits (tail.go).
	tail runTail
	// flush, when set, will flush the run's deferred result a grace after
	// the newest, resultAt (flush.go).
	flush    *time.Timer
	resultAt time.Time
	// damagedLogged is the damaged latest checkpoint this process has
	// logged: a finished run, which no driver takes up to write a fresh
	// one, would otherwise log it at every Load.
	damagedLogged string
}

// recentEvents is how many appended events a run's memo keeps.
const recentEvents = 64

// remember keeps stored, the events of the run's last append, after those
// before them. m.mu is held.
func (m *runMemo) remember(stored []backend.Event) {
	if n := len(m.recent); n > 0 && m.recent[n-1].Seq+1 != stored[0].Seq {
		m.recent = nil
	}
	if len(m.recent)+len(stored) > recentEvents {
		keep := max(recentEvents-len(stored), 0)
		m.recent = append(m.recent[:0:0], m.recent[len(m.recent)-keep:]...)
	}
	m.recent = append(m.recent, stored...)
}

func (c *Controller) memo(runID string) *runMemo {
	c.memoMu.Lock()
	defer c.memoMu.Unlock()
	m := c.memos[runID]
	if m == nil {
		m = &runMemo{}
		c.memos[runID] = m
	}
	return m
}

// noteLoaded records what a fold from the ledger learnt: the head, and the
// base it started from (baseSeq < 0: none of this run).
func (c *Controller) noteLoaded(st *RunState, cp backend.Checkpoint, baseSeq int64) {
	m := c.memo(st.RunID)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.head == nil || m.head.Seq < st.Seq {
		m.head = st.light()
	}
	if baseSeq >= 0 && (m.base == nil || m.base.seq < baseSeq) {
		m.base = &base{ref: cp.Blob, seq: baseSeq}
	}
}

// rebaseAfter is how many events after its base a run writes a new one:
// about as many as the state has steps times the events of a step, so a
// base's bytes are spread over the events that follow it, and a load folds
// at most that many events after reading the base.
func rebaseAfter(st *RunState) int64 {
	return max(256, 4*int64(len(st.Steps)))
}

// ensureBase returns the run's base, first writing st (caught up, so exact
// at st.Seq) as a new one when there is none or it is too far behind.
func (c *Controller) ensureBase(ctx context.Context, st *RunState) (*base, error) {
	m := c.memo(st.RunID)
	m.mu.Lock()
	b := m.base
	m.mu.Unlock()
	if b != nil && b.seq <= st.Seq && st.Seq-b.seq < rebaseAfter(st) {
		return b, nil
	}
	data, err := encodeState(st)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot encode the state of run %s", st.RunID)
	}
	// The blob is durable before any checkpoint row names it.
	ref, err := c.d.Blobs.Put(context.WithoutCancel(ctx), data, "application/gzip")
	if err != nil {
		return nil, err
	}
	nb := &base{ref: ref, seq: st.Seq}
	m.mu.Lock()
	if m.base == nil || m.base.seq < nb.seq {
		m.base = nb
	}
	m.mu.Unlock()
	return nb, nil
}

// checkpointRecord returns a checkpoint record on base b; the store sets
// its ledger seq to its commit's last event.
func (c *Controller) checkpointRecord(st *RunState, b *base) backend.Checkpoint {
	return backend.Checkpoint{ID: backend.NewID(backend.KindCheckpoint), WorldID: st.WorldID, RunID: st.RunID,
		WorldLocalTime: st.Ticks, Blob: b.ref, CreatedAt: c.now().UTC()}
}

// checkpointOf returns a checkpoint record on base b and its event.
func (c *Controller) checkpointOf(st *RunState, b *base) (backend.Checkpoint, backend.Event) {
	cp := c.checkpointRecord(st, b)
	// seq is what the blob covers, as it always was; the checkpoint covers
	// up to its own event. The blob's digest is in the record: in the event
	// it would repeat a base's digest at every step.
	e := event(EvCheckpoint, map[string]any{"checkpointId": cp.ID, "seq": b.seq}, st.Ticks)
	return cp, e
}

// appendResult appends a step's result (with its critique and its memory
// decision, when it has them) as the event that ends a checkpoint, whose
// record shares its commit: one event where runs recorded four
// (step.finished, critic.scored, run.checkpoint, memory.decided). Without
// a base yet the result goes alone; the run's next checkpoint covers it.
// id is the event's id (a memory's provenance names it); carried, when
// set, is the memory decision the result carries, whose events go before
// it and whose rows are written in the same transaction. first, when set,
// is the step's start, recorded with its result (a step safe to repeat).
func (c *Controller) appendResult(ctx context.Context, st *RunState, first []backend.Event, fin stepFinished, id string, carried *memory.Carried) error {
	ctx = context.WithoutCancel(ctx) // what happened is recorded even when the run is being cancelled
	m := c.memo(st.RunID)
	m.mu.Lock()
	b := m.base
	m.mu.Unlock()
	var cp *backend.Checkpoint
	if b != nil {
		rec := c.checkpointRecord(st, b)
		cp, fin.CheckpointID = &rec, rec.ID
	}
	events := first // the step's start, when it rides on its result
	var also backend.Prepared
	if carried != nil {
		fin.Memory, also = carried.Payload, carried.Write
		events = append(events, carried.Before...)
	}
	events = append(events, stepEvent(fin, id, st.Ticks))
	return c.appendAlso(ctx, st, backend.ExpectAny, cp, also, events...)
}

// checkpoint records a checkpoint after a critical transition (a plan
// accepted, the run's end). st must be caught up.
func (c *Controller) checkpoint(ctx context.Context, st *RunState) {
	b, err := c.ensureBase(ctx, st)
	if err == nil {
		cp, e := c.checkpointOf(st, b)
		err = c.appendWith(ctx, st, &cp, e)
	}
	if err != nil {
		c.d.Log("checkpoint", "run", st.RunID, "err", err)
	}
}

// appendCheckpointed appends events and a checkpoint after them in one
// transaction: one durable commit where there would be two. The checkpoint
// is exact whatever else the run's other writers appended meanwhile (its
// base is older than all of it). Without a base yet, the events go alone;
// the run's next checkpoint covers them.
func (c *Controller) appendCheckpointed(ctx context.Context, st *RunState, events ...backend.Event) error {
	ctx = context.WithoutCancel(ctx) // what happened is recorded even when the run is being cancelled
	m := c.memo(st.RunID)
	m.mu.Lock()
	b := m.base
	m.mu.Unlock()
	if b == nil {
		return c.appendWith(ctx, st, nil, events...)
	}
	cp, ce := c.checkpointOf(st, b)
	all := append(append(make([]backend.Event, 0, len(events)+1), events...), ce)
	return c.appendWith(ctx, st, &cp, all...)
}

// stateAt returns the exact state of a task run at checkpoint cp: its base
// folded with the run's events up to the checkpoint.
func (c *Controller) stateAt(ctx context.Context, cp backend.Checkpoint) (*RunState, error) {
	data, err := c.d.Blobs.Get(ctx, cp.Blob)
	if err != nil {
		return nil, err
	}
	st := NewRunState("", "")
	if err := decodeState(data, st); err != nil {
		return nil, backend.Errorf(backend.ECORRUPT, "checkpoint %s is unreadable", cp.ID)
	}
	if st.Steps == nil {
		st.Steps = map[string]*StepRecord{}
	}
	if st.Seq < cp.LedgerSeq {
		events, err := c.d.Events.Query(ctx, backend.EventQuery{Stream: cp.RunID, FromSeq: st.Seq + 1, ToSeq: cp.LedgerSeq})
		if err != nil {
			return nil, err
		}
		for _, e := range events {
			st.Apply(e)
		}
	}
	return st, nil
}

// StateAt returns the exact state of a task run at one of its checkpoints:
// what a fork from it starts from. A simulated world's checkpoint is not
// a task run's: EINVALID.
func (c *Controller) StateAt(ctx context.Context, checkpointID string) (*RunState, error) {
	at, err := c.taskCheckpoint(ctx, checkpointID)
	return at.state, err
}

// taskAt is a task run's checkpoint with its run, its world and the run's
// exact state there.
type taskAt struct {
	cp    backend.Checkpoint
	run   backend.WorldRun
	world backend.WorldSpec
	state *RunState
}

// taskCheckpoint reads checkpoint id of a task run (a simulated world's
// is EINVALID) and the run's state there: what StateAt answers and a fork
// starts from.
func (c *Controller) taskCheckpoint(ctx context.Context, id string) (taskAt, error) {
	var at taskAt
	var err error
	if at.cp, err = c.d.Store.GetCheckpoint(ctx, id); err != nil {
		return taskAt{}, err
	}
	if at.run, err = c.d.Store.GetRun(ctx, at.cp.RunID); err != nil {
		return taskAt{}, err
	}
	if at.world, err = c.d.Store.GetSpec(ctx, at.run.WorldID); err != nil {
		return taskAt{}, err
	}
	if at.world.Backend != BackendTask {
		return taskAt{}, backend.Errorf(backend.EINVALID, "checkpoint %s belongs to a simulated world, not a task run; fork it as a world", at.cp.ID)
	}
	if at.state, err = c.stateAt(ctx, at.cp); err != nil {
		return taskAt{}, err
	}
	return at, nil
}

// encodeState returns a base's bytes: the fold's JSON, gzipped. A base
// holds every step's record, plan node included, which compresses about
// tenfold, and it is written once per rebaseAfter events.
func encodeState(st *RunState) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if err := json.NewEncoder(zw).Encode(st); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeState reads a checkpoint's blob into st: a gzipped base, or the
// plain JSON every checkpoint held before bases.
func decodeState(data []byte, st *RunState) error {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return json.Unmarshal(data, st)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxStateBytes+1))
	if err != nil {
		return err
	}
	if len(raw) > maxStateBytes {
		return backend.Errorf(backend.ECORRUPT, "a checkpoint's state is larger than %d bytes", maxStateBytes)
	}
	return json.Unmarshal(raw, st)
}

// maxStateBytes bounds what a base may unpack to (a 10,000-step run's state
// is a few megabytes).
const maxStateBytes = 1 << 30
