package runtime

import (
	"context"
	"fmt"

	"ducklm/backend"
)

// newestReadable returns the state a load starts from: the run's latest
// checkpoint when it can be read, else the newest earlier one of the run
// that can (seed 000 §8: the latest *valid* checkpoint is resumable), else,
// for a run that is not a fork, the empty state (the ledger alone holds the
// whole run). A fork whose every checkpoint, its starting one included, is
// damaged cannot be loaded: its history before the fork is in that
// starting checkpoint. baseSeq is the seq the chosen checkpoint's base covers (-1 for
// none or a fork's start); st.recovered says what was skipped.
func (c *Controller) newestReadable(ctx context.Context, run backend.WorldRun) (st *RunState, cp backend.Checkpoint, baseSeq int64, err error) {
	if run.LatestCheckpointID == "" {
		return NewRunState(run.ID, run.WorldID), cp, -1, nil
	}
	cp, err = c.d.Store.GetCheckpoint(ctx, run.LatestCheckpointID)
	if err == nil {
		st, baseSeq, err = c.fromCheckpoint(ctx, run, cp)
		if err == nil {
			return st, cp, baseSeq, nil
		}
	}
	if !damaged(err) {
		return nil, cp, -1, err
	}
	first := err
	bad := map[string]bool{cp.Blob.Digest: true}
	if c.forgetBase(run.ID, cp.Blob, run.LatestCheckpointID) {
		c.d.Log("damaged checkpoint", "run", run.ID, "checkpoint", run.LatestCheckpointID, "err", first)
	}

	candidates, err := c.d.Store.ListCheckpoints(ctx, run.ID)
	if err != nil {
		return nil, cp, -1, err
	}
	// A fork's history before it lives in its starting checkpoint (made
	// from the parent's with the fork's edits): its own ledger alone is not
	// the whole run.
	_, ferr := c.d.Store.ForkOf(ctx, run.WorldID)
	if ferr != nil && backend.ErrorCode(ferr) != backend.ENOTFOUND {
		return nil, cp, -1, ferr
	}
	for i := len(candidates) - 1; i >= 0; i-- {
		older := candidates[i]
		if older.ID == run.LatestCheckpointID || bad[older.Blob.Digest] {
			continue
		}
		st, baseSeq, err := c.fromCheckpoint(ctx, run, older)
		if err == nil {
			st.recovered = fmt.Sprintf("checkpoint %s is damaged (%s); the run went on from checkpoint %s and the ledger",
				run.LatestCheckpointID, backend.ErrorMessage(first), older.ID)
			return st, older, baseSeq, nil
		}
		if !damaged(err) {
			return nil, cp, -1, err
		}
		bad[older.Blob.Digest] = true
	}
	if ferr == nil {
		return nil, cp, -1, backend.Wrap(first, backend.ECORRUPT,
			"run %s cannot be loaded: it is a fork and its checkpoints, its starting one included, are damaged", run.ID)
	}
	st = NewRunState(run.ID, run.WorldID)
	st.recovered = fmt.Sprintf("checkpoint %s is damaged (%s); the run went on from its ledger, folded from its first event",
		run.LatestCheckpointID, backend.ErrorMessage(first))
	return st, backend.Checkpoint{}, -1, nil
}

// fromCheckpoint reads the state a checkpoint's blob holds, ready to be
// caught up with the run's events after it.
func (c *Controller) fromCheckpoint(ctx context.Context, run backend.WorldRun, cp backend.Checkpoint) (*RunState, int64, error) {
	data, err := c.d.Blobs.Get(ctx, cp.Blob)
	if err != nil {
		return nil, -1, err
	}
	st := NewRunState(run.ID, run.WorldID)
	if err := decodeState(data, st); err != nil {
		return nil, -1, backend.Errorf(backend.ECORRUPT, "checkpoint %s of run %s is unreadable", cp.ID, run.ID)
	}
	if st.Steps == nil {
		st.Steps = map[string]*StepRecord{}
	}
	st.RunID, st.WorldID = run.ID, run.WorldID // a fork's start checkpoint carries the parent's ids
	if cp.RunID != run.ID {
		st.Seq = 0
		return st, -1, nil
	}
	// The checkpoint's blob is a base: the state at st.Seq, which the
	// events after it bring to the checkpoint and on.
	return st, st.Seq, nil
}

// damaged reports whether err says a checkpoint cannot be read (its row or
// blob missing, its bytes altered or unreadable), as opposed to the store
// failing to answer, which a fallback must not hide.
func damaged(err error) bool {
	code := backend.ErrorCode(err)
	return code == backend.ECORRUPT || code == backend.ENOTFOUND
}

// forgetBase drops the run's remembered base when it is ref, so no new
// checkpoint names a damaged blob, and reports whether checkpoint cpID is
// news to this process (not logged as damaged before).
func (c *Controller) forgetBase(runID string, ref backend.BlobRef, cpID string) bool {
	m := c.memo(runID)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.base != nil && m.base.ref.Digest == ref.Digest {
		m.base = nil
	}
	if m.damagedLogged == cpID {
		return false
	}
	m.damagedLogged = cpID
	return true
}

// recordRecovery writes the warning of a load that skipped a damaged
// checkpoint as the driver takes the run up again, then a checkpoint, so
// the warning is written once.
func (c *Controller) recordRecovery(ctx context.Context, st *RunState) {
	if st.recovered == "" {
		return
	}
	msg := st.recovered
	st.recovered = ""
	if err := c.append(ctx, st, EvWarning, map[string]any{"message": msg}); err != nil {
		c.d.Log("record warning", "run", st.RunID, "err", err)
		return
	}
	// A fresh checkpoint (on a new base: the damaged one was forgotten)
	// makes the run's latest checkpoint readable again.
	c.checkpoint(ctx, st)
}
