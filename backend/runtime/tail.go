package runtime

import (
	"sync"

	"ducklm/backend"
)

// A run's stream has writers other than the loop in this process: the
// memory store records its decisions on it. Their events change nothing the
// fold keeps but the seq, yet they broke the loop's memo of the run (its
// head, its last appended events), so the driver read the ledger again
// after every memory decision, and a worker's append computed the run's
// clock from its own older view. When the ledger can report its commits,
// each run's memo also keeps its tail: the run's last events from every
// writer, in commit order.

// commitObserver is a ledger that reports every committed batch, in
// commit order, before its appender returns (store.Ledger.OnCommit).
type commitObserver interface {
	OnCommit(fn func([]backend.Event))
}

// runTail is a run's last committed events, from every writer.
type runTail struct {
	mu     sync.Mutex
	events []backend.Event // contiguous seqs
}

// add appends a committed batch of the run's events; a batch that does not
// follow the last one starts the tail again.
func (t *runTail) add(batch []backend.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.events); n > 0 && t.events[n-1].Seq+1 != batch[0].Seq {
		t.events = nil
	}
	if len(t.events)+len(batch) > recentEvents {
		keep := max(recentEvents-len(batch), 0)
		t.events = append(t.events[:0:0], t.events[len(t.events)-keep:]...)
	}
	t.events = append(t.events, batch...)
}

// after returns the run's events after seq as far as the tail knows them
// (none when seq is its last), and whether the tail reaches back to seq:
// when it does, they are every event of the run after seq this process's
// ledger committed.
func (t *runTail) after(seq int64) ([]backend.Event, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.events)
	if n == 0 || t.events[0].Seq > seq+1 || t.events[n-1].Seq < seq {
		return nil, false
	}
	return t.events[seq+1-t.events[0].Seq:], true
}

// committed feeds each committed batch to the tail of its run's memo (a run
// this controller has no memo of is not followed).
func (c *Controller) committed(batch []backend.Event) {
	for len(batch) > 0 {
		n := 1
		for n < len(batch) && batch[n].Stream == batch[0].Stream {
			n++
		}
		c.memoMu.Lock()
		m := c.memos[batch[0].Stream]
		c.memoMu.Unlock()
		if m != nil {
			m.tail.add(batch[:n])
		}
		batch = batch[n:]
	}
}
