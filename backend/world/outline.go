package world

import (
	"bytes"
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"ducklm/backend"
)

// OutlineWorld is a world as a drawing of the lineage needs it: a third of
// the bytes of a Node, which matters at thousands of worlds.
type OutlineWorld struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Domain    backend.Domain `json:"domain"`
	Parent    string         `json:"parent,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
	Runs      int            `json:"runs"`
	// RunID and Status are the latest run's; empty for a world without runs.
	RunID  string            `json:"runId,omitempty"`
	Status backend.RunStatus `json:"status,omitempty"`
	// Round is the round of deliberation the world serves as a branch of
	// its deliberating ancestor's search (backend.BranchRound); 0 for any
	// other world.
	Round int64 `json:"round,omitempty"`
	// Stepping is set while a batch of steps is being computed for the
	// latest run (see backend.RunSummary.Stepping).
	Stepping bool `json:"stepping,omitempty"`
}

// OutlineFork is a fork as a drawing of the lineage needs it.
type OutlineFork struct {
	ID         string                 `json:"id"`
	From       string                 `json:"from"`
	To         string                 `json:"to"`
	Divergence backend.DivergenceType `json:"divergence"`
	At         int64                  `json:"at"` // the parent's world-local time at the fork
	// Change is what the fork changed, in brief: its delta as compact JSON
	// (cut at maxChange bytes), empty when the delta is empty.
	Change string `json:"change,omitempty"`
	// Seed is the seed policy when it is not inherit.
	Seed backend.SeedPolicy `json:"seed,omitempty"`
}

// maxChange bounds OutlineFork.Change: the outline of thousands of forks
// stays small, and the whole delta is one WorldDetail away.
const maxChange = 60

// changeOf is a fork's delta in brief (see OutlineFork.Change).
func changeOf(delta json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, delta) != nil {
		return ""
	}
	s := b.String()
	if s == "{}" || s == "null" || s == "[]" {
		return ""
	}
	if len(s) > maxChange {
		cut := maxChange
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Outline is the whole fork DAG, with only what draws it.
type Outline struct {
	Worlds []OutlineWorld `json:"worlds"`
	Forks  []OutlineFork  `json:"forks"`
}

// LineageOutline returns every world and fork, as Lineage does, in the
// outline's shape.
func (s *Service) LineageOutline(ctx context.Context) (Outline, error) {
	l, err := s.Lineage(ctx)
	if err != nil {
		return Outline{}, err
	}
	o := Outline{Worlds: make([]OutlineWorld, len(l.Nodes)), Forks: make([]OutlineFork, len(l.Edges))}
	for i, n := range l.Nodes {
		w := OutlineWorld{ID: n.World.ID, Name: n.World.Name, Domain: n.World.Domain, Parent: n.World.ParentWorldID, CreatedAt: n.World.CreatedAt, Runs: n.Runs}
		w.Round = n.Round()
		if n.LatestRun != nil {
			w.RunID, w.Status = n.LatestRun.ID, n.LatestRun.Status
			w.Stepping = w.Status == backend.RunRunning && s.Stepping(w.RunID)
		}
		o.Worlds[i] = w
	}
	for i, e := range l.Edges {
		o.Forks[i] = OutlineFork{ID: e.Fork.ID, From: e.Fork.ParentWorldID, To: e.Fork.ChildWorldID, Divergence: e.Fork.Divergence, At: e.At, Change: changeOf(e.Fork.Delta)}
		if e.Fork.SeedPolicy != "" && e.Fork.SeedPolicy != backend.SeedInherit {
			o.Forks[i].Seed = e.Fork.SeedPolicy
		}
	}
	return o, nil
}

// ListWorlds returns a page of the worlds q selects, newest first: what a
// list of worlds shows, without reading the whole lineage.
func (s *Service) ListWorlds(ctx context.Context, q backend.WorldQuery) (backend.WorldPage, error) {
	p, err := s.store.ListWorlds(ctx, q)
	for i := range p.Worlds {
		if r := p.Worlds[i].LatestRun; r != nil && r.Status == backend.RunRunning {
			r.Stepping = s.Stepping(r.ID)
		}
	}
	return p, err
}
