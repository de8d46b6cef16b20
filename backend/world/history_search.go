package world

import (
	"context"
	"sort"
	"time"

	"ducklm/backend"
)

// HistoryFilter selects events of a run's full history. Zero values select
// every event.
type HistoryFilter struct {
	Types   []string        `json:"types"`
	Reality backend.Reality `json:"reality"`
	// Text is looked for in "TYPE STREAM #SEQ PAYLOAD", case-insensitively:
	// as plain text, or as a regular expression (RE2 syntax) when Regex.
	Text  string `json:"text"`
	Regex bool   `json:"regex"`
}

// HistoryMatch is an event of a history with its position in it.
type HistoryMatch struct {
	Index int64         `json:"index"` // 0 = the oldest event of the whole history
	Event backend.Event `json:"event"`
}

// HistoryMatches is one stretch of a search through a run's history.
type HistoryMatches struct {
	Total     int64          `json:"total"`
	Inherited int64          `json:"inherited"`
	Matches   []HistoryMatch `json:"matches"`
	// From is where this search started; Next is where the following one
	// goes on. Positions in [From, Next) have all been searched, so Next
	// equal to Total means the search reached the end.
	From int64 `json:"from"`
	Next int64 `json:"next"`
}

// searchSlicing is how SearchHistory slices its work: each call reads
// chunks of positions (the ledger matches, so a read costs its matches, not
// its positions) and answers once it has read at least least positions and
// spent slice, with what it has. So a search over a million events streams
// its matches and its progress to the window several times a second, and a
// caller can stop between calls, while a history of a few thousand events
// is always searched in one call, however busy the machine.
type searchSlicing struct {
	slice time.Duration
	least int64
	chunk int64
}

var defaultSearchSlicing = searchSlicing{slice: 150 * time.Millisecond, least: 65_536, chunk: 50_000}

// SearchHistory returns up to limit events of a run's full history that
// pass f, from position from on, in history order. It reads the ledger by
// (stream, seq) ranges and answers after a slice of its work (or limit
// matches, or the end): a caller goes on from Next until it has what it
// needs or Next reaches Total.
func (s *Service) SearchHistory(ctx context.Context, runID string, f HistoryFilter, from int64, limit int) (HistoryMatches, error) {
	started := time.Now()
	if limit <= 0 || limit > 5000 {
		return HistoryMatches{}, backend.Errorf(backend.EINVALID, "a search returns 1 to 5000 events, not %d", limit)
	}
	if f.Reality != "" && !f.Reality.Valid() {
		return HistoryMatches{}, backend.Errorf(backend.EINVALID, "reality %q must be external_real or world_local", f.Reality)
	}
	text := backend.EventText{Text: f.Text, Regex: f.Regex}
	if _, err := text.Matcher(); err != nil {
		return HistoryMatches{}, err
	}
	segs, err := s.Segments(ctx, runID)
	if err != nil {
		return HistoryMatches{}, err
	}
	m := HistoryMatches{Matches: []HistoryMatch{}}
	for i, seg := range segs {
		m.Total += seg.ToSeq
		if i < len(segs)-1 {
			m.Inherited += seg.ToSeq
		}
	}
	m.From = min(max(from, 0), m.Total)
	m.Next = m.From
	start := int64(0)
	for _, seg := range segs {
		end := start + seg.ToSeq // this segment holds positions [start, end)
		for cur := max(m.Next, start); cur < end; {
			if cur-m.From >= max(s.search.least, 1) && time.Since(started) >= s.search.slice {
				return m, nil
			}
			// Reads start small and double, so the first matches of a
			// call come back soon and a call still covers much ground.
			to := min(cur+min(s.search.chunk, max(4096, cur-m.From)), end)
			q := backend.EventQuery{Stream: seg.Stream, FromSeq: cur - start + 1, ToSeq: to - start, Types: f.Types, Reality: f.Reality, Limit: limit - len(m.Matches)}
			events, err := s.events.Search(ctx, q, text)
			if err != nil {
				return HistoryMatches{}, err
			}
			for _, e := range events {
				at := start + e.Seq - 1
				m.Matches = append(m.Matches, HistoryMatch{Index: at, Event: e})
				if len(m.Matches) == limit {
					m.Next = at + 1
					return m, nil
				}
			}
			cur, m.Next = to, to
		}
		start = end
	}
	m.Next = m.Total
	return m, nil
}

// TypeCount is how many events of one type a history holds.
type TypeCount struct {
	Type  string `json:"type"`
	Count int64  `json:"count"`
}

// HistoryTypes counts a run's full history by event type, most frequent
// first (ties by name).
func (s *Service) HistoryTypes(ctx context.Context, runID string) ([]TypeCount, error) {
	segs, err := s.Segments(ctx, runID)
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, seg := range segs {
		if seg.ToSeq == 0 {
			continue
		}
		c, err := s.events.TypeCounts(ctx, seg.Stream, seg.ToSeq)
		if err != nil {
			return nil, err
		}
		for t, n := range c {
			counts[t] += n
		}
	}
	out := make([]TypeCount, 0, len(counts))
	for t, n := range counts {
		out = append(out, TypeCount{Type: t, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Type < out[j].Type
	})
	return out, nil
}
