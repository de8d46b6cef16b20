package service

import "sync"

// Hub fans values that are not stored (streamed tokens, progress of long
// work) out to the windows and browsers watching. Publish never blocks on a
// subscriber: subscribers must not block either.
type Hub[T any] struct {
	mu   sync.Mutex
	next int
	subs map[int]func(T)
}

// Subscribe calls fn for every value published until the returned cancel is
// called. fn must not block.
func (h *Hub[T]) Subscribe(fn func(T)) (cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[int]func(T){}
	}
	id := h.next
	h.next++
	h.subs[id] = fn
	return func() {
		h.mu.Lock()
		delete(h.subs, id)
		h.mu.Unlock()
	}
}

// Publish hands v to every subscriber.
func (h *Hub[T]) Publish(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, fn := range h.subs {
		fn(v)
	}
}

// TokenHub carries streamed model tokens.
type TokenHub = Hub[Token]

// ProgressHub carries the progress of long work started from a user
// interface (re-embedding memories, exporting or importing a bundle).
type ProgressHub = Hub[Progress]

// Progress is how far one piece of long work has come. Op is the id the
// caller chose when it started the work, so a screen follows its own.
type Progress struct {
	Op    string `json:"op"`
	Phase string `json:"phase"`
	Done  int64  `json:"done"`
	Total int64  `json:"total"`
	// Unit says what Done and Total count: "bytes", "entries", "memories".
	Unit string `json:"unit"`
}

// Reporter returns a function that publishes the progress of op on h, or a
// no-op when op is empty (a caller that does not follow progress).
func Reporter(h *ProgressHub, op string) func(phase string, done, total int64, unit string) {
	if op == "" || h == nil {
		return func(string, int64, int64, string) {}
	}
	return func(phase string, done, total int64, unit string) {
		h.Publish(Progress{Op: op, Phase: phase, Done: done, Total: total, Unit: unit})
	}
}

// LatestProgress keeps the latest report of each piece of work in batch, in
// the order each was last reported.
func LatestProgress(batch []Progress) []Progress {
	if len(batch) < 2 {
		return batch
	}
	last := make(map[string]int, 4)
	for i, p := range batch {
		last[p.Op] = i
	}
	out := batch[:0:0]
	for i, p := range batch {
		if last[p.Op] == i {
			out = append(out, p)
		}
	}
	return out
}
