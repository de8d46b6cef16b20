package runtime

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"ducklm/backend"
	"ducklm/backend/planner"
)

// finished returns the ids of the finished steps, in plan order: what a
// revised plan keeps.
func (s *RunState) finished() []string {
	var out []string
	for _, id := range s.Order() {
		if st := s.Steps[id]; st != nil && st.State == StepDone {
			out = append(out, id)
		}
	}
	return out
}

// revisionRound is the open revision round, 0 when the run plans afresh.
func (s *RunState) revisionRound() int {
	if s.Revision == nil {
		return 0
	}
	return s.Revision.Round
}

// reviewRound is the open review round, 0 when none is open.
func (s *RunState) reviewRound() int {
	if s.Review == nil {
		return 0
	}
	return s.Review.Round
}

// lastAnswer is the planning model's previous answer, for a replan.
func (s *RunState) lastAnswer() string {
	if n := len(s.Planning); n > 0 {
		return s.Planning[n-1].Answer
	}
	return ""
}

// maxResult bounds a step's output as the planner is told of it.
const maxResult = 600

// revisionRequest is what the planner is told in an open revision round:
// the steps that finished and stay, and the steps that failed.
func (s *RunState) revisionRequest() *planner.Revision {
	if s.Revision == nil {
		return nil
	}
	outcome := func(id string) planner.StepOutcome {
		st := s.Steps[id]
		if st == nil {
			return planner.StepOutcome{ID: id}
		}
		o := planner.StepOutcome{ID: id, Kind: st.Node.Kind, Tool: st.Node.Tool, Title: st.Node.Title, Args: st.Args()}
		switch {
		case st.State == StepFailed:
			o.Result = st.Error
			if r := st.Result; r != nil && strings.TrimSpace(r.StderrTail) != "" {
				o.Result += ": " + tail(r.StderrTail, maxResult)
			}
		case st.Result != nil:
			o.Result = tail(st.Result.StdoutTail, maxResult)
		}
		return o
	}
	r := &planner.Revision{}
	for _, id := range s.Revision.Kept {
		r.Done = append(r.Done, outcome(id))
	}
	for _, id := range s.Revision.Failed {
		r.Failed = append(r.Failed, outcome(id))
	}
	return r
}

// revise joins a revised plan's new steps to the finished steps it keeps:
// the finished ones first, as they ran, then the model's. A new step that
// takes a finished step's id must be that step unchanged (the model
// repeated it; it is not run again); anything else under that id is an
// error the planner is told of.
func (s *RunState) revise(g backend.TaskGraph) (backend.TaskGraph, []string, error) {
	var kept []string
	switch {
	case s.Revision != nil:
		kept = s.Revision.Kept
	case s.Review != nil:
		kept = s.Review.Kept
	default:
		return g, nil, nil
	}
	out := backend.TaskGraph{Nodes: make([]backend.TaskNode, 0, len(kept)+len(g.Nodes))}
	for _, id := range kept {
		out.Nodes = append(out.Nodes, s.Steps[id].Node)
	}
	for _, n := range g.Nodes {
		if !slices.Contains(kept, n.ID) {
			out.Nodes = append(out.Nodes, n)
			continue
		}
		old := s.Steps[n.ID].Node
		if n.Kind != old.Kind || n.Tool != old.Tool || !sameJSON(n.Args, old.Args) {
			return g, nil, backend.Errorf(backend.EINVALID,
				"step %q of the revised plan reuses the id of a finished step for another step; give new steps new ids", n.ID)
		}
	}
	return out, kept, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return reflect.DeepEqual(x, y)
}
