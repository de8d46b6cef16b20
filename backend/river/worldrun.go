package river

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	rv "github.com/riverqueue/river"

	"ducklm/backend"
	"ducklm/backend/world"
)

// WorldRunArgs is a job that advances a simulated world's run until its
// world-local time reaches Until (or the world is done). The target is
// absolute, so a job run again after its worker died takes only the steps
// still missing: the run resumes from its last checkpoint and the steps
// saved after it (world.Service opens a run that way), and every save
// expects the head it read, so no step is recorded twice.
type WorldRunArgs struct {
	RunID           string          `json:"runId"`
	Until           int64           `json:"until"`
	Action          json.RawMessage `json:"action,omitempty"`
	CheckpointEvery int             `json:"checkpointEvery"`
}

// Kind implements river.JobArgs.
func (WorldRunArgs) Kind() string { return "ducklm.world_run" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (WorldRunArgs) InsertOpts() rv.InsertOpts {
	return rv.InsertOpts{Queue: QueueBranches, MaxAttempts: 25}
}

// Runner advances world runs (world.Service does).
type Runner interface {
	Run(ctx context.Context, runID string) (backend.WorldRun, error)
	RunSteps(ctx context.Context, runID string, opts world.RunOptions) (world.StepOutcome, error)
}

type worldRunWorker struct {
	rv.WorkerDefaults[WorldRunArgs]
	worlds  Runner
	w       *branchesWorker // its pool, timeout and heart
	timeout time.Duration
}

// Work takes the steps still missing to Until and completes the job, its
// outcome as output, in the transaction that announces it.
func (w *worldRunWorker) Work(ctx context.Context, job *rv.Job[WorldRunArgs]) error {
	a := job.Args
	w.w.heart.begin(backend.WorkerJob{ID: job.ID, Kind: "world_run", RunID: a.RunID,
		Label: fmt.Sprintf("run %s to time %d", a.RunID, a.Until), StartedAt: time.Now().UTC()})
	defer w.w.heart.end(job.ID)
	run, err := w.worlds.Run(ctx, a.RunID)
	if err != nil {
		return err
	}
	var out world.StepOutcome
	out.Run = run
	if left := a.Until - run.WorldLocalTime; left > 0 && run.Status == backend.RunRunning {
		if out, err = w.worlds.RunSteps(ctx, a.RunID, world.RunOptions{Steps: int(left), Action: a.Action,
			CheckpointEvery: a.CheckpointEvery}); err != nil {
			return err
		}
	}
	return completeAnnounced(ctx, w.w.pool, job, out)
}

// Timeout implements river.Worker.
func (w *worldRunWorker) Timeout(*rv.Job[WorldRunArgs]) time.Duration { return w.timeout }

// RunWorld queues a job that advances run runID by steps from its
// world-local time from (the caller's read of it) and waits until a worker
// has done it. Without CheckpointEvery a job checkpoints every 100 steps,
// so a worker's death costs at most that many steps again.
func (q *Queue) RunWorld(ctx context.Context, runID string, from int64, steps int, action json.RawMessage, checkpointEvery int) (world.StepOutcome, error) {
	var out world.StepOutcome
	if steps <= 0 {
		return out, backend.Errorf(backend.EINVALID, "the number of steps must be positive, not %d", steps)
	}
	if checkpointEvery <= 0 {
		checkpointEvery = 100
	}
	wait := make(chan rawOutcome, 1)
	ctxIns, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tx, err := q.pool.Begin(ctxIns)
	if err != nil {
		return out, backend.Wrap(err, backend.EUNAVAILABLE, "cannot queue the world run")
	}
	defer tx.Rollback(context.WithoutCancel(ctxIns))
	ins, err := q.client.InsertTx(ctxIns, tx, WorldRunArgs{RunID: runID, Until: from + int64(steps), Action: action,
		CheckpointEvery: checkpointEvery}, nil)
	if err != nil {
		return out, backend.Wrap(err, backend.EUNAVAILABLE, "cannot queue the world run")
	}
	id := ins.Job.ID
	q.mu.Lock()
	q.raw[id] = wait
	q.mu.Unlock()
	if err := tx.Commit(ctxIns); err != nil {
		q.mu.Lock()
		delete(q.raw, id)
		q.mu.Unlock()
		return out, backend.Wrap(err, backend.EUNAVAILABLE, "cannot queue the world run")
	}
	select {
	case o := <-wait:
		if o.err != nil {
			return out, o.err
		}
		if err := json.Unmarshal(o.output, &out); err != nil {
			return out, backend.Wrap(err, backend.EINTERNAL, "world run job %d left no readable result", id)
		}
		return out, nil
	case <-ctx.Done():
		q.mu.Lock()
		delete(q.raw, id)
		q.mu.Unlock()
		q.client.JobCancel(context.WithoutCancel(ctx), id)
		return out, ctx.Err()
	}
}
