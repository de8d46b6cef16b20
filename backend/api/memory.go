package api

import (
	"context"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/memorypolicy"
	"ducklm/backend/router"
	"ducklm/backend/service"
	"ducklm/backend/settings"
)

// MemoryStatus is the memory screen's header: how many memories there are,
// the embedding model in service and the state of its index.
type MemoryStatus struct {
	memory.Status
	// Memories counts every memory, whichever model embedded it.
	Memories int64 `json:"memories"`
	// Builtin says the model in service is ducklm's built-in embedder.
	Builtin bool `json:"builtin"`
	// Preferred is the settings' embedder ("" when none is set).
	Preferred string `json:"preferred,omitempty"`
}

// MemoryStatus returns the memory store's status.
func (a *API) MemoryStatus() (MemoryStatus, error) {
	if err := a.ready(); err != nil {
		return MemoryStatus{}, err
	}
	ctx := a.ctx()
	store, err := a.svc.Memory(ctx)
	if err != nil {
		return MemoryStatus{}, a.fail("memory status", err)
	}
	st, err := store.Status(ctx)
	if err != nil {
		return MemoryStatus{}, a.fail("memory status", err)
	}
	_, builtin := store.Embedder().(memory.HashEmbedder)
	prefs, _ := settings.Load(a.svc.Dir)
	return MemoryStatus{Status: st, Memories: int64(st.Indexed) + st.Stale, Builtin: builtin, Preferred: prefs.Models["embedder"]}, nil
}

// memoryFilter reads the filter fields of a search or a listing; "" does
// not filter.
func memoryFilter(typ, reality, runID string) memory.Filter {
	return memory.Filter{Type: memorypolicy.Type(strings.TrimSpace(typ)), Reality: backend.Reality(strings.TrimSpace(reality)),
		RunID: strings.TrimSpace(runID)}
}

// MemorySearch is a semantic search.
type MemorySearch struct {
	Query string `json:"query"`
	// Type is fact, observation, procedure, hypothesis or preference.
	Type string `json:"type"`
	// Reality is external_real (facts of this machine) or world_local
	// (hypotheses from simulated worlds).
	Reality string `json:"reality"`
	// RunID keeps the memories that first came from this run.
	RunID string `json:"runId"`
	// K is how many results at most (1 to 100; 0 means 20).
	K int `json:"k"`
}

// SearchMemories returns the memories nearest the query, most similar
// first, each with its similarity and provenance.
func (a *API) SearchMemories(in MemorySearch) ([]memory.Retrieved, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	ctx := a.ctx()
	store, err := a.svc.Memory(ctx)
	if err != nil {
		return nil, a.fail("search memories", err)
	}
	if in.K == 0 {
		in.K = 20
	}
	found, err := store.Retrieve(ctx, in.Query, in.K, memoryFilter(in.Type, in.Reality, in.RunID))
	if found == nil {
		found = []memory.Retrieved{}
	}
	return found, a.fail("search memories", err)
}

// MemoryListInput asks for one page of the newest memories.
type MemoryListInput struct {
	// Type, Reality and RunID filter as MemorySearch's do.
	Type    string `json:"type"`
	Reality string `json:"reality"`
	RunID   string `json:"runId"`
	// Limit is the page size (0 means 50).
	Limit int `json:"limit"`
	// Before is the previous page's next cursor; "" is the first page.
	Before string `json:"before"`
}

// ListMemories returns a page of memories, newest first, and the cursor of
// the next page.
func (a *API) ListMemories(in MemoryListInput) (memory.Page, error) {
	if err := a.ready(); err != nil {
		return memory.Page{Memories: []memory.Memory{}}, err
	}
	ctx := a.ctx()
	before, err := memory.ParseCursor(strings.TrimSpace(in.Before))
	if err != nil {
		return memory.Page{Memories: []memory.Memory{}}, a.fail("list memories", err)
	}
	store, err := a.svc.Memory(ctx)
	if err != nil {
		return memory.Page{Memories: []memory.Memory{}}, a.fail("list memories", err)
	}
	p, err := store.Page(ctx, memory.ListQuery{Filter: memoryFilter(in.Type, in.Reality, in.RunID), Limit: in.Limit, Before: before})
	if p.Memories == nil {
		p.Memories = []memory.Memory{}
	}
	return p, a.fail("list memories", err)
}

