package world

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"ducklm/backend"
)

// Change is one difference between two JSON documents.
type Change struct {
	Path string          `json:"path"` // JSON Pointer (RFC 6901)
	Kind string          `json:"kind"` // added | removed | changed
	A    json.RawMessage `json:"a,omitempty"`
	B    json.RawMessage `json:"b,omitempty"`
}

// BranchDiff compares two runs after their shared history.
type BranchDiff struct {
	A             string          `json:"a"`
	B             string          `json:"b"`
	CommonWorldID string          `json:"commonWorldId,omitempty"`
	SharedEvents  int64           `json:"sharedEvents"`
	ForkPoint     *Segment        `json:"forkPoint,omitempty"` // the last shared segment
	StateA        json.RawMessage `json:"stateA"`
	StateB        json.RawMessage `json:"stateB"`
	StateChanges  []Change        `json:"stateChanges"`
	EventsA       []backend.Event `json:"eventsA"` // after the shared prefix
	EventsB       []backend.Event `json:"eventsB"`
	EventsATotal  int             `json:"eventsATotal"`
	EventsBTotal  int             `json:"eventsBTotal"`
}

// maxDiffEvents bounds the events returned per side (totals are exact).
const maxDiffEvents = 2000

// Diff returns the state diff and the event diff of two runs after their
// common history.
func (s *Service) Diff(ctx context.Context, runA, runB string) (BranchDiff, error) {
	out := BranchDiff{A: runA, B: runB}
	segA, err := s.Segments(ctx, runA)
	if err != nil {
		return out, err
	}
	segB, err := s.Segments(ctx, runB)
	if err != nil {
		return out, err
	}
	// The shared prefix: segments of the same stream from the root, each up
	// to where both histories still agree.
	shared := map[string]int64{}
	for i := 0; i < len(segA) && i < len(segB) && segA[i].Stream == segB[i].Stream; i++ {
		to := min(segA[i].ToSeq, segB[i].ToSeq)
		shared[segA[i].Stream] = to
		out.SharedEvents += to
		seg := segA[i]
		seg.ToSeq = to
		out.ForkPoint = &seg
		out.CommonWorldID = seg.WorldID
		if segA[i].ToSeq != segB[i].ToSeq {
			break
		}
	}
	if out.EventsA, out.EventsATotal, err = s.eventsAfter(ctx, segA, shared); err != nil {
		return out, err
	}
	if out.EventsB, out.EventsBTotal, err = s.eventsAfter(ctx, segB, shared); err != nil {
		return out, err
	}
	if out.StateA, err = s.State(ctx, runA); err != nil {
		return out, err
	}
	if out.StateB, err = s.State(ctx, runB); err != nil {
		return out, err
	}
	if out.StateChanges, err = JSONDiff(out.StateA, out.StateB); err != nil {
		return out, err
	}
	return out, nil
}

func (s *Service) eventsAfter(ctx context.Context, segs []Segment, shared map[string]int64) ([]backend.Event, int, error) {
	var out []backend.Event
	total := 0
	for _, seg := range segs {
		from := shared[seg.Stream] + 1
		if from > seg.ToSeq {
			continue
		}
		total += int(seg.ToSeq - from + 1)
		if len(out) >= maxDiffEvents {
			continue
		}
		events, err := s.events.Query(ctx, backend.EventQuery{Stream: seg.Stream, FromSeq: from, ToSeq: seg.ToSeq, Limit: maxDiffEvents - len(out)})
		if err != nil {
			return nil, 0, err
		}
		out = append(out, events...)
	}
	return out, total, nil
}

// JSONDiff lists the differences between two JSON documents, by path, in a
// stable order.
func JSONDiff(a, b json.RawMessage) ([]Change, error) {
	va, err := decodeExact(a)
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "the first document is not valid JSON")
	}
	vb, err := decodeExact(b)
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "the second document is not valid JSON")
	}
	changes := []Change{}
	diffValue("", va, vb, &changes)
	return changes, nil
}

func diffValue(path string, a, b any, out *[]Change) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(av)+len(bv))
			for k := range av {
				keys = append(keys, k)
			}
			for k := range bv {
				if _, ok := av[k]; !ok {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := path + "/" + escapePointer(k)
				x, inA := av[k]
				y, inB := bv[k]
				switch {
				case !inB:
					*out = append(*out, Change{Path: p, Kind: "removed", A: raw(x)})
				case !inA:
					*out = append(*out, Change{Path: p, Kind: "added", B: raw(y)})
				default:
					diffValue(p, x, y, out)
				}
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := 0; i < max(len(av), len(bv)); i++ {
				p := path + "/" + strconv.Itoa(i)
				switch {
				case i >= len(bv):
					*out = append(*out, Change{Path: p, Kind: "removed", A: raw(av[i])})
				case i >= len(av):
					*out = append(*out, Change{Path: p, Kind: "added", B: raw(bv[i])})
				default:
					diffValue(p, av[i], bv[i], out)
				}
			}
			return
		}
	}
	ra, rb := raw(a), raw(b)
	if !bytes.Equal(ra, rb) {
		if path == "" {
			path = "/"
		}
		*out = append(*out, Change{Path: path, Kind: "changed", A: ra, B: rb})
	}
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
