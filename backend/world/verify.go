package world

import (
	"bytes"
	"context"
	"encoding/json"

	"ducklm/backend"
	"ducklm/backend/starlark"
)

// Divergence is where re-execution first differed from the record.
type Divergence struct {
	Stream   string `json:"stream"`
	Seq      int64  `json:"seq"`
	Type     string `json:"type"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Message  string `json:"message"`
}

// VerifyReport is the result of re-executing a run.
type VerifyReport struct {
	RunID       string      `json:"runId"`
	Events      int         `json:"events"`
	Steps       int         `json:"steps"`
	Checkpoints int         `json:"checkpoints"`
	OK          bool        `json:"ok"`
	Divergence  *Divergence `json:"divergence,omitempty"`
}

// Verify re-executes a run from its root spec, seed and recorded actions,
// through every fork on its chain, and compares every recorded state digest,
// emitted event and checkpoint digest. It reports the first divergence.
func (s *Service) Verify(ctx context.Context, runID string) (VerifyReport, error) {
	rep := VerifyReport{RunID: runID}
	if run, err := s.store.GetRun(ctx, runID); err != nil {
		return rep, err
	} else if spec, err := s.store.GetSpec(ctx, run.WorldID); err != nil {
		return rep, err
	} else if spec.Backend != BackendStarlark {
		return rep, backend.Errorf(backend.EINVALID, "run %s is a task run: its steps acted on this machine, so it cannot be re-executed to verify; simulated world runs can", runID)
	}
	segs, err := s.Segments(ctx, runID)
	if err != nil {
		return rep, err
	}
	var w *starlark.World
	var pending []json.RawMessage // emitted by the last step, matched against world.event records
	for _, seg := range segs {
		spec, err := s.store.GetSpec(ctx, seg.WorldID)
		if err != nil {
			return rep, err
		}
		if seg.ToSeq == 0 {
			continue
		}
		// A page at a time: re-executing a long run holds one page of its
		// events, not the whole history.
		for from := int64(1); from <= seg.ToSeq; from += verifyPage {
			events, err := s.events.Query(ctx, backend.EventQuery{Stream: seg.Stream, FromSeq: from, ToSeq: min(seg.ToSeq, from+verifyPage-1)})
			if err != nil {
				return rep, err
			}
			for _, e := range events {
				rep.Events++
				diverged := func(expected, actual, msg string) (VerifyReport, error) {
					rep.Divergence = &Divergence{Stream: e.Stream, Seq: e.Seq, Type: e.Type, Expected: expected, Actual: actual, Message: msg}
					return rep, nil
				}
				var p map[string]json.RawMessage
				_ = json.Unmarshal(e.Payload, &p)
				str := func(k string) string {
					var v string
					_ = json.Unmarshal(p[k], &v)
					return v
				}
				switch e.Type {
				case EventInitialized:
					prog, err := s.program(ctx, spec)
					if err != nil {
						return rep, err
					}
					w = prog.New()
					state, err := w.Initialize(ctx, uint64(spec.Seed))
					if err != nil {
						return diverged(str("stateDigest"), "", "init failed on re-execution: "+backend.ErrorMessage(err))
					}
					if got := digest(state); got != str("stateDigest") {
						return diverged(str("stateDigest"), got, "the initial state differs")
					}
				case EventForked:
					if w, err = s.replayFork(ctx, spec, w); err != nil {
						return diverged(str("stateDigest"), "", backend.ErrorMessage(err))
					}
					if got := digest(w.State()); got != str("stateDigest") {
						return diverged(str("stateDigest"), got, "the state after the fork's divergence differs")
					}
				case EventStep:
					if w == nil {
						return diverged("", "", "a step is recorded before the world was initialized")
					}
					var sp stepPayload
					if err := json.Unmarshal(e.Payload, &sp); err != nil {
						return diverged("", "", "the step record is unreadable")
					}
					res, err := w.Step(ctx, actionOrNull(sp.Action))
					if err != nil {
						return diverged(sp.StateDigest, "", "the step failed on re-execution: "+backend.ErrorMessage(err))
					}
					rep.Steps++
					if got := digest(res.State); got != sp.StateDigest {
						return diverged(sp.StateDigest, got, "the state after this step differs")
					}
					pending = res.Emitted
				case EventEmitted:
					if len(pending) == 0 {
						return diverged(string(e.Payload), "", "re-execution emitted fewer events")
					}
					if !bytes.Equal(pending[0], e.Payload) {
						return diverged(string(e.Payload), string(pending[0]), "an emitted event differs")
					}
					pending = pending[1:]
				case EventCheckpoint:
					if w == nil {
						return diverged("", "", "a checkpoint is recorded before the world was initialized")
					}
					data, err := w.CheckpointBytes()
					if err != nil {
						return rep, err
					}
					rep.Checkpoints++
					if got := digest(data); got != str("digest") {
						return diverged(str("digest"), got, "the checkpoint "+str("checkpointId")+" differs")
					}
				}
			}
		}
	}
	rep.OK = true
	return rep, nil
}

// verifyPage is how many events Verify reads at once.
const verifyPage = 4096

// replayFork re-applies a recorded fork to the world re-executed so far.
func (s *Service) replayFork(ctx context.Context, child backend.WorldSpec, parent *starlark.World) (*starlark.World, error) {
	if parent == nil {
		return nil, backend.Errorf(backend.ECORRUPT, "a fork is recorded before its parent's history")
	}
	f, err := s.store.ForkOf(ctx, child.ID)
	if err != nil {
		return nil, err
	}
	d, err := parseDelta(f.Divergence, f.Delta, child.Domain)
	if err != nil {
		return nil, err
	}
	data, err := parent.CheckpointBytes()
	if err != nil {
		return nil, err
	}
	prog, err := s.program(ctx, child)
	if err != nil {
		return nil, err
	}
	w := prog.New()
	if err := w.RestoreBytes(data); err != nil {
		return nil, err
	}
	return w, diverge(w, f, child, d)
}