// MemoryDetail returns one memory with every provenance merged into it,
// each placed in the ledger (run, event, seq) so the screen can link to it.
func (a *API) MemoryDetail(id string) (service.MemoryDetail, error) {
	if err := a.ready(); err != nil {
		return service.MemoryDetail{}, err
	}
	d, err := a.svc.MemoryDetail(a.ctx(), strings.TrimSpace(id))
	return d, a.fail("memory detail", err)
}

// DeleteMemory removes a memory from the database and the index.
func (a *API) DeleteMemory(id string) error {
	if err := a.ready(); err != nil {
		return err
	}
	ctx := a.ctx()
	store, err := a.svc.Memory(ctx)
	if err != nil {
		return a.fail("delete memory", err)
	}
	return a.fail("delete memory", store.Remove(ctx, strings.TrimSpace(id)))
}

// EmbedderChoices are the embedding models a re-embedding can use.
type EmbedderChoices struct {
	// Current is the model in service; Builtin is ducklm's own embedder.
	Current string `json:"current"`
	Builtin string `json:"builtin"`
	// Preferred is the settings' embedder ("" when none is set).
	Preferred string `json:"preferred,omitempty"`
	// Ollama is what Ollama lists; Embedding are those of its models whose
	// names say they embed (any model may be tried: one that cannot embed
	// is refused before anything changes).
	Ollama    ModelInfo `json:"ollama"`
	Embedding []string  `json:"embedding"`
}

// MemoryEmbedders lists the embedding models to choose from.
func (a *API) MemoryEmbedders() (EmbedderChoices, error) {
	if err := a.ready(); err != nil {
		return EmbedderChoices{}, err
	}
	store, err := a.svc.Memory(a.ctx())
	if err != nil {
		return EmbedderChoices{}, a.fail("embedders", err)
	}
	prefs, _ := settings.Load(a.svc.Dir)
	ctx, cancel := context.WithTimeout(a.ctx(), 3*time.Second)
	defer cancel()
	out := EmbedderChoices{Current: store.Model(), Builtin: memory.HashModel, Preferred: prefs.Models["embedder"],
		Ollama: modelInfo(ctx, a.svc.Ollama, a.svc.Sandboxed()), Embedding: []string{}}
	for _, m := range out.Ollama.Models {
		if router.IsEmbeddingModel(m) {
			out.Embedding = append(out.Embedding, m)
		}
	}
	return out, nil
}

// ReindexInput starts a re-embedding.
type ReindexInput struct {
	// Model is an Ollama model or the built-in memory.HashModel; "" means
	// the settings' embedder, else the one in service (a repair).
	Model string `json:"model"`
	// Op is the id the screen follows the progress by (service.Progress).
	Op string `json:"op"`
}

// ReindexMemories re-embeds every memory with the model chosen, reporting
// progress as op, and returns when the new model serves.
func (a *API) ReindexMemories(in ReindexInput) (service.ReindexResult, error) {
	if err := a.ready(); err != nil {
		return service.ReindexResult{}, err
	}
	report := service.Reporter(a.svc.Progress, in.Op)
	res, err := a.svc.ReindexMemories(a.ctx(), service.ReindexOptions{Model: strings.TrimSpace(in.Model),
		Progress: func(phase string, done, total int) { report(phase, int64(done), int64(total), "memories") }})
	if err == nil {
		a.log.Info("memories re-embedded", "model", res.Model, "previous", res.Previous, "count", res.Reembedded, "took", res.Took)
	}
	return res, a.fail("reindex memories", err)
}

// CancelReindex stops a running re-embedding and reports whether one ran.
func (a *API) CancelReindex() (bool, error) {
	if err := a.ready(); err != nil {
		return false, err
	}
	return a.svc.CancelReindex(), nil
}
