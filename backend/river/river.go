package river

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	rv "github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"ducklm/backend"
	"ducklm/backend/world"
)

// QueueBranches is the queue deliberation branches go to.
const QueueBranches = "branches"

// BranchArgs is a branch job: the request, its Key set.
type BranchArgs struct {
	Request world.BranchRequest `json:"request"`
}

// Kind implements river.JobArgs.
func (BranchArgs) Kind() string { return "ducklm.branch" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (BranchArgs) InsertOpts() rv.InsertOpts {
	return rv.InsertOpts{Queue: QueueBranches, MaxAttempts: 25}
}

// Brancher runs one branch (world.Service does).
type Brancher interface {
	Branch(ctx context.Context, req world.BranchRequest) (world.BranchResult, error)
}

type branchWorker struct {
	rv.WorkerDefaults[BranchArgs]
	worlds  Brancher
	timeout time.Duration
}

// Work runs the branch and records its result as the job's output.
func (w *branchWorker) Work(ctx context.Context, job *rv.Job[BranchArgs]) error {
	res, err := w.worlds.Branch(ctx, job.Args.Request)
	if err != nil {
		return err
	}
	return rv.RecordOutput(ctx, res)
}

// Timeout implements river.Worker.
func (w *branchWorker) Timeout(*rv.Job[BranchArgs]) time.Duration { return w.timeout }

// retrySoon retries a failed branch after a second: a branch fails for a
// reason outside it (a worker died, the database was away), not for its
// program, whose errors are results.
type retrySoon struct{}

func (retrySoon) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(time.Duration(min(len(job.Errors)+1, 10)) * time.Second)
}

// Options tune workers and queues.
type Options struct {
	// Slots is how many branches a worker runs at once (default 1).
	Slots int
	// JobTimeout bounds one branch (default 2 minutes).
	JobTimeout time.Duration
	// RescueAfter is how long a job whose worker vanished (killed, its
	// machine gone) stays running before River gives it to another worker
	// (default 5 minutes; it must exceed JobTimeout).
	RescueAfter time.Duration
	// ID names the worker in River's tables (default: River's).
	ID  string
	Log *slog.Logger
}

func (o *Options) defaults() {
	if o.Slots <= 0 {
		o.Slots = 1
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = 2 * time.Minute
	}
	if o.RescueAfter <= o.JobTimeout {
		o.RescueAfter = max(5*time.Minute, o.JobTimeout+time.Second)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

func connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINVALID, "cannot use the database address for the work queue")
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot reach the work queue's database")
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot set up the work queue's tables")
	}
	return pool, nil
}

// migrateLockKey serialises River's migrations across processes ("ducklmrq").
const migrateLockKey int64 = 0x6475636b6c6d7271

// migrate brings River's own tables up to date, on its own migration line.
// Workers and queues of a team start at once on a new database: an advisory
// lock lets one migrate while the others wait (two at once fail half-way).
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockKey)
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// Worker works branch jobs in this process.
type Worker struct {
	pool   *pgxpool.Pool
	client *rv.Client[pgx.Tx]
}

// StartWorker joins the queue on the PostgreSQL database at url and works
// branch jobs through worlds until Stop.
func StartWorker(ctx context.Context, url string, worlds Brancher, opts Options) (*Worker, error) {
	opts.defaults()
	pool, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	workers := rv.NewWorkers()
	rv.AddWorker(workers, &branchWorker{worlds: worlds, timeout: opts.JobTimeout})
	client, err := rv.NewClient(riverpgxv5.New(pool), &rv.Config{
		ID:                   opts.ID,
		Queues:               map[string]rv.QueueConfig{QueueBranches: {MaxWorkers: opts.Slots}},
		Workers:              workers,
		JobTimeout:           opts.JobTimeout,
		RescueStuckJobsAfter: opts.RescueAfter,
		RetryPolicy:          retrySoon{},
		FetchCooldown:        20 * time.Millisecond,
		FetchPollInterval:    500 * time.Millisecond,
		Logger:               opts.Log,
	})
	if err != nil {
		pool.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot start a worker")
	}
	if err := client.Start(ctx); err != nil {
		pool.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot start a worker")
	}
	return &Worker{pool: pool, client: client}, nil
}

// Stop finishes the branches under way (until ctx ends) and leaves the queue.
func (w *Worker) Stop(ctx context.Context) error {
	err := w.client.Stop(ctx)
	w.pool.Close()
	return err
}

// Queue evaluates branches as jobs that workers run: it stands in for the
// in-process evaluator of a deliberation.
type Queue struct {
	pool   *pgxpool.Pool
	client *rv.Client[pgx.Tx]
}

// NewQueue opens the queue on the PostgreSQL database at url for inserting
// branch jobs and following them.
func NewQueue(ctx context.Context, url string) (*Queue, error) {
	pool, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	client, err := rv.NewClient(riverpgxv5.New(pool), &rv.Config{})
	if err != nil {
		pool.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot open the work queue")
	}
	return &Queue{pool: pool, client: client}, nil
}

// Close releases the queue's connections.
func (q *Queue) Close() { q.pool.Close() }

// Branch implements the deliberation's Evaluator: it inserts a job and
// waits until a worker has recorded the branch. A request without a Key
// gets one, so River's retries of this job record the branch once.
func (q *Queue) Branch(ctx context.Context, req world.BranchRequest) (world.BranchResult, error) {
	var out world.BranchResult
	if req.Key == "" {
		req.Key = backend.NewID(backend.KindFork)
	}
	ins, err := q.client.Insert(ctx, BranchArgs{Request: req}, nil)
	if err != nil {
		return out, backend.Wrap(err, backend.EUNAVAILABLE, "cannot queue a branch")
	}
	id := ins.Job.ID
	wait := 5 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			q.client.JobCancel(context.WithoutCancel(ctx), id)
			return out, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
		row, err := q.client.JobGet(ctx, id)
		if err != nil {
			continue // the database may be away for a moment; ctx bounds the wait
		}
		switch row.State {
		case rivertype.JobStateCompleted:
			if err := json.Unmarshal(row.Output(), &out); err != nil {
				return out, backend.Wrap(err, backend.EINTERNAL, "branch job %d left no result", id)
			}
			return out, nil
		case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
			last := "no error recorded"
			if n := len(row.Errors); n > 0 {
				last = row.Errors[n-1].Error
			}
			return out, backend.Errorf(backend.EUNAVAILABLE, "branch job %d was %s after %d attempts: %s", id, row.State, row.Attempt, last)
		}
	}
}

// Pending counts branch jobs not finished yet, for progress.
func (q *Queue) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := q.pool.QueryRow(ctx, fmt.Sprintf(
		"SELECT count(*) FROM river_job WHERE queue = '%s' AND state IN ('available', 'running', 'retryable', 'scheduled')", QueueBranches)).Scan(&n)
	return n, err
}
