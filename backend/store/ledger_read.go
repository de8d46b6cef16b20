package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"ducklm/backend"
)

// Head implements backend.Ledger.
func (l *Ledger) Head(ctx context.Context, stream string) (int64, error) {
	var head int64
	err := l.db.SQL.QueryRowContext(ctx, l.db.Rebind("SELECT head_seq FROM streams WHERE id = ?"), stream).Scan(&head)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, backend.Wrap(err, backend.EINTERNAL, "cannot read stream %s", stream)
	}
	return head, nil
}

// Get implements backend.Ledger.
func (l *Ledger) Get(ctx context.Context, id string) (backend.Event, error) {
	if err := backend.CheckID(id, backend.KindEvent); err != nil {
		return backend.Event{}, err
	}
	events, err := l.query(ctx, "SELECT "+eventColumns+" FROM events WHERE id = ?", 1, id)
	if err != nil {
		return backend.Event{}, err
	}
	if len(events) == 0 {
		return backend.Event{}, backend.Errorf(backend.ENOTFOUND, "there is no event %s", id)
	}
	return events[0], nil
}

// getMany returns the stored events among the ids of events.
func (l *Ledger) getMany(ctx context.Context, events []backend.Event) (map[string]backend.Event, error) {
	out := make(map[string]backend.Event, len(events))
	for start := 0; start < len(events); start += insertChunk {
		end := min(start+insertChunk, len(events))
		args := make([]any, 0, end-start)
		for _, e := range events[start:end] {
			args = append(args, e.ID)
		}
		q := "SELECT " + eventColumns + " FROM events WHERE id IN (?" + strings.Repeat(",?", len(args)-1) + ")"
		found, err := l.query(ctx, q, len(args), args...)
		if err != nil {
			return nil, err
		}
		for _, e := range found {
			out[e.ID] = e
		}
	}
	return out, nil
}

// Query implements backend.Ledger.
func (l *Ledger) Query(ctx context.Context, q backend.EventQuery) ([]backend.Event, error) {
	where, args, err := queryWhere(q)
	if err != nil {
		return nil, err
	}
	stmt := "SELECT " + eventColumns + " FROM events"
	if len(where) > 0 {
		stmt += " WHERE " + strings.Join(where, " AND ")
	}
	stmt += orderAndLimit(q, &args)
	return l.query(ctx, stmt, l.sizeHint(ctx, q), args...)
}

// queryWhere is the conditions of q and their arguments.
func queryWhere(q backend.EventQuery) ([]string, []any, error) {
	var where []string
	var args []any
	if q.Stream != "" {
		where = append(where, "stream_id = ?")
		args = append(args, q.Stream)
		if q.FromSeq > 0 {
			where = append(where, "seq >= ?")
			args = append(args, q.FromSeq)
		}
		if q.ToSeq > 0 {
			where = append(where, "seq <= ?")
			args = append(args, q.ToSeq)
		}
	} else if q.FromSeq > 0 || q.ToSeq > 0 {
		return nil, nil, backend.Errorf(backend.EINVALID, "a seq range needs a stream")
	}
	if len(q.Types) > 0 {
		where = append(where, "type IN (?"+strings.Repeat(",?", len(q.Types)-1)+")")
		for _, t := range q.Types {
			args = append(args, t)
		}
	}
	if q.Reality != "" {
		if !q.Reality.Valid() {
			return nil, nil, backend.Errorf(backend.EINVALID, "reality %q must be external_real or world_local", q.Reality)
		}
		where = append(where, "reality = ?")
		args = append(args, string(q.Reality))
	}
	return where, args, nil
}

// orderAndLimit is q's ORDER BY and LIMIT clauses; the limit joins args.
func orderAndLimit(q backend.EventQuery, args *[]any) string {
	s := " ORDER BY pos"
	if q.Stream != "" {
		s = " ORDER BY seq"
	}
	if q.Limit > 0 {
		s += " LIMIT ?"
		*args = append(*args, q.Limit)
	}
	return s
}

// TypeCounts counts the events of stream with seq ≤ toSeq by type. It reads
// the (stream, seq) range, never the whole ledger.
func (l *Ledger) TypeCounts(ctx context.Context, stream string, toSeq int64) (map[string]int64, error) {
	rows, err := l.db.SQL.QueryContext(ctx, l.db.Rebind("SELECT type, count(*) FROM events WHERE stream_id = ? AND seq <= ? GROUP BY type"), stream, toSeq)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot count the events of %s", stream)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, backend.Wrap(err, backend.EINTERNAL, "cannot count the events of %s", stream)
		}
		out[t] = n
	}
	if err := rows.Err(); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot count the events of %s", stream)
	}
	return out, nil
}

