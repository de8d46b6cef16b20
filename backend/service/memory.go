package service

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"

	"ducklm/backend/memory"
	"ducklm/backend/ollama"
	"ducklm/backend/sqlite"
)

// memoryHub opens the memory store on first use, so commands that never
// touch memory do not load its index.
type memoryHub struct {
	dir    string
	db     *sqlite.DB
	ledger *sqlite.Ledger
	oc     *ollama.Client
	log    *slog.Logger

	once  sync.Once
	store *memory.Store
	err   error

	// reindex is the cancel of the re-embedding ReindexMemories runs.
	reindexMu sync.Mutex
	reindex   context.CancelFunc
}

func (h *memoryHub) get(ctx context.Context) (*memory.Store, error) {
	h.once.Do(func() {
		repo := sqlite.NewMemories(h.db, h.ledger)
		active, err := repo.ActiveModel(ctx)
		if err != nil {
			h.err = err
			return
		}
		h.store, h.err = memory.Open(context.WithoutCancel(ctx), memory.Options{Repo: repo,
			Embedder: memory.EmbedderFor(active, h.oc), SnapshotDir: filepath.Join(h.dir, "memory"),
			Log: func(msg string, args ...any) { h.log.Warn(msg, args...) }})
	})
	return h.store, h.err
}

// Consider implements runtime.MemoryWriter.
func (h *memoryHub) Consider(ctx context.Context, c memory.Candidate) (memory.Decided, error) {
	st, err := h.get(ctx)
	if err != nil {
		return memory.Decided{}, err
	}
	return st.Consider(ctx, c)
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
