package service

import (
	"context"
	"encoding/json"
	"time"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/settings"
)

// Phases of a re-embedding, as ReindexOptions.Progress hears them.
const (
	// PhaseReindexCheck: the embedding model is asked for a first vector
	// (Ollama loads it), before anything changes.
	PhaseReindexCheck = "checking the model"
	// PhaseReindexEmbed: the memories are being re-embedded.
	PhaseReindexEmbed = "re-embedding"
)

// ReindexOptions say what ReindexMemories re-embeds with.
type ReindexOptions struct {
	// Model names the embedding model: an Ollama model, or the built-in
	// memory.HashModel ("ducklm-hash-N"). "" means the embedder of the
	// settings, else the one in service, which repairs what an
	// interrupted re-embedding left behind.
	Model string
	// Progress, when set, hears how far the work has come.
	Progress func(phase string, done, total int)
}

// ReindexResult is what a re-embedding did.
type ReindexResult struct {
	Model      string        `json:"model"`
	Previous   string        `json:"previous"`
	Reembedded int           `json:"reembedded"`
	Indexed    int           `json:"indexed"`
	Took       time.Duration `json:"tookNs"`
	// SettingsSaved says the model was recorded as the settings' embedder.
	SettingsSaved bool `json:"settingsSaved"`
}

// ReindexMemories re-embeds every memory with another embedding model on
// the store this service's runs write to and read from, so the running
// app switches at once: retrieval keeps answering with the old model until
// the new index is complete, writes made meanwhile are caught up, and the
// next start opens the index of the new model. A model named explicitly
// becomes the settings' embedder, so the settings, the CLI's default and
// the store agree. CancelReindex stops it, leaving the old model in service.
func (s *Service) ReindexMemories(ctx context.Context, opts ReindexOptions) (ReindexResult, error) {
	progress := opts.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	store, err := s.Memory(ctx)
	if err != nil {
		return ReindexResult{}, err
	}
	model := opts.Model
	if model == "" {
		if prefs, err := settings.Load(s.Dir); err == nil {
			model = prefs.Models["embedder"]
		}
	}
	emb := store.Embedder()
	if model != "" {
		emb = memory.EmbedderFor(model, s.Ollama)
	}
	out := ReindexResult{Model: emb.Name(), Previous: store.Model()}

	run, cancel := context.WithCancel(ctx)
	defer cancel()
	s.memory.reindexMu.Lock()
	if s.memory.reindex != nil {
		s.memory.reindexMu.Unlock()
		return out, backend.Errorf(backend.ECONFLICT, "the memories are already being re-embedded; wait for it to finish or cancel it")
	}
	s.memory.reindex = cancel
	s.memory.reindexMu.Unlock()
	defer func() {
		s.memory.reindexMu.Lock()
		s.memory.reindex = nil
		s.memory.reindexMu.Unlock()
	}()

	start := time.Now()
	progress(PhaseReindexCheck, 0, 0)
	err = store.Reindex(run, emb, func(done, total int) {
		out.Reembedded = done
		progress(PhaseReindexEmbed, done, total)
	})
	if err != nil {
		if run.Err() != nil && ctx.Err() == nil {
			return out, &backend.Error{Code: backend.ECONFLICT, Err: err,
				Message: "the re-embedding was cancelled; the memories are still searched with " + out.Previous}
		}
		return out, err
	}
	st, err := store.Status(ctx)
	if err != nil {
		return out, err
	}
	out.Indexed, out.Took = st.Indexed, time.Since(start)
	if opts.Model != "" {
		out.SettingsSaved = s.saveEmbedder(opts.Model, emb.Name())
	}
	return out, nil
}

// saveEmbedder records model as the settings' embedder unless they name
// one with the same embedding already, and reports whether it did. It reads
// the settings afresh under the settings lock: a re-embedding can take
// minutes, and what the user saved meanwhile must stay.
func (s *Service) saveEmbedder(model, name string) bool {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	prefs, err := settings.Load(s.Dir)
	if err != nil || memory.EmbedderFor(prefs.Models["embedder"], s.Ollama).Name() == name {
		return false
	}
	if prefs.Models == nil {
		prefs.Models = map[string]string{}
	}
	prefs.Models["embedder"] = model
	return settings.Save(s.Dir, prefs) == nil
}

// CancelReindex stops the re-embedding ReindexMemories is running and
// reports whether there was one.
func (s *Service) CancelReindex() bool {
	s.memory.reindexMu.Lock()
	defer s.memory.reindexMu.Unlock()
	if s.memory.reindex == nil {
		return false
	}
	s.memory.reindex()
	return true
}

// MemorySource is one provenance of a memory with where its event sits in
// the ledger, so a screen can link to the run and to the timeline there.
type MemorySource struct {
	memory.Source
	// Stream and Seq place the source event; Seq is 0 when the event is
	// not in this ledger (an empty or unknown event id).
	Stream    string `json:"stream,omitempty"`
	Seq       int64  `json:"seq,omitempty"`
	EventType string `json:"eventType,omitempty"`
	// Step is the task step whose result the memory came from, if the
	// event names one.
	Step string `json:"step,omitempty"`
}

// MemoryDetail is one memory with every provenance merged into it.
type MemoryDetail struct {
	Memory     memory.Memory  `json:"memory"`
	Dimensions int            `json:"dimensions"`
	Sources    []MemorySource `json:"sources"`
}

// MemoryDetail returns memory id with its sources placed in the ledger.
func (s *Service) MemoryDetail(ctx context.Context, id string) (MemoryDetail, error) {
	store, err := s.Memory(ctx)
	if err != nil {
		return MemoryDetail{}, err
	}
	m, err := store.Get(ctx, id)
	if err != nil {
		return MemoryDetail{}, err
	}
	d := MemoryDetail{Memory: m, Dimensions: len(m.Vector), Sources: make([]MemorySource, 0, len(m.Sources))}
	d.Memory.Sources = nil // they are in d.Sources, placed in the ledger
	for _, src := range m.Sources {
		ms := MemorySource{Source: src}
		if src.EventID != "" {
			e, err := s.Ledger.Get(ctx, src.EventID)
			switch {
			case err == nil:
				ms.Stream, ms.Seq, ms.EventType = e.Stream, e.Seq, e.Type
				var p struct {
					Step string `json:"step"`
				}
				if json.Unmarshal(e.Payload, &p) == nil {
					ms.Step = p.Step
				}
			case backend.ErrorCode(err) != backend.ENOTFOUND && backend.ErrorCode(err) != backend.EINVALID:
				return d, err
			}
		}
		d.Sources = append(d.Sources, ms)
	}
	return d, nil
}
