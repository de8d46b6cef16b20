package world

import (
	"context"

	"ducklm/backend"
)

// Segment is one stretch of a run's history: the events of Stream from seq 1
// to ToSeq. A forked run's history is its ancestors' segments up to each
// fork point, then its own.
type Segment struct {
	Stream  string `json:"stream"`
	WorldID string `json:"worldId"`
	ToSeq   int64  `json:"toSeq"`
}

// maxChain bounds a fork chain walk: a longer chain can only be a cycle in a
// damaged database.
const maxChain = 100_000

// Segments returns the history of a run as segments, root first. It reads
// only run records, never events, so it costs the chain's length.
func (s *Service) Segments(ctx context.Context, runID string) ([]Segment, error) {
	run, err := s.store.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	head, err := s.events.Head(ctx, runID)
	if err != nil {
		return nil, err
	}
	segs := []Segment{{Stream: run.ID, WorldID: run.WorldID, ToSeq: head}}
	seen := map[string]bool{run.ID: true}
	for run.BaseRunID != "" {
		base, err := s.store.GetRun(ctx, run.BaseRunID)
		if err != nil {
			return nil, err
		}
		if seen[base.ID] || len(segs) > maxChain {
			return nil, backend.Errorf(backend.ECORRUPT, "the fork chain of run %s loops back to run %s; the lineage is damaged", runID, base.ID)
		}
		seen[base.ID] = true
		segs = append(segs, Segment{Stream: base.ID, WorldID: base.WorldID, ToSeq: run.BaseSeq})
		run = base
	}
	for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
		segs[i], segs[j] = segs[j], segs[i]
	}
	return segs, nil
}

// History returns a run's full history: its ancestors' events up to each
// fork point, then its own, read from the ledger by reference. Events whose
// Stream is not runID are inherited.
func (s *Service) History(ctx context.Context, runID string) ([]backend.Event, error) {
	segs, err := s.Segments(ctx, runID)
	if err != nil {
		return nil, err
	}
	var out []backend.Event
	for _, seg := range segs {
		if seg.ToSeq == 0 {
			continue
		}
		events, err := s.events.Query(ctx, backend.EventQuery{Stream: seg.Stream, FromSeq: 1, ToSeq: seg.ToSeq})
		if err != nil {
			return nil, err
		}
		out = append(out, events...)
	}
	return out, nil
}

// HistoryPage is a window onto a run's full history, by position.
type HistoryPage struct {
	Total  int64           `json:"total"`  // events in the full history
	Offset int64           `json:"offset"` // position of Events[0]
	Events []backend.Event `json:"events"`
	// Inherited is how many leading positions of the whole history belong
	// to ancestors (events before it are the shared prefix).
	Inherited int64 `json:"inherited"`
	// Segments are the history's streams, root first: position p belongs to
	// the segment whose cumulative ToSeq first exceeds it.
	Segments []Segment `json:"segments"`
}

// HistoryPage returns up to limit events of a run's full history starting
// at position offset (0 = the oldest). A negative offset -n asks for the
// page holding the n-th event from the end (-1: the last page): the one
// starting at the largest multiple of limit at or below total-n, so a reader
// that pages by limit lands on its own page boundary, and -1 with -screen
// read together cover a screenful even when the last page holds few. It reads
// only the events it returns, so paging a million-event history costs the
// same at any offset.
func (s *Service) HistoryPage(ctx context.Context, runID string, offset int64, limit int) (HistoryPage, error) {
	if limit <= 0 || limit > 5000 {
		return HistoryPage{}, backend.Errorf(backend.EINVALID, "a history page holds 1 to 5000 events, not %d", limit)
	}
	segs, err := s.Segments(ctx, runID)
	if err != nil {
		return HistoryPage{}, err
	}
	page := HistoryPage{Offset: max(offset, 0), Events: []backend.Event{}, Segments: segs}
	for i, seg := range segs {
		page.Total += seg.ToSeq
		if i < len(segs)-1 {
			page.Inherited += seg.ToSeq
		}
	}
	if offset < 0 {
		page.Offset = max(page.Total+offset, 0) / int64(limit) * int64(limit)
	}
	pos := int64(0)
	for _, seg := range segs {
		if len(page.Events) >= limit {
			break
		}
		start, end := pos, pos+seg.ToSeq // this segment holds positions [start, end)
		pos = end
		from := max(page.Offset+int64(len(page.Events)), start)
		if from >= end {
			continue
		}
		events, err := s.events.Query(ctx, backend.EventQuery{Stream: seg.Stream, FromSeq: from - start + 1, ToSeq: seg.ToSeq,
			Limit: limit - len(page.Events)})
		if err != nil {
			return HistoryPage{}, err
		}
		page.Events = append(page.Events, events...)
	}
	return page, nil
}
