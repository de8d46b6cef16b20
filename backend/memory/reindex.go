package memory

import (
	"context"

	"ducklm/backend"
	"ducklm/backend/chromem"
)

// reindexBatch is how many memories one embedding call and one database
// transaction of a reindex carry.
const reindexBatch = 64

// Reindex re-embeds every memory not yet embedded with emb, reporting
// progress, and then serves retrieval and writes with emb. Reads never
// wait: the old index answers until the new one is complete, and the switch
// happens under the write lock after a final catch-up of memories written
// meanwhile. With the embedder already in service it repairs the memories
// an interrupted reindex left with another model. Close stops it.
func (s *Store) Reindex(ctx context.Context, emb Embedder, progress func(done, total int)) (err error) {
	if !s.reindexMu.TryLock() {
		return backend.Errorf(backend.ECONFLICT, "the memories are already being re-embedded")
	}
	defer s.reindexMu.Unlock()
	if progress == nil {
		progress = func(int, int) {}
	}
	model := emb.Name()
	p := &Progress{Model: model, Running: true}
	s.progress.Store(p)
	defer func() {
		done := *s.progress.Load()
		done.Running = false
		if err != nil {
			done.Error = backend.ErrorMessage(err)
		}
		s.progress.Store(&done)
	}()
	// Fail fast (a missing model, Ollama down) before touching anything.
	if _, err := emb.Embed(ctx, []string{"ducklm"}); err != nil {
		return err
	}
	cur := s.view.Load()
	building := model != cur.model
	if building {
		// A fresh collection, seeded with what an interrupted reindex
		// already embedded with model.
		s.index.Drop(model)
		var docs []chromem.Doc
		if _, _, err := s.repo.Load(ctx, model, func(m Memory) error {
			docs = append(docs, docFor(m))
			return nil
		}); err != nil {
			return err
		}
		if err := s.index.Add(ctx, model, docs); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				s.index.Drop(model)
			}
		}()
	}
	report := func(done, total int) {
		next := &Progress{Model: model, Done: done, Total: total, Running: true}
		s.progress.Store(next)
		progress(done, total)
	}

	done, total, after := 0, 0, ""
	for {
		select {
		case <-s.stop:
			return backend.Errorf(backend.EUNAVAILABLE, "the reindex was stopped because the memory store closed")
		default:
		}
		batch, remaining, err := s.repo.Stale(ctx, model, after, reindexBatch)
		if err != nil {
			return err
		}
		if after == "" {
			total = int(remaining)
			report(0, total)
		}
		if len(batch) == 0 {
			break
		}
		if err := s.reembed(ctx, emb, model, batch, true); err != nil {
			return err
		}
		done += len(batch)
		after = batch[len(batch)-1].ID
		report(done, max(total, done))
	}

	// The switch: whatever was written with the old model meanwhile is
	// re-embedded under the write lock, then the new model serves.
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	for {
		batch, _, err := s.repo.Stale(ctx, model, "", reindexBatch)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		if err := s.reembed(ctx, emb, model, batch, false); err != nil {
			return err
		}
		done += len(batch)
	}
	if err := s.repo.SetActiveModel(context.WithoutCancel(ctx), model); err != nil {
		return err
	}
	s.view.Store(&view{emb: emb, model: model})
	if building {
		s.index.Drop(cur.model)
		s.removeSnapshot(cur.model)
	}
	s.dirty.Store(true)
	report(done, done)
	return nil
}

// Repair re-embeds, with the embedder in service, the memories an
// interrupted reindex left under another model.
func (s *Store) Repair(ctx context.Context) error {
	return s.Reindex(ctx, s.Embedder(), nil)
}

// reembed embeds batch with emb and stores and indexes the vectors; lock
// says whether to take writeMu for the store-and-index step (so a delete
// or merge cannot fall between them).
func (s *Store) reembed(ctx context.Context, emb Embedder, model string, batch []Memory, lock bool) error {
	texts := make([]string, len(batch))
	for i, m := range batch {
		texts[i] = m.Text
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	if len(vecs) != len(batch) {
		return backend.Errorf(backend.EINTERNAL, "%s returned %d vectors for %d texts", model, len(vecs), len(texts))
	}
	embs := make([]Embedding, len(batch))
	for i, m := range batch {
		embs[i] = Embedding{ID: m.ID, Vector: vecs[i]}
	}
	if lock {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	updated, err := s.repo.SetEmbeddings(ctx, model, embs, s.now().UTC())
	if err != nil {
		return err
	}
	s.dirty.Store(true)
	docs := make([]chromem.Doc, len(updated))
	for i, m := range updated {
		docs[i] = docFor(m)
	}
	return s.index.Add(ctx, model, docs)
}
