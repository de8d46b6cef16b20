package world

import (
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"

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

// searchBudget bounds how many positions one search call reads, so a sparse
// search over a million events answers in steps the caller can show (and
// stop) instead of one long wait.
const searchBudget = 250_000

// searchChunk is how many positions one ledger read covers when the text is
// matched here rather than in the database.
const searchChunk = 4096

// SearchHistory returns up to limit events of a run's full history that
// pass f, from position from on, in history order. It reads the ledger by
// (stream, seq) ranges and stops after searchBudget positions: a caller
// goes on from Next until it has what it needs or Next reaches Total.
func (s *Service) SearchHistory(ctx context.Context, runID string, f HistoryFilter, from int64, limit int) (HistoryMatches, error) {
	if limit <= 0 || limit > 5000 {
		return HistoryMatches{}, backend.Errorf(backend.EINVALID, "a search returns 1 to 5000 events, not %d", limit)
	}
	if f.Reality != "" && !f.Reality.Valid() {
		return HistoryMatches{}, backend.Errorf(backend.EINVALID, "reality %q must be external_real or world_local", f.Reality)
	}
	match, err := textMatcher(f.Text, f.Regex)
	if err != nil {
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
	stop := min(m.Total, m.From+searchBudget)
	chunk := int64(searchBudget)
	if match != nil {
		chunk = searchChunk
	}
	start := int64(0)
	for _, seg := range segs {
		end := start + seg.ToSeq // this segment holds positions [start, end)
		for cur := max(m.Next, start); cur < min(end, stop); {
			to := min(cur+chunk, end, stop)
			q := backend.EventQuery{Stream: seg.Stream, FromSeq: cur - start + 1, ToSeq: to - start, Types: f.Types, Reality: f.Reality}
			if match == nil {
				q.Limit = limit - len(m.Matches)
			}
			events, err := s.events.Query(ctx, q)
			if err != nil {
				return HistoryMatches{}, err
			}
			for _, e := range events {
				if match != nil && !match(e) {
					continue
				}
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
	m.Next = max(m.Next, stop)
	return m, nil
}

// textMatcher compiles a search text; nil matches every event.
func textMatcher(text string, regex bool) (func(backend.Event) bool, error) {
	if text == "" {
		return nil, nil
	}
	line := func(e backend.Event) string {
		return e.Type + " " + e.Stream + " #" + strconv.FormatInt(e.Seq, 10) + " " + string(e.Payload)
	}
	if !regex {
		needle := strings.ToLower(text)
		return func(e backend.Event) bool { return strings.Contains(strings.ToLower(line(e)), needle) }, nil
	}
	re, err := regexp.Compile("(?i)" + text)
	if err != nil {
		why := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		return nil, backend.Errorf(backend.EINVALID, "the search is not a valid regular expression (%s)", why)
	}
	return func(e backend.Event) bool { return re.MatchString(line(e)) }, nil
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
