package world

import (
	"context"
	"encoding/json"

	"ducklm/backend"
)

// StateAtTime is a run's state at a world-local time: after its last step
// at or before the time asked, which is Time (earlier when the run stopped
// before).
type StateAtTime struct {
	RunID string          `json:"runId"`
	Time  int64           `json:"time"`
	State json.RawMessage `json:"state"`
}

// StatesAt is two runs' states at one world-local time, and how they differ.
type StatesAt struct {
	At      int64       `json:"at"`
	A       StateAtTime `json:"a"`
	B       StateAtTime `json:"b"`
	Changes []Change    `json:"changes"`
}

// StatesAt returns the states of two simulated runs at world-local time at,
// so two branches are compared at a common moment instead of each at its
// latest.
func (s *Service) StatesAt(ctx context.Context, runA, runB string, at int64) (StatesAt, error) {
	out := StatesAt{At: at}
	if at < 0 {
		return out, backend.Errorf(backend.EINVALID, "a world time is 0 or more, not %d", at)
	}
	var err error
	if out.A, err = s.StateAt(ctx, runA, at); err != nil {
		return out, err
	}
	if out.B, err = s.StateAt(ctx, runB, at); err != nil {
		return out, err
	}
	out.Changes, err = JSONDiff(out.A.State, out.B.State)
	return out, err
}

// StateAt returns a simulated run's state at world-local time at: its
// nearest checkpoint at or before at, with the steps after it replayed up
// to at. Before the run's own history begins (a fork's), the run it was
// forked from answers, up to the fork.
func (s *Service) StateAt(ctx context.Context, runID string, at int64) (StateAtTime, error) {
	if at < 0 {
		return StateAtTime{}, backend.Errorf(backend.EINVALID, "a world time is 0 or more, not %d", at)
	}
	st, err := s.stateAt(ctx, runID, at, -1)
	st.RunID = runID
	return st, err
}

// stateAt is StateAt over the run's history up to seq toSeq (-1: all).
func (s *Service) stateAt(ctx context.Context, runID string, at, toSeq int64) (StateAtTime, error) {
	run, err := s.store.GetRun(ctx, runID)
	if err != nil {
		return StateAtTime{}, err
	}
	spec, err := s.store.GetSpec(ctx, run.WorldID)
	if err != nil {
		return StateAtTime{}, err
	}
	if spec.Backend != BackendStarlark {
		return StateAtTime{}, backend.Errorf(backend.EINVALID, "run %s is a task run: it has no world time to compare at", runID)
	}
	cps, err := s.store.ListCheckpoints(ctx, runID)
	if err != nil {
		return StateAtTime{}, err
	}
	var from *backend.Checkpoint
	for i := range cps {
		if cps[i].WorldLocalTime <= at && (toSeq < 0 || cps[i].LedgerSeq <= toSeq) {
			from = &cps[i]
		}
	}
	if from == nil {
		if run.BaseRunID != "" {
			return s.stateAt(ctx, run.BaseRunID, at, run.BaseSeq)
		}
		return StateAtTime{}, backend.Errorf(backend.EINVALID, "run %s has no state at world time %d", runID, at)
	}
	prog, err := s.program(ctx, spec)
	if err != nil {
		return StateAtTime{}, err
	}
	data, err := s.blobs.Get(ctx, from.Blob)
	if err != nil {
		return StateAtTime{}, err
	}
	w := prog.New()
	if err := w.RestoreBytes(data); err != nil {
		return StateAtTime{}, err
	}
	q := backend.EventQuery{Stream: runID, FromSeq: from.LedgerSeq + 1, Types: []string{EventStep}}
	if toSeq >= 0 {
		q.ToSeq = toSeq
	}
	for {
		q.Limit = verifyPage
		events, err := s.events.Query(ctx, q)
		if err != nil {
			return StateAtTime{}, err
		}
		for _, e := range events {
			// A step's event carries the world time after it.
			if e.WorldLocalTime > at {
				return StateAtTime{Time: w.Time(), State: w.State()}, nil
			}
			if err := replayStep(ctx, w, e); err != nil {
				return StateAtTime{}, err
			}
		}
		if len(events) < verifyPage {
			return StateAtTime{Time: w.Time(), State: w.State()}, nil
		}
		q.FromSeq = events[len(events)-1].Seq + 1
	}
}
