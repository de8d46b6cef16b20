package river

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	rv "github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"ducklm/backend"
	"ducklm/backend/world"
)

// QueueOptions tune how a queue batches branches into jobs and follows them.
type QueueOptions struct {
	// Batch is how many branches one job carries at most (default 8).
	Batch int
	// Linger is how long a batch that is not full waits for more branches
	// before it is queued (default 2 ms): the branches of a deliberation's
	// level arrive together, the last few of a level alone.
	Linger time.Duration
	// Poll is how often the jobs waited on are read in case an
	// announcement was missed (a lost connection; default 1 s).
	Poll time.Duration
}

func (o *QueueOptions) defaults() {
	if o.Batch <= 0 {
		o.Batch = 8
	}
	if o.Linger <= 0 {
		o.Linger = 2 * time.Millisecond
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
}

// Queue evaluates branches as jobs that workers run: it stands in for the
// in-process evaluator of a deliberation. Branches asked for at about the
// same time share a job (QueueOptions.Batch); a worker announces a finished
// job on DoneChannel and the queue reads its results then.
type Queue struct {
	url    string
	opt    QueueOptions
	pool   *pgxpool.Pool
	client *rv.Client[pgx.Tx]
	stop   context.CancelFunc
	done   sync.WaitGroup

	mu      sync.Mutex
	pending []*call                   // not queued yet
	timer   *time.Timer               // queues pending after Linger
	jobs    map[int64][]*call         // queued, by job id
	raw     map[int64]chan rawOutcome // other jobs waited on (world runs), by id
	ran     int                       // branches whose jobs completed
	ranBy   map[string]bool           // the workers that completed them
}

// rawOutcome is a finished job's output, or why it has none.
type rawOutcome struct {
	output json.RawMessage
	err    error
}

// call is one Branch waiting for its result.
type call struct {
	req  world.BranchRequest
	out  chan outcome // buffered: a result is never blocked on
	job  int64        // 0 until queued
	gone bool         // its caller stopped waiting
}

type outcome struct {
	res world.BranchResult
	err error
}

// NewQueue opens the queue on the PostgreSQL database at url for inserting
// branch jobs and following them.
func NewQueue(ctx context.Context, url string, opts ...QueueOptions) (*Queue, error) {
	var opt QueueOptions
	if len(opts) > 0 {
		opt = opts[0]
	}
	opt.defaults()
	pool, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	// River announces inserts to workers at most once per FetchCooldown a
	// queue (default 100 ms); a deliberation inserts a level's jobs in a
	// burst, then waits: every job should wake a worker at once.
	client, err := rv.NewClient(riverpgxv5.New(pool), &rv.Config{FetchCooldown: time.Millisecond})
	if err != nil {
		pool.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot open the work queue")
	}
	fctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	q := &Queue{url: url, opt: opt, pool: pool, client: client, stop: stop, jobs: map[int64][]*call{}, raw: map[int64]chan rawOutcome{},
		ranBy: map[string]bool{}}
	listening := make(chan struct{})
	q.done.Add(2)
	go q.listen(fctx, listening)
	go q.poll(fctx)
	select {
	case <-listening: // announcements from now on reach this queue
	case <-time.After(10 * time.Second): // the poll serves meanwhile
	}
	return q, nil
}

// Close stops following jobs and releases the queue's connections. Branch
// calls still waiting end with an error.
func (q *Queue) Close() {
	q.stop()
	q.done.Wait()
	q.mu.Lock()
	var left []*call
	left = append(left, q.pending...)
	for _, cs := range q.jobs {
		left = append(left, cs...)
	}
	raw := q.raw
	q.pending, q.jobs, q.raw = nil, map[int64][]*call{}, map[int64]chan rawOutcome{}
	q.mu.Unlock()
	for _, w := range raw {
		w <- rawOutcome{err: backend.Errorf(backend.EUNAVAILABLE, "the work queue was closed before the job was done")}
	}
	for _, c := range left {
		c.out <- outcome{err: backend.Errorf(backend.EUNAVAILABLE, "the work queue was closed before the branch was done")}
	}
	q.pool.Close()
}

// Branch implements the deliberation's Evaluator: it hands the branch to a
// job (a new one, or one being filled) and waits until a worker has
// recorded it. A request without a Key gets one, so River's retries of the
// job record the branch once. When ctx ends first, the branch is left to
// finish; a job whose every branch was left is cancelled.
func (q *Queue) Branch(ctx context.Context, req world.BranchRequest) (world.BranchResult, error) {
	if req.Key == "" {
		req.Key = backend.NewID(backend.KindFork)
	}
	c := &call{req: req, out: make(chan outcome, 1)}
	q.mu.Lock()
	q.pending = append(q.pending, c)
	var full []*call
	switch {
	case len(q.pending) >= q.opt.Batch:
		full, q.pending = q.pending, nil
		if q.timer != nil {
			q.timer.Stop()
		}
	case len(q.pending) == 1:
		q.timer = time.AfterFunc(q.opt.Linger, q.flush)
	}
	q.mu.Unlock()
	if full != nil {
		q.insert(full)
	}
	select {
	case o := <-c.out:
		return o.res, o.err
	case <-ctx.Done():
		q.leave(c)
		return world.BranchResult{}, ctx.Err()
	}
}

// flush queues the branches that waited Linger.
func (q *Queue) flush() {
	q.mu.Lock()
	batch := q.pending
	q.pending = nil
	q.mu.Unlock()
	if len(batch) > 0 {
		q.insert(batch)
	}
}

// insert queues batch as one job. The job is registered before its insert
// commits, so its announcement cannot come before the queue waits for it.
func (q *Queue) insert(batch []*call) {
	q.mu.Lock()
	live := batch[:0:0]
	for _, c := range batch {
		if !c.gone {
			live = append(live, c)
		}
	}
	q.mu.Unlock()
	if len(live) == 0 {
		return
	}
	reqs := make([]world.BranchRequest, len(live))
	for i, c := range live {
		reqs[i] = c.req
	}
	fail := func(err error) {
		for _, c := range live {
			c.out <- outcome{err: backend.Wrap(err, backend.EUNAVAILABLE, "cannot queue a branch")}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tx, err := q.pool.Begin(ctx)
	if err != nil {
		fail(err)
		return
	}
	defer tx.Rollback(ctx)
	ins, err := q.client.InsertTx(ctx, tx, BranchesArgs{Requests: reqs}, nil)
	if err != nil {
		fail(err)
		return
	}
	id := ins.Job.ID
	q.mu.Lock()
	q.jobs[id] = live
	for _, c := range live {
		c.job = id
	}
	q.mu.Unlock()
	if err := tx.Commit(ctx); err != nil {
		q.mu.Lock()
		delete(q.jobs, id)
		q.mu.Unlock()
		fail(err)
	}
}

// leave marks c's caller gone; a queued job whose callers are all gone is
// cancelled (a worker running it finishes it anyway: its branches are
// recorded whole or not at all).
func (q *Queue) leave(c *call) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c.gone = true
	if c.job == 0 {
		return
	}
	for _, o := range q.jobs[c.job] {
		if !o.gone {
			return
		}
	}
	delete(q.jobs, c.job)
	go q.client.JobCancel(context.Background(), c.job)
}

// listen reads the announcements of finished jobs, reconnecting when the
// connection is lost (the poll covers what is announced meanwhile).
func (q *Queue) listen(ctx context.Context, listening chan struct{}) {
	defer q.done.Done()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, q.url)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+DoneChannel); err == nil {
				if listening != nil {
					close(listening)
					listening = nil
				}
				backoff = 100 * time.Millisecond
				for {
					n, err := conn.WaitForNotification(ctx)
					if err != nil {
						break
					}
					if id, perr := strconv.ParseInt(n.Payload, 10, 64); perr == nil {
						q.finish(ctx, []int64{id})
					}
				}
			}
			conn.Close(context.Background())
		}
		if !backend.Sleep(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// poll reads the jobs waited on every Poll, for announcements missed.
func (q *Queue) poll(ctx context.Context) {
	defer q.done.Done()
	for backend.Sleep(ctx, q.opt.Poll) {
		q.mu.Lock()
		ids := make([]int64, 0, len(q.jobs)+len(q.raw))
		for id := range q.jobs {
			ids = append(ids, id)
		}
		for id := range q.raw {
			ids = append(ids, id)
		}
		q.mu.Unlock()
		if len(ids) > 0 {
			q.finish(ctx, ids)
		}
	}
}

// finish hands the results of those of ids that are finished to their
// callers; a job still under way is left waiting.
func (q *Queue) finish(ctx context.Context, ids []int64) {
	for _, id := range ids {
		q.mu.Lock()
		_, waiting := q.jobs[id]
		_, rawWaiting := q.raw[id]
		q.mu.Unlock()
		if !waiting && !rawWaiting {
			continue // another queue's job, or already handed out
		}
		row, err := q.client.JobGet(ctx, id)
		if err != nil {
			continue // the database may be away for a moment; the poll comes back
		}
		if rawWaiting {
			var o rawOutcome
			switch row.State {
			case rivertype.JobStateCompleted:
				o.output = row.Output()
			case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
				o.err = jobFailed(row)
			default:
				continue
			}
			q.mu.Lock()
			w, ok := q.raw[id]
			delete(q.raw, id)
			q.mu.Unlock()
			if ok {
				w <- o
			}
			continue
		}
		var outs []outcome
		switch row.State {
		case rivertype.JobStateCompleted:
			res, err := readBranchesOutput(row.Output())
			if err != nil {
				outs = []outcome{{err: backend.Wrap(err, backend.EINTERNAL, "branch job %d left no readable result", id)}}
			} else {
				for _, r := range res {
					outs = append(outs, outcome{res: r})
				}
			}
		case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
			outs = []outcome{{err: jobFailed(row)}}
		default:
			continue
		}
		q.mu.Lock()
		calls, waiting := q.jobs[id]
		delete(q.jobs, id)
		if waiting && row.State == rivertype.JobStateCompleted {
			q.ran += len(calls)
			if n := len(row.AttemptedBy); n > 0 {
				q.ranBy[row.AttemptedBy[n-1]] = true
			}
		}
		q.mu.Unlock()
		if !waiting {
			continue
		}
		if len(outs) == 1 && outs[0].err != nil {
			for range calls[1:] {
				outs = append(outs, outs[0])
			}
		}
		if len(outs) != len(calls) {
			err := backend.Errorf(backend.EINTERNAL, "branch job %d answered %d results for %d branches", id, len(outs), len(calls))
			outs = outs[:0]
			for range calls {
				outs = append(outs, outcome{err: err})
			}
		}
		for i, c := range calls {
			c.out <- outs[i]
		}
	}
}

// jobFailed says why a job ended without a result.
func jobFailed(row *rivertype.JobRow) error {
	last := "no error recorded"
	if n := len(row.Errors); n > 0 {
		last = row.Errors[n-1].Error
	}
	return backend.Errorf(backend.EUNAVAILABLE, "job %d was %s after %d attempts: %s", row.ID, row.State, row.Attempt, last)
}

// Ran says how many branches this queue's completed jobs carried, and on
// how many distinct workers they completed (a job a dying worker left is
// counted for the worker that finished it).
func (q *Queue) Ran() (branches, workers int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ran, len(q.ranBy)
}

// Pending counts branch jobs not finished yet, for progress.
func (q *Queue) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := q.pool.QueryRow(ctx, fmt.Sprintf(
		"SELECT count(*) FROM river_job WHERE queue = '%s' AND state IN ('available', 'running', 'retryable', 'scheduled')", QueueBranches)).Scan(&n)
	return n, err
}
