package memory

import (
	"context"

	"ducklm/backend"
	"ducklm/backend/chromem"
)

// Follow brings into the index the memories other processes stored or
// merged, as their decisions say (memory.decided events, and decisions
// carried by a step's result): on a team's database every
// installation writes memories to the shared table, and each keeps its own
// index. Events of other types, and decisions this store applied itself,
// change nothing a second time (a memory's document is replaced by what the
// database holds). A memory embedded with another model than the one in
// service stays out of the index, stale, as at the start. It returns the
// first error reading a memory; the others are still brought in.
func (s *Store) Follow(ctx context.Context, events []backend.Event) error {
	var first error
	for _, e := range events {
		// memoryId is set exactly when a memory was stored or merged into
		// (the decision itself may be by reference to the policy's table),
		// in a memory.decided event or carried by the step's result.
		p, ok := DecidedIn(e)
		if !ok || p.MemoryID == "" {
			continue
		}
		if err := s.follow(ctx, p.MemoryID); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// follow replaces memory id's document in the index with what the database
// holds.
func (s *Store) follow(ctx context.Context, id string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	m, err := s.repo.Get(ctx, id)
	if backend.ErrorCode(err) == backend.ENOTFOUND {
		return nil // removed since
	}
	if err != nil {
		return err
	}
	if m.Model != s.view.Load().model || len(m.Vector) == 0 {
		return nil
	}
	if err := s.index.Add(ctx, m.Model, []chromem.Doc{docFor(m)}); err != nil {
		return err
	}
	s.dirty.Store(true)
	return nil
}
