package store

import (
	"context"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"ducklm/backend"
)

// AppendNewStreams appends each batch of events to a stream of its own that
// does not exist yet (its events take seqs 1..n), all of them in ONE
// transaction with first's writes: the branches of a queue job recorded in
// one commit, under the ledger's lock once. streams[i] names the stream of
// batches[i]. Nothing is written unless everything is: if a stream or an
// event id is already stored (a retry of a commit that happened) the whole
// append fails, and the caller records the batches one at a time, which
// tells a retry from a conflict.
//
// The lock is taken last: the streams and first's writes (which need no
// ledger position: a new stream's seqs are known) go before it, so the lock
// is held for the position, the events' INSERT, the announcement and the
// commit only. With two workers committing jobs, a lock held for a job's
// every statement (13 round trips) had one waiting for the other a quarter
// of the time.
func (l *Ledger) AppendNewStreams(ctx context.Context, streams []string, batches [][]backend.Event, first func(gtx *gorm.DB) error) ([][]backend.Event, error) {
	if len(streams) != len(batches) {
		return nil, backend.Errorf(backend.EINVALID, "%d streams for %d batches of events", len(streams), len(batches))
	}
	if len(batches) == 0 {
		return nil, nil
	}
	prepared := make([][]backend.Event, len(batches))
	realities := make([]backend.Reality, len(batches))
	seen := make(map[string]struct{}, len(batches))
	for i, events := range batches {
		if len(events) == 0 {
			return nil, backend.Errorf(backend.EINVALID, "stream %s is given no events", streams[i])
		}
		if _, dup := seen[streams[i]]; dup {
			return nil, backend.Errorf(backend.EINVALID, "stream %s appears twice in one append", streams[i])
		}
		seen[streams[i]] = struct{}{}
		p, reality, err := prepareEvents(streams[i], events)
		if err != nil {
			return nil, err
		}
		prepared[i], realities[i] = p, reality
	}

	l.db.writeMu.Lock()
	defer l.db.writeMu.Unlock()
	stored, err := l.appendNewLocked(ctx, streams, realities, prepared, first)
	if err != nil {
		return nil, err
	}
	for _, s := range stored {
		l.publish(s)
	}
	return stored, nil
}

// streamsSQL caches the multi-row INSERT of new streams per row count.
var streamsSQL sync.Map

// newStreamsChunk bounds the rows of one INSERT of events into new streams:
// a job's 8 branches (4-5 events each) in one statement, 14 parameters a
// row well under both databases' limits.
const newStreamsChunk = 64

func (l *Ledger) appendNewLocked(ctx context.Context, streams []string, realities []backend.Reality, batches [][]backend.Event, first func(gtx *gorm.DB) error) ([][]backend.Event, error) {
	tx, done, err := l.db.beginTx(ctx)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot start a ledger transaction")
	}
	defer done()
	defer tx.Rollback()
	now := l.now()
	recorded := now.UTC().Truncate(time.Microsecond)

	n := len(streams)
	q, ok := streamsSQL.Load(n)
	if !ok {
		q, _ = streamsSQL.LoadOrStore(n, "INSERT INTO streams (id, reality, head_seq, created_at) VALUES "+
			strings.TrimSuffix(strings.Repeat("(?,?,?,?),", n), ","))
	}
	args := make([]any, 0, 4*n)
	for i, s := range streams {
		args = append(args, s, string(realities[i]), int64(len(batches[i])), now.UnixMicro())
	}
	if _, err := l.db.txExec(ctx, tx, q.(string), args...); err != nil {
		return nil, backend.Wrap(err, backend.ECONFLICT, "cannot create %d new streams at once (one may exist already)", n)
	}
	if first != nil {
		if err := first(l.db.onTx(tx)); err != nil {
			return nil, err
		}
	}

	if err := l.db.lockLedger(ctx, tx); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot lock the ledger")
	}
	var lastPos int64
	if err := l.db.txQueryRow(ctx, tx, "SELECT coalesce(max(pos), 0) FROM events").Scan(&lastPos); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot read the ledger position")
	}

	out := make([][]backend.Event, len(batches))
	var all []backend.Event
	pos := lastPos
	for i, events := range batches {
		out[i] = make([]backend.Event, len(events))
		for j, e := range events {
			pos++
			e.Seq, e.Pos, e.RecordedAt = int64(j)+1, pos, recorded
			out[i][j] = e
		}
		all = append(all, out[i]...)
	}
	for start := 0; start < len(all); start += newStreamsChunk {
		end := min(start+newStreamsChunk, len(all))
		if err := insertEvents(ctx, l.db, tx, all[start:end]); err != nil {
			return nil, backend.Wrap(err, backend.ECONFLICT, "cannot append to %d new streams at once (an event may be recorded already)", n)
		}
	}
	if err := l.db.notifyCommit(ctx, tx, pos); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot announce the append to %d streams", n)
	}
	if err := tx.Commit(); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot commit to %d new streams", n)
	}
	l.db.committed(ctx)
	return out, nil
}
