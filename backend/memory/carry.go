package memory

import (
	"bytes"
	"context"
	"encoding/json"

	"ducklm/backend"
)

// A decision carried by its cause. The runtime records a step's result, its
// critique, its checkpoint and, when the write policy's verdict is ready in
// time, the memory decision in one event and one commit (issue 28): the
// decision is the "memory" field of the result's event instead of a
// memory.decided event of its own (a payload shaped alike, whose cause and
// source are the event itself), and its rows are written in the same
// transaction. A verdict that is not ready in time is applied after, as a
// memory.decided event (Pending.Apply).

// FieldCarried is the field of an event's payload that carries a memory
// decision.
const FieldCarried = "memory"

// Carried is a verdict prepared to be recorded in the event of its cause.
// The caller appends Before, then its event with Payload in its "memory"
// field, with Write in the same transaction, and then calls Finish.
type Carried struct {
	// Payload is the decision for the cause's "memory" field.
	Payload json.RawMessage
	// Before are the events to append before the cause's in the same
	// transaction: the policy's table, the first time this store decides
	// on the run.
	Before []backend.Event
	// Write is the decision's rows (nil when the policy skips: nothing is
	// written).
	Write backend.Prepared

	p       *Pending
	d       Decided
	stored  *Memory // a new memory, for the index
	merged  Memory  // the memory merged into, as the write left it
	isMerge bool
	policy  bool // Before records the table on the run
}

// Carry prepares applied, which must be this verdict's Decision, to be
// recorded in the event of its cause (the candidate's EventID, which the
// caller appends). It returns nil when the verdict cannot be carried (its
// evaluation failed: Apply records the skip). The store's writes wait until
// Finish.
func (p *Pending) Carry(ctx context.Context, applied backend.Decision) (*Carried, error) {
	s, c, ev := p.s, p.c, p.ev
	if want := p.Decision(); applied.Type != want.Type || !bytes.Equal(applied.Payload, want.Payload) {
		p.release()
		return nil, backend.Errorf(backend.EINVALID, "the memory decision applied (%s) is not the write policy's (%s)", applied.Type, want.Type)
	}
	if p.err != nil || backend.CheckID(c.EventID, backend.KindEvent) != nil {
		return nil, nil
	}
	reality, err := s.streamReality(context.WithoutCancel(ctx), c.RunID)
	if err != nil || reality == "" {
		return nil, nil // Apply records why, or writes the stream's first event
	}
	out := &Carried{p: p, d: Decided{Evaluation: ev}}
	w := p.plan(reality, c.EventID)
	switch {
	case w.stored != nil:
		out.d.MemoryID, out.stored, out.Write = w.stored.ID, w.stored, s.repo.PrepareInsert(*w.stored)
	case w.mergeInto != "":
		out.d.MemoryID, out.isMerge = w.mergeInto, true
		out.Write = s.repo.PrepareMerge(w.mergeInto, w.src, ev.Decision.Worth, w.now, &out.merged)
	}
	out.Payload, _ = json.Marshal(w.payload)
	if _, had := s.policyOn.LoadOrStore(c.RunID, true); !had {
		out.policy = true
		out.Before = []backend.Event{{ID: backend.NewID(backend.KindEvent), Type: EvPolicy, Payload: s.policyPayload, Reality: reality,
			WorldLocalTime: max(c.Tick, 0)}}
	}
	return out, nil
}

// Finish ends a carried decision once its cause's append is over:
// committed, the memory it stored or merged into is brought into the index;
// either way the store's next decision may go. It returns what was done.
func (c *Carried) Finish(ctx context.Context, committed bool) Decided {
	p := c.p
	defer p.release()
	s := p.s
	if !committed {
		if c.policy {
			s.policyOn.Delete(p.c.RunID)
		}
		return Decided{Evaluation: c.d.Evaluation, Skipped: "the step's result was not recorded"}
	}
	c.d.EventID = p.c.EventID
	wctx := context.WithoutCancel(ctx)
	switch {
	case c.stored != nil:
		s.indexStored(wctx, *c.stored)
	case c.isMerge:
		s.indexMerged(wctx, c.merged)
	}
	return c.d
}

// carriedIn returns the memory decision e's payload carries in its "memory"
// field, if it carries one (any event but a memory.decided, which is one).
func carriedIn(e backend.Event) (DecidedPayload, bool) {
	if e.Type == EvDecided || e.Type == EvPolicy || !bytes.Contains(e.Payload, []byte(`"`+FieldCarried+`":{`)) {
		return DecidedPayload{}, false
	}
	var p struct {
		Memory *DecidedPayload `json:"memory"`
	}
	if json.Unmarshal(e.Payload, &p) != nil || p.Memory == nil {
		return DecidedPayload{}, false
	}
	return *p.Memory, true
}

// Records reports whether e records a memory decision: a memory.decided
// event, or an event that carries one.
func Records(e backend.Event) bool {
	if e.Type == EvDecided {
		return true
	}
	_, ok := carriedIn(e)
	return ok
}

// DecidedIn returns the decision e records (a memory.decided event's
// payload, or the one e carries) as recorded, without its table, and
// whether e records one. A carried decision's cause is e itself.
func DecidedIn(e backend.Event) (DecidedPayload, bool) {
	if e.Type == EvDecided {
		var p DecidedPayload
		return p, json.Unmarshal(e.Payload, &p) == nil
	}
	return carriedIn(e)
}
