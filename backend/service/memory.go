package service

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/ollama"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
)

// memoryHub opens the memory store on first use, so commands that never
// touch memory do not load its index.
type memoryHub struct {
	dir    string
	db     *store.DB
	ledger *store.Ledger
	oc     *ollama.Client
	log    *slog.Logger
	// shared: other processes write the memories (a team's database).
	shared bool

	once    sync.Once
	started atomic.Bool // the store is opening or open
	store   *memory.Store
	err     error

	// feed holds other processes' memory decisions until followLoop hands
	// them to the store; wake says there are some.
	feedMu sync.Mutex
	feed   []backend.Event
	wake   chan struct{}

	// reindex is the cancel of the re-embedding ReindexMemories runs.
	reindexMu sync.Mutex
	reindex   context.CancelFunc
}

func (h *memoryHub) get(ctx context.Context) (*memory.Store, error) {
	h.once.Do(func() {
		// From here on the decisions of other processes are queued: the
		// load below reads every memory committed before them.
		h.started.Store(true)
		repo := store.NewMemories(h.db, h.ledger)
		active, err := repo.ActiveModel(ctx)
		if err != nil {
			h.err = err
			return
		}
		h.store, h.err = memory.Open(context.WithoutCancel(ctx), memory.Options{Repo: repo,
			Embedder: memory.EmbedderFor(active, h.oc), SnapshotDir: filepath.Join(h.dir, "memory"), Shared: h.shared,
			Log: func(msg string, args ...any) { h.log.Warn(msg, args...) }})
	})
	return h.store, h.err
}

// Decide implements runtime.MemoryWriter.
func (h *memoryHub) Decide(ctx context.Context, c memory.Candidate) (runtime.MemoryVerdict, error) {
	st, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.Decide(ctx, c)
}

// retrieve feeds the context builder: the memories nearest the task.
func (h *memoryHub) retrieve(ctx context.Context, query string) ([]string, error) {
	st, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := st.Retrieve(ctx, query, 5, memory.Filter{MinSimilarity: 0.25})
	return memory.ContextLines(rs), err
}

// offer queues the memory decisions among events committed by any process
// (this one's come again, and change nothing), for followLoop. It never
// blocks the follower that calls it. Before the store opens there is no
// index to keep: its load will read them.
func (h *memoryHub) offer(events []backend.Event) {
	if !h.started.Load() {
		return
	}
	var decided []backend.Event
	for _, e := range events {
		if memory.Records(e) {
			decided = append(decided, e)
		}
	}
	if len(decided) == 0 {
		return
	}
	h.feedMu.Lock()
	h.feed = append(h.feed, decided...)
	h.feedMu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// followLoop brings the memories other processes store into this
// process's index as their decisions arrive, until ctx ends.
func (h *memoryHub) followLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		}
		h.feedMu.Lock()
		batch := h.feed
		h.feed = nil
		h.feedMu.Unlock()
		st, err := h.get(ctx)
		if err != nil {
			continue
		}
		if err := st.Follow(ctx, batch); err != nil && ctx.Err() == nil {
			h.log.Warn("follow other processes' memories", "err", backend.ErrorMessage(err))
		}
	}
}

func (h *memoryHub) close() {
	// A re-embedding stops now rather than after its current batch.
	h.reindexMu.Lock()
	if h.reindex != nil {
		h.reindex()
	}
	h.reindexMu.Unlock()
	if h.store != nil {
		h.store.Close()
	}
}

// Memory returns the memory store, opening it on first use.
func (s *Service) Memory(ctx context.Context) (*memory.Store, error) { return s.memory.get(ctx) }
