package postgres

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"ducklm/backend"
)

// RunLocks lets one process at a time drive a task run across every
// process on the database: a driver holds a session-level advisory lock
// named by its run (pg_try_advisory_lock) for as long as it drives, which
// the server releases when the process dies or its connection ends. The
// locks of one process are held on one connection of their own, apart from
// the pool (a pool's connection goes back to it, and every driver holding
// one could exhaust it). When that connection is lost, so are its locks:
// each holder is told (its lost function), and stops driving.
type RunLocks struct {
	url string

	mu     sync.Mutex
	conn   *pgx.Conn
	held   map[int64]func() // key → lost
	closed bool

	stop chan struct{}
	done chan struct{}
}

// runLockPing is how often a process holding run locks checks their
// connection.
const runLockPing = 2 * time.Second

// NewRunLocks returns the run locks of this process on the database at
// rawURL. Close releases them.
func NewRunLocks(rawURL string) *RunLocks {
	l := &RunLocks{url: rawURL, held: map[int64]func(){}, stop: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l
}

// RunLockKey names a run's lock: 64 bits of its id's hash, in a space of
// its own ("ducklm run "). In pg_locks it shows as an advisory lock with
// classid its high 32 bits, objid its low 32 bits and objsubid 1.
func RunLockKey(runID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("ducklm run " + runID))
	return int64(h.Sum64())
}

// Claim takes the run's lock unless a driver in this process or another
// holds it (ok false). lost is called once if the lock is lost while held.
func (l *RunLocks) Claim(ctx context.Context, runID string, lost func()) (release func(), ok bool, err error) {
	key := RunLockKey(runID)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, false, backend.Errorf(backend.EUNAVAILABLE, "ducklm is closing")
	}
	if _, mine := l.held[key]; mine {
		return nil, false, nil // session locks nest: this process's own driver holds it
	}
	if l.conn == nil {
		conn, err := pgx.Connect(ctx, l.url)
		if err != nil {
			return nil, false, backend.Wrap(err, backend.EUNAVAILABLE, "cannot reach the team's database (%s) to take a run's lock", Redact(l.url))
		}
		l.conn = conn
	}
	var got bool
	if err := l.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
		l.dropLocked()
		return nil, false, backend.Wrap(err, backend.EUNAVAILABLE, "cannot take run %s's lock on the team's database", runID)
	}
	if !got {
		return nil, false, nil
	}
	l.held[key] = lost
	conn := l.conn
	var once sync.Once
	return func() { once.Do(func() { l.release(conn, key) }) }, true, nil
}

// release gives a lock back on the connection that took it (a lost
// connection has released it already).
func (l *RunLocks) release(conn *pgx.Conn, key int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != conn {
		return
	}
	delete(l.held, key)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
		l.dropLocked()
	}
}

// dropLocked closes a failed connection: the server has released its
// locks (or will when it notices), so their holders are told. l.mu is held.
func (l *RunLocks) dropLocked() {
	if l.conn != nil {
		l.conn.Close(context.Background())
		l.conn = nil
	}
	for key, lost := range l.held {
		delete(l.held, key)
		go lost()
	}
}

// watch pings the connection while it holds locks, so a lost connection is
// noticed within runLockPing and its holders stop driving.
func (l *RunLocks) watch() {
	defer close(l.done)
	t := time.NewTicker(runLockPing)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if l.conn != nil && len(l.held) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := l.conn.Ping(ctx); err != nil {
				l.dropLocked()
			}
			cancel()
		}
		l.mu.Unlock()
	}
}

// Close releases every lock (by closing their connection) and stops.
func (l *RunLocks) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	if l.conn != nil {
		l.conn.Close(context.Background())
		l.conn = nil
	}
	l.held = map[int64]func(){}
	l.mu.Unlock()
	close(l.stop)
	<-l.done
}
