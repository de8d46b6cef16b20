package api

import (
	"context"
	"encoding/json"
	"time"

	"ducklm/backend"
	"ducklm/backend/service"
	"ducklm/backend/world"
)

// worldRunProgressEvery is how often a world run on workers reads how far
// the run is, for the window's progress.
const worldRunProgressEvery = 250 * time.Millisecond

// runWorldOnWorkers queues in's steps as one world-run job and waits for a
// worker to take them, reporting progress under in.Op from the run's
// world-local time (a worker saves its steps at least every checkpoint).
func (a *API) runWorldOnWorkers(in StepInput, action json.RawMessage) (world.StepOutcome, error) {
	ctx := a.ctx()
	run, err := a.svc.Worlds.Run(ctx, in.RunID)
	if err != nil {
		return world.StepOutcome{}, err
	}
	if run.Status != backend.RunRunning {
		return world.StepOutcome{}, backend.Errorf(backend.EINVALID, "run %s has %s; only a running world takes steps", in.RunID, run.Status)
	}
	q, err := a.teamQueue(ctx, "world runs run on workers only for a team's PostgreSQL; this window uses this machine's SQLite database (choose the team's in Settings → Database)",
		"no worker is alive to take the run; start one with `ducklm worker` on a machine that reaches the team's database, or run the steps here")
	if err != nil {
		return world.StepOutcome{}, err
	}
	defer q.Close()
	// The window waits for the job: until it ends, the run is stepping.
	defer a.svc.Worlds.MarkStepping(in.RunID)()
	report := service.Reporter(a.svc.Progress, in.Op)
	// Stop (CancelWorldRun) cancels the job; its worker stops at its next
	// save, and the run keeps what was saved.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer a.track(in.Op, cancel)()
	wctx, stop := context.WithCancel(rctx)
	defer stop()
	if in.Op != "" {
		report("queued for the team's workers", 0, int64(in.Steps), "steps")
		go func() {
			t := time.NewTicker(worldRunProgressEvery)
			defer t.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case <-t.C:
				}
				if r, err := a.svc.Worlds.Run(wctx, in.RunID); err == nil {
					report("on the team's workers", min(r.WorldLocalTime-run.WorldLocalTime, int64(in.Steps)), int64(in.Steps), "steps")
				}
			}
		}()
	}
	out, err := q.RunWorld(rctx, in.RunID, run.WorldLocalTime, in.Steps, action, in.CheckpointEvery)
	stop()
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		return out, backend.Errorf(backend.ECANCELLED, "the run on the team's workers was stopped; it keeps the steps its worker saved")
	}
	if err == nil && in.Op != "" {
		report("on the team's workers", out.Run.WorldLocalTime-run.WorldLocalTime, int64(in.Steps), "steps")
	}
	return out, err
}

// CancelWorldRun stops the world run on the team's workers started as op
// (StepInput.Op) and reports whether one was running.
func (a *API) CancelWorldRun(op string) (bool, error) {
	if err := a.ready(); err != nil {
		return false, err
	}
	return a.cancelOp(op), nil
}