// maxPrealloc bounds how many events a read allocates room for up front.
const maxPrealloc = 1 << 20

// sizeHint estimates how many events a query returns, so a long read
// allocates its slice once instead of growing (and copying) it repeatedly.
func (l *Ledger) sizeHint(ctx context.Context, q backend.EventQuery) int {
	if q.Stream == "" || len(q.Types) > 0 || q.Reality != "" {
		return min(max(q.Limit, 0), 4096)
	}
	to := q.ToSeq
	if to <= 0 {
		head, err := l.Head(ctx, q.Stream)
		if err != nil {
			return 64
		}
		to = head
	}
	n := to - max(q.FromSeq, 1) + 1
	if q.Limit > 0 {
		n = min(n, int64(q.Limit))
	}
	return int(min(max(n, 0), maxPrealloc))
}

// Page implements backend.Ledger.
func (l *Ledger) Page(ctx context.Context, stream string, before int64, limit int) (backend.EventPage, error) {
	if limit <= 0 || limit > 10000 {
		return backend.EventPage{}, backend.Errorf(backend.EINVALID, "a page holds 1 to 10000 events, not %d", limit)
	}
	stmt := "SELECT " + eventColumns + " FROM events WHERE stream_id = ?"
	args := []any{stream}
	if before > 0 {
		stmt += " AND seq < ?"
		args = append(args, before)
	}
	stmt += " ORDER BY seq DESC LIMIT ?"
	args = append(args, limit)
	events, err := l.query(ctx, stmt, limit, args...)
	if err != nil {
		return backend.EventPage{}, err
	}
	page := backend.EventPage{Events: events}
	if n := len(events); n == limit && events[n-1].Seq > 1 {
		page.Next = events[n-1].Seq
	}
	return page, nil
}

// Since implements backend.Ledger.
func (l *Ledger) Since(ctx context.Context, after int64, limit int) ([]backend.Event, error) {
	if limit <= 0 {
		return nil, backend.Errorf(backend.EINVALID, "a limit must be positive, not %d", limit)
	}
	return l.query(ctx, "SELECT "+eventColumns+" FROM events WHERE pos > ? ORDER BY pos LIMIT ?", limit, after, limit)
}

// Recent returns up to limit events across all streams, newest first.
func (l *Ledger) Recent(ctx context.Context, limit int) ([]backend.Event, error) {
	return l.query(ctx, "SELECT "+eventColumns+" FROM events ORDER BY pos DESC LIMIT ?", limit, limit)
}

// Count returns the number of events in the ledger.
func (l *Ledger) Count(ctx context.Context) (int64, error) {
	var n int64
	// max(pos) equals the count because events are never deleted, and it is
	// O(1) where count(*) scans a million rows.
	if err := l.db.SQL.QueryRowContext(ctx, l.db.Rebind("SELECT coalesce(max(pos), 0) FROM events")).Scan(&n); err != nil {
		return 0, backend.Wrap(err, backend.EINTERNAL, "cannot count events")
	}
	return n, nil
}

func (l *Ledger) query(ctx context.Context, stmt string, sizeHint int, args ...any) ([]backend.Event, error) {
	rows, err := l.db.SQL.QueryContext(ctx, l.db.Rebind(stmt), args...)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot read events")
	}
	defer rows.Close()
	if sizeHint <= 0 {
		sizeHint = 64
	}
	out := make([]backend.Event, 0, sizeHint)
	for rows.Next() {
		var e backend.Event
		var payload []byte
		var reality string
		var recorded int64
		if err := rows.Scan(&e.Pos, &e.ID, &e.Stream, &e.Seq, &e.Type, &e.SchemaVersion, &payload, &reality,
			&e.CausationID, &e.CorrelationID, &recorded, &e.ParentTime, &e.DeliberationIndex, &e.WorldLocalTime); err != nil {
			return nil, backend.Wrap(err, backend.EINTERNAL, "cannot read events")
		}
		if e.Payload, err = readPayload(payload); err != nil {
			return nil, backend.Wrap(err, backend.ErrorCode(err), "cannot read event %s", e.ID)
		}
		e.Reality = backend.Reality(reality)
		e.RecordedAt = time.UnixMicro(recorded).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot read events")
	}
	return out, nil
}
