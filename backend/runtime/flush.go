package runtime

import (
	"cmp"
	"context"
	"time"

	"ducklm/backend"
)

// A step that changes something syncs its start before it runs (the
// intent: a crash from there on leaves it in doubt, never run again
// silently). Its result's commit need not sync of its own: the run's next
// synced commit, which in a chain of such steps is the next one's start a
// moment later, makes it durable too, as the store's log is one file
// written in order. So a result commits deferred (backend.DeferSync), and
// if no synced commit has covered it within Deps.SyncGrace, the store
// flushes it (backend.Flusher). The driver flushes what is left when it
// stops. Until then only a crash of the machine (not of ducklm: the
// commit is in the system's cache) can lose the result, and a lost result
// leaves the step in doubt, as a crash during the step does.

// defaultSyncGrace is how long a result waits for another commit's sync.
const defaultSyncGrace = 20 * time.Millisecond

// flusher returns the store that makes deferred results durable, or nil
// when every result syncs its own commit.
func (c *Controller) flusher() backend.Flusher {
	if c.d.SyncGrace < 0 {
		return nil
	}
	f, _ := c.d.Events.(backend.Flusher)
	return f
}

// syncSoon has the run's deferred result flushed a grace after it unless
// a synced commit covers it first (the flush then finds nothing to do).
// One timer serves a run: a newer result moves it on, as the synced start
// before that result covered the older ones.
func (c *Controller) syncSoon(runID string) {
	f := c.flusher()
	if f == nil {
		return
	}
	grace := cmp.Or(c.d.SyncGrace, defaultSyncGrace)
	m := c.memo(runID)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.resultAt = time.Now()
	if m.flush != nil {
		return
	}
	c.wg.Add(1) // Close waits for a flush under way
	var t *time.Timer
	t = time.AfterFunc(grace, func() {
		m.mu.Lock()
		if m.flush == t {
			if wait := grace - time.Since(m.resultAt); wait > 0 {
				t.Reset(wait)
				m.mu.Unlock()
				return
			}
			m.flush = nil
		}
		m.mu.Unlock()
		defer c.wg.Done()
		c.flushRun(f, runID)
	})
	m.flush = t
}

// flushNow flushes the run's deferred result at once if one waits (the
// driver stops: nothing else of the run will sync).
func (c *Controller) flushNow(runID string) {
	m := c.memo(runID)
	m.mu.Lock()
	t := m.flush
	m.flush = nil
	m.mu.Unlock()
	if t != nil && t.Stop() {
		c.wg.Done()
		c.flushRun(c.flusher(), runID)
	}
	// Otherwise its timer has fired, and flushes.
}

func (c *Controller) flushRun(f backend.Flusher, runID string) {
	if err := f.Flush(context.Background(), runID); err != nil {
		c.d.Log("sync a step's result", "run", runID, "err", err)
	}
}
