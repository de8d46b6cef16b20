package river

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
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

// DoneChannel is the PostgreSQL notification channel a worker announces a
// finished job on (its id), in the transaction that completes it, so the
// queue that waits for it reads the result at once instead of polling.
const DoneChannel = "ducklm_job_done"

// BranchesArgs is a job of several branches of one deliberation, each with
// its Key set: one job carries a batch, so the queue's per-job cost (insert,
// fetch, completion, the waiter's read) is paid once for all of them.
type BranchesArgs struct {
	Requests []world.BranchRequest `json:"requests"`
}

// Kind implements river.JobArgs.
func (BranchesArgs) Kind() string { return "ducklm.branches" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (BranchesArgs) InsertOpts() rv.InsertOpts {
	return rv.InsertOpts{Queue: QueueBranches, MaxAttempts: 25}
}

var _ BatchBrancher = (*world.Service)(nil)

// Brancher runs one branch (world.Service does).
type Brancher interface {
	Branch(ctx context.Context, req world.BranchRequest) (world.BranchResult, error)
}

// BatchBrancher runs a job's branches and records them in one commit,
// running within inside it (world.Service does); a Brancher without it
// records them one by one.
type BatchBrancher interface {
	Branches(ctx context.Context, reqs []world.BranchRequest, within world.BranchesCommit) ([]world.BranchResult, bool, error)
}

type branchesWorker struct {
	rv.WorkerDefaults[BranchesArgs]
	worlds  Brancher
	pool    *pgxpool.Pool
	timeout time.Duration
	heart   *heart
}

// Work runs the job's branches and records them, the job's completion with
// their results as its output, and its announcement on DoneChannel in ONE
// transaction when the worlds can (BatchBrancher; completeInLedger). Else,
// or when that commit found branches recorded before, the branches are
// recorded one by one and the job completed after them (completeAnnounced).
// A job run again after its worker died runs its branches again: those
// already recorded return what was recorded.
func (w *branchesWorker) Work(ctx context.Context, job *rv.Job[BranchesArgs]) error {
	reqs := job.Args.Requests
	label := fmt.Sprintf("%d branches", len(reqs))
	if len(reqs) > 0 {
		label = fmt.Sprintf("%d branches of round %d from %s", len(reqs), reqs[0].DeliberationIndex, reqs[0].CheckpointID)
	}
	w.heart.begin(backend.WorkerJob{ID: job.ID, Kind: "branches", Label: label, StartedAt: time.Now().UTC()})
	defer w.heart.end(job.ID)
	if bb, ok := w.worlds.(BatchBrancher); ok {
		out, committed, err := bb.Branches(ctx, reqs, func(tx *sql.Tx, out []world.BranchResult) error {
			return completeInLedger(ctx, tx, job.JobRow, branchesOutput(out))
		})
		if err != nil || committed {
			return err
		}
		return completeAnnounced(ctx, w.pool, job, branchesOutput(out))
	}
	out := make([]world.BranchResult, len(reqs))
	for i, req := range reqs {
		res, err := w.worlds.Branch(ctx, req)
		if err != nil {
			return err
		}
		out[i] = res
	}
	return completeAnnounced(ctx, w.pool, job, branchesOutput(out))
}

// branchesOutput is a job's results as its recorded output: their JSON as
// ONE string. River keeps a job's output in its metadata, a jsonb column
// under a GIN index, and writes it twice (the completion, then River's own
// completer): as a document of hundreds of keys (8 branches' forks, runs,
// checkpoints, states and next actions) each write cost PostgreSQL ~3 ms
// of index entries and detoasting, more than the rest of the job's commits
// together; as one string it is one index entry. readBranchesOutput reads
// both forms.
func branchesOutput(out []world.BranchResult) string {
	b, err := json.Marshal(out)
	if err != nil {
		return "[]" // BranchResult always marshals; an empty output reads as a miscount
	}
	return string(b)
}

// readBranchesOutput reads a branch job's output: a string holding the
// results' JSON (branchesOutput), or the results themselves (written by
// workers before it).
func readBranchesOutput(raw []byte) ([]world.BranchResult, error) {
	var res []world.BranchResult
	if len(raw) > 0 && raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, err
		}
		raw = []byte(text)
	}
	err := json.Unmarshal(raw, &res)
	return res, err
}

