package river

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"

	"ducklm/backend"
)

// A worker holds a session advisory lock named by its id for as long as it
// lives (its liveness lock). PostgreSQL releases it the moment the worker's
// connection ends, so a SIGKILLed worker, or one whose machine vanished
// once TCP notices, frees it at once; River's own rescue of stuck jobs
// waits RescueAfter and runs every 30 s. Every worker reaps: a job running
// under a worker whose liveness lock is free goes back to the queue at
// once, with an error recorded, and another worker runs it (its branches
// are keyed, so what the dead worker committed is returned, not redone).
//
// A worker that lost its connection but lives on loses its lock too: its
// job may then run twice at once, which keyed branches make harmless.

// livenessKey is the advisory lock key of worker id.
func livenessKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte("ducklm worker\x00" + id))
	return int64(h.Sum64())
}

// liveness holds this worker's lock on a connection of its own.
type liveness struct {
	conn *pgxpool.Conn
}

func holdLiveness(ctx context.Context, pool *pgxpool.Pool, id string) (*liveness, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", livenessKey(id)); err != nil {
		conn.Release()
		return nil, err
	}
	return &liveness{conn: conn}, nil
}

func (l *liveness) release() {
	if l == nil {
		return
	}
	// Closing the connection drops every lock it holds.
	l.conn.Conn().Close(context.Background())
	l.conn.Release()
}

// reap returns to the queue the running jobs of workers that died; it
// returns how many.
func reap(ctx context.Context, pool *pgxpool.Pool, self string) (int, error) {
	rows, err := pool.Query(ctx, `SELECT id, attempt, attempted_by[cardinality(attempted_by)] FROM river_job
		WHERE state = 'running' AND queue = $1 AND cardinality(attempted_by) > 0`, QueueBranches)
	if err != nil {
		return 0, err
	}
	type running struct {
		id      int64
		attempt int
		by      string
	}
	var jobs []running
	for rows.Next() {
		var r running
		if err := rows.Scan(&r.id, &r.attempt, &r.by); err != nil {
			rows.Close()
			return 0, err
		}
		if r.by != self {
			jobs = append(jobs, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	dead := map[string]bool{}
	n := 0
	for _, j := range jobs {
		isDead, seen := dead[j.by]
		if !seen {
			if isDead, err = lockIsFree(ctx, pool, j.by); err != nil {
				return n, err
			}
			dead[j.by] = isDead
		}
		if !isDead {
			continue
		}
		e, _ := json.Marshal(rivertype.AttemptError{At: time.Now().UTC(), Attempt: j.attempt,
			Error: "worker " + j.by + " died during the job (its connection to the database ended); the job went back to the queue"})
		tag, err := pool.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now(),
			errors = array_append(errors, $3::jsonb) WHERE id = $1 AND state = 'running' AND attempted_by[cardinality(attempted_by)] = $2`,
			j.id, j.by, string(e))
		if err != nil {
			return n, err
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}

// lockIsFree reports whether worker id's liveness lock is free: nobody
// holds it, so the worker is gone.
func lockIsFree(ctx context.Context, pool *pgxpool.Pool, id string) (bool, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", livenessKey(id)).Scan(&got); err != nil {
		return false, err
	}
	if got {
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", livenessKey(id)); err != nil {
			conn.Conn().Close(ctx) // never keep a dead worker's lock on a pooled connection
		}
	}
	return got, nil
}

// reapLoop reaps every interval until ctx ends.
func reapLoop(ctx context.Context, pool *pgxpool.Pool, self string, every time.Duration, log func(string, ...any)) {
	for backend.Sleep(ctx, every) {
		if n, err := reap(ctx, pool, self); err != nil && ctx.Err() == nil {
			log("reaping the jobs of dead workers failed", "err", err)
		} else if n > 0 {
			log("jobs of dead workers went back to the queue", "jobs", n)
		}
	}
}