// completeInLedger completes a running job, with output (a JSON string) as
// its recorded output, and announces it on DoneChannel, inside tx: the
// ledger's transaction that records the job's branches, so the branches,
// the job's end and the announcement commit together, once a job.
//
// It writes River's job row itself (state, finalized_at and the "output"
// key of metadata that rivertype.JobRow.Output reads), as JobCompleteTx
// would: JobCompleteTx takes a transaction of the client's driver (pgx),
// and the ledger's is database/sql's. It also writes the row once where
// RecordOutput and JobCompleteTx write it twice (the completion, then
// River's completer merging the output again): River's job table indexes
// metadata with GIN, and each write of a job's row was the costliest
// statement of a branch job (measured with pg_stat_statements: ~4 ms of a
// job's ~9 ms of PostgreSQL time). River's completer, after Work returns,
// finds the job no longer running and writes nothing. The job must still
// be this attempt's (running, same attempt): a job given to another worker
// meanwhile (its worker's liveness lock was lost while it lived on) rolls
// the branches back here and this attempt ends in an error; River then
// retries the job, and the attempt that completes it records its branches
// once.
func completeInLedger(ctx context.Context, tx *sql.Tx, job *rivertype.JobRow, output string) error {
	res, err := tx.ExecContext(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now(),
		metadata = metadata || jsonb_build_object('output', $2::text)
		WHERE id = $1 AND state = 'running' AND attempt = $3`, job.ID, output, job.Attempt)
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot complete job %d", job.ID)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return backend.Errorf(backend.ECONFLICT, "job %d (attempt %d) is no longer running on this worker; its branches are left to the attempt that runs it", job.ID, job.Attempt)
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2)", DoneChannel, strconv.FormatInt(job.ID, 10)); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot announce job %d", job.ID)
	}
	return nil
}

// completeAnnounced records out as the job's output and completes the job
// in one transaction that also announces it on DoneChannel, so the queue
// waiting for it reads the result on the announcement instead of polling.
func completeAnnounced[T rv.JobArgs](ctx context.Context, pool *pgxpool.Pool, job *rv.Job[T], out any) error {
	if err := rv.RecordOutput(ctx, out); err != nil {
		return err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := rv.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", DoneChannel, strconv.FormatInt(job.ID, 10)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Timeout implements river.Worker.
func (w *branchesWorker) Timeout(*rv.Job[BranchesArgs]) time.Duration { return w.timeout }

// retrySoon retries a failed branch after a second: a branch fails for a
// reason outside it (a worker died, the database was away), not for its
// program, whose errors are results.
type retrySoon struct{}

func (retrySoon) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(time.Duration(min(len(job.Errors)+1, 10)) * time.Second)
}

// Options tune workers.
type Options struct {
	// Slots is how many jobs a worker runs at once (default 1).
	Slots int
	// JobTimeout bounds one job of branches, all of them (default 2 minutes).
	JobTimeout time.Duration
	// WorldRunTimeout bounds one world run job (default 1 hour); it must
	// stay under RescueAfter.
	WorldRunTimeout time.Duration
	// RescueAfter is how long a job whose worker vanished stays running
	// before River gives it to another worker (default 5 minutes; it must
	// exceed JobTimeout). A worker whose connection ended is found sooner:
	// see ReapEvery.
	RescueAfter time.Duration
	// ReapEvery is how often the worker looks for jobs of workers that
	// died (their liveness lock free) and puts them back (default 1 s).
	ReapEvery time.Duration
	// ID names the worker in River's tables and in the workers table
	// (default: host-pid-random).
	ID string
	// Recorder, when set, keeps the worker's row in the workers table:
	// heartbeat, jobs under way, jobs done.
	Recorder Recorder
	Log      *slog.Logger
}

func (o *Options) defaults() {
	if o.Slots <= 0 {
		o.Slots = 1
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = 2 * time.Minute
	}
	if o.WorldRunTimeout <= 0 {
		o.WorldRunTimeout = time.Hour
	}
	if o.RescueAfter <= max(o.JobTimeout, o.WorldRunTimeout) {
		o.RescueAfter = max(5*time.Minute, max(o.JobTimeout, o.WorldRunTimeout)+time.Second)
	}
	if o.ReapEvery <= 0 {
		o.ReapEvery = time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.ID == "" {
		o.ID = NewWorkerID()
	}
}

// NewWorkerID names a worker process: its host, its pid and a random tail
// (a pid is reused, on one host or in two containers).
func NewWorkerID() string {
	host, _ := os.Hostname()
	var b [3]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
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
	// ID names the worker in River's tables and the workers table.
	ID     string
	pool   *pgxpool.Pool
	client *rv.Client[pgx.Tx]
	heart  *heart
	live   *liveness
	reaper context.CancelFunc
	reaped chan struct{}
}

// ProcsForSlots sets the Go scheduler's processors of a worker process to
// its slots (at most the cores), unless GOMAXPROCS is set: the process only
// orchestrates its jobs (the queue, the database, JSON), while the branches'
// computation runs in world-program processes of their own, which keep
// every core. With one processor per slot its idle processors do not spin
// and steal between the job's exchanges, each a system call: with 2 workers
// of one slot on 2 cores, the 9x9 grid's branches cost the workers ~8%
// less CPU and ran ~5% faster (BenchmarkBranchesOnWorkers, 4 interleaved
// pairs); the 64x64 grid's did not change.
func ProcsForSlots(slots int) {
	if os.Getenv("GOMAXPROCS") != "" || slots < 1 {
		return
	}
	runtime.GOMAXPROCS(min(slots, runtime.NumCPU()))
}

// StartWorker joins the queue on the PostgreSQL database at url and works
// branch jobs through worlds until Stop.
func StartWorker(ctx context.Context, url string, worlds Brancher, opts Options) (*Worker, error) {
	opts.defaults()
	pool, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	live, err := holdLiveness(ctx, pool, opts.ID)
	if err != nil {
		pool.Close()
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot join the work queue")
	}
	var h *heart
	if opts.Recorder != nil {
		if h, err = startHeart(ctx, opts.Recorder, opts.ID, opts.Slots, opts.Log.Warn); err != nil {
			live.release()
			pool.Close()
			return nil, err
		}
	}
	workers := rv.NewWorkers()
	bw := &branchesWorker{worlds: worlds, pool: pool, timeout: opts.JobTimeout, heart: h}
	rv.AddWorker(workers, bw)
	if runner, ok := worlds.(Runner); ok {
		rv.AddWorker(workers, &worldRunWorker{worlds: runner, w: bw, timeout: opts.WorldRunTimeout})
	}
	client, err := rv.NewClient(riverpgxv5.New(pool), &rv.Config{
		ID:                   opts.ID,
		Queues:               map[string]rv.QueueConfig{QueueBranches: {MaxWorkers: opts.Slots}},
		Workers:              workers,
		JobTimeout:           opts.JobTimeout,
		RescueStuckJobsAfter: opts.RescueAfter,
		RetryPolicy:          retrySoon{},
		FetchCooldown:        2 * time.Millisecond,
		FetchPollInterval:    100 * time.Millisecond,
		Logger:               opts.Log,
	})
	if err == nil {
		err = client.Start(ctx)
	}
	if err != nil {
		h.close()
		live.release()
		pool.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot start a worker")
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	w := &Worker{ID: opts.ID, pool: pool, client: client, heart: h, live: live, reaper: stop, reaped: make(chan struct{})}
	go func() { defer close(w.reaped); reapLoop(rctx, pool, opts.ID, opts.ReapEvery, opts.Log.Warn) }()
	return w, nil
}

// Stop finishes the jobs under way (until ctx ends), leaves the queue and
// marks the worker's row stopped.
func (w *Worker) Stop(ctx context.Context) error {
	err := w.client.Stop(ctx)
	w.reaper()
	<-w.reaped
	w.heart.close()
	w.live.release()
	w.pool.Close()
	return err
}
