package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"ducklm/backend"
)

var _ backend.Ledger = (*Ledger)(nil)

// Ledger is the SQLite event ledger.
type Ledger struct {
	db *DB

	mu       sync.RWMutex
	onCommit []func([]backend.Event)

	// now is the clock for RecordedAt; tests may replace it.
	now func() time.Time
}

// NewLedger returns the ledger stored in db.
func NewLedger(db *DB) *Ledger {
	return &Ledger{db: db, now: time.Now}
}

// OnCommit registers fn to receive every batch of events after its
// transaction committed, in commit order. fn must not block: the event bus
// is the intended subscriber.
func (l *Ledger) OnCommit(fn func([]backend.Event)) {
	l.mu.Lock()
	l.onCommit = append(l.onCommit, fn)
	l.mu.Unlock()
}

const eventColumns = "pos, id, stream_id, seq, type, schema_version, payload, reality, causation_id, correlation_id, recorded_at, parent_time, deliberation_index, world_local_time"

// insertChunk bounds rows per INSERT: 13 parameters a row stays well under
// SQLite's variable limit and keeps statements cacheable.
const insertChunk = 32

// Append implements backend.Ledger.
func (l *Ledger) Append(ctx context.Context, stream string, expect int64, events ...backend.Event) ([]backend.Event, error) {
	return l.AppendWith(ctx, stream, expect, events, nil)
}

// Then runs inside an append's transaction after the events are inserted,
// so that what the events record (a run's clock, a checkpoint row) commits
// or rolls back with them. gtx is a GORM handle on the same transaction.
type Then func(gtx *gorm.DB, stored []backend.Event) error

// AppendWith is Append with more writes in the same transaction. then is
// skipped when every event was already stored (a retry).
func (l *Ledger) AppendWith(ctx context.Context, stream string, expect int64, events []backend.Event, then Then) ([]backend.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	prepared, reality, err := prepareEvents(stream, events)
	if err != nil {
		return nil, err
	}

	// Publishing under the write lock hands batches to subscribers in commit
	// order; publish never blocks (the bus only queues or flags a catch-up).
	l.db.writeMu.Lock()
	defer l.db.writeMu.Unlock()
	stored, err := l.appendLocked(ctx, stream, reality, expect, prepared, then)
	if err != nil {
		return nil, err
	}
	if len(stored) > 0 {
		l.publish(stored)
	}
	return stored, nil
}

// Flush implements backend.Flusher: it makes durable every commit this
// store made without a sync of its own (backend.DeferSync). A synced commit
// since has done that already, and then it writes nothing; else it commits
// the least write that syncs (Dialect.Flush) on stream, which exists.
func (l *Ledger) Flush(ctx context.Context, stream string) error {
	if backend.SyncDeferred(ctx) {
		return backend.Errorf(backend.EINTERNAL, "a flush of stream %s was asked not to sync", stream)
	}
	err := l.db.write(ctx, func(gtx *gorm.DB) error {
		tx, ok := sqlTx(gtx)
		if !ok {
			return backend.Errorf(backend.EINTERNAL, "the ledger was synced outside a transaction")
		}
		if l.db.unsynced.Load() == 0 { // read under the write lock: exact
			return errNothingDeferred
		}
		if err := l.db.dialect.Flush(ctx, tx, stream); err != nil {
			return backend.Wrap(err, backend.EINTERNAL, "cannot sync the ledger")
		}
		return nil
	})
	if errors.Is(err, errNothingDeferred) {
		return nil
	}
	if err == nil {
		l.db.flushed.Add(1)
	}
	return err
}

// errNothingDeferred ends a flush that finds nothing to sync, before its
// transaction commits (and counts as a synced one).
var errNothingDeferred = errors.New("nothing deferred")

// errRetrySlow makes the fast path hand over to the path that compares
// caller-chosen ids with what is stored.
var errRetrySlow = errors.New("retry on slow path")

func (l *Ledger) appendLocked(ctx context.Context, stream string, reality backend.Reality, expect int64, events []backend.Event, then Then) ([]backend.Event, error) {
	stored, err := l.tryAppend(ctx, stream, reality, expect, events, then)
	if !errors.Is(err, errRetrySlow) {
		return stored, err
	}
	// Some ids may already be stored: a retry of an append that committed.
	existing, err := l.getMany(ctx, events)
	if err != nil {
		return nil, err
	}
	var fresh []backend.Event
	for _, e := range events {
		old, ok := existing[e.ID]
		if !ok {
			fresh = append(fresh, e)
			continue
		}
		if !sameContent(old, e) {
			return nil, backend.Errorf(backend.ECONFLICT,
				"event %s is already recorded with different content; an event id names one fact forever", e.ID)
		}
	}
	if len(fresh) == 0 {
		return nil, nil // a retry of a committed append: nothing new to publish
	}
	if len(fresh) < len(events) {
		expect = backend.ExpectAny // the stored part already moved the head
	}
	stored, err = l.tryAppend(ctx, stream, reality, expect, fresh, then)
	if errors.Is(err, errRetrySlow) {
		head, herr := l.Head(ctx, stream)
		if herr != nil {
			return nil, herr
		}
		return nil, backend.Errorf(backend.ECONFLICT,
			"stream %s is at seq %d, but the append expected seq %d", stream, head, expect)
	}
	return stored, err
}

// tryAppend runs one append transaction. It returns errRetrySlow when the
// expected head does not match or an id is already taken.
func (l *Ledger) tryAppend(ctx context.Context, stream string, reality backend.Reality, expect int64, events []backend.Event, then Then) ([]backend.Event, error) {
	tx, done, err := l.db.beginTx(ctx)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot start a ledger transaction")
	}
	defer done()
	defer tx.Rollback()
	if err := l.db.lockLedger(ctx, tx); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot lock the ledger")
	}

	// The stream's head and the ledger's position in one statement: the
	// driver parses every statement it runs, so fewer is cheaper.
	var head int64
	var streamReality string
	lastPos := int64(-1)
	err = l.db.txQueryRow(ctx, tx, "SELECT head_seq, reality, (SELECT coalesce(max(pos), 0) FROM events) FROM streams WHERE id = ?", stream).
		Scan(&head, &streamReality, &lastPos)
	now := l.now()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := l.db.txExec(ctx, tx, "INSERT INTO streams (id, reality, head_seq, created_at) VALUES (?, ?, 0, ?)",
			stream, string(reality), now.UnixMicro()); err != nil {
			return nil, backend.Wrap(err, backend.EINTERNAL, "cannot create stream %s", stream)
		}
	case err != nil:
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot read stream %s", stream)
	case backend.Reality(streamReality) != reality:
		return nil, backend.Errorf(backend.EINVALID,
			"stream %s records %s events; the ledger refuses a %s event there (a world-local event can never become an external-real fact)",
			stream, streamReality, reality)
	}
	if expect != backend.ExpectAny && expect != head {
		return nil, errRetrySlow
	}

	if lastPos < 0 { // a new stream
		if err := l.db.txQueryRow(ctx, tx, "SELECT coalesce(max(pos), 0) FROM events").Scan(&lastPos); err != nil {
			return nil, backend.Wrap(err, backend.EINTERNAL, "cannot read the ledger position")
		}
	}
	recorded := now.UTC().Truncate(time.Microsecond)
	out := make([]backend.Event, len(events))
	for i, e := range events {
		e.Seq = head + int64(i) + 1
		e.Pos = lastPos + int64(i) + 1
		e.RecordedAt = recorded
		out[i] = e
	}
	for start := 0; start < len(out); start += insertChunk {
		end := min(start+insertChunk, len(out))
		if err := insertEvents(ctx, l.db, tx, out[start:end]); err != nil {
			if l.db.isUniqueViolation(err, "events", "id") {
				return nil, errRetrySlow
			}
			return nil, backend.Wrap(err, backend.EINTERNAL, "cannot append to stream %s", stream)
		}
	}
	if _, err := l.db.txExec(ctx, tx, "UPDATE streams SET head_seq = ? WHERE id = ?", head+int64(len(out)), stream); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot advance stream %s", stream)
	}
	if then != nil {
		if err := then(l.db.onTx(tx), out); err != nil {
			return nil, err
		}
	}
	if err := l.db.notifyCommit(ctx, tx, out[len(out)-1].Pos); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot announce the append to stream %s", stream)
	}
	if err := tx.Commit(); err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot commit to stream %s", stream)
	}
	l.db.committed(ctx)
	return out, nil
}

// insertSQL caches the multi-row INSERT text per row count.
var insertSQL sync.Map

// insertEvents is the one INSERT of events (appends, new streams, imports):
// each payload is stored as payloadValue says, and events keep their JSON.
func insertEvents(ctx context.Context, db *DB, tx *sql.Tx, events []backend.Event) error {
	n := len(events)
	q, ok := insertSQL.Load(n)
	if !ok {
		var b strings.Builder
		b.WriteString("INSERT INTO events (" + eventColumns + ") VALUES ")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
		}
		q, _ = insertSQL.LoadOrStore(n, b.String())
	}
	args := make([]any, 0, n*14)
	for _, e := range events {
		args = append(args, e.Pos, e.ID, e.Stream, e.Seq, e.Type, e.SchemaVersion, payloadValue(db.dialect, e.Reality, e.Payload), string(e.Reality),
			e.CausationID, e.CorrelationID, e.RecordedAt.UnixMicro(), e.ParentTime, e.DeliberationIndex, e.WorldLocalTime)
	}
	_, err := db.txExec(ctx, tx, q.(string), args...)
	return err
}

// prepareEvents validates a batch and fills in what the caller may omit.
func prepareEvents(stream string, events []backend.Event) ([]backend.Event, backend.Reality, error) {
	if stream == "" {
		return nil, "", backend.Errorf(backend.EINVALID, "an event needs a stream")
	}
	if _, err := backend.KindOf(stream); err != nil {
		return nil, "", backend.Wrap(err, backend.EINVALID, "stream %q is not a valid id", stream)
	}
	out := make([]backend.Event, len(events))
	reality := events[0].Reality
	seen := make(map[string]struct{}, len(events))
	for i, e := range events {
		if e.Stream != "" && e.Stream != stream {
			return nil, "", backend.Errorf(backend.EINVALID, "event %d names stream %s but is appended to %s", i, e.Stream, stream)
		}
		e.Stream = stream
		if e.ID == "" {
			e.ID = backend.NewID(backend.KindEvent)
		} else if err := backend.CheckID(e.ID, backend.KindEvent); err != nil {
			return nil, "", err
		}
		if _, dup := seen[e.ID]; dup {
			return nil, "", backend.Errorf(backend.EINVALID, "event id %s appears twice in one append", e.ID)
		}
		seen[e.ID] = struct{}{}
		if e.Type == "" {
			return nil, "", backend.Errorf(backend.EINVALID, "event %d has no type", i)
		}
		if !e.Reality.Valid() {
			return nil, "", backend.Errorf(backend.EINVALID, "event %d has reality %q; it must be external_real or world_local", i, e.Reality)
		}
		if e.Reality != reality {
			return nil, "", backend.Errorf(backend.EINVALID, "one append mixes %s and %s events; a stream has one reality", reality, e.Reality)
		}
		if e.SchemaVersion == 0 {
			e.SchemaVersion = backend.EventSchemaVersion
		}
		if e.SchemaVersion < 0 || e.SchemaVersion > backend.EventSchemaVersion {
			return nil, "", backend.Errorf(backend.EINVALID, "event %d has schema version %d; this ducklm writes versions up to %d", i, e.SchemaVersion, backend.EventSchemaVersion)
		}
		if len(e.Payload) == 0 {
			e.Payload = json.RawMessage("{}")
		} else {
			var buf bytes.Buffer
			if err := json.Compact(&buf, e.Payload); err != nil {
				return nil, "", backend.Errorf(backend.EINVALID, "event %d (%s) has a payload that is not valid JSON", i, e.Type)
			}
			e.Payload = buf.Bytes()
		}
		if e.ParentTime < 0 || e.DeliberationIndex < 0 || e.WorldLocalTime < 0 {
			return nil, "", backend.Errorf(backend.EINVALID, "event %d has a negative clock", i)
		}
		e.Seq, e.Pos, e.RecordedAt = 0, 0, time.Time{}
		out[i] = e
	}
	return out, reality, nil
}

// sameContent reports whether a stored event records the same fact as a new
// one; seq, pos and recorded time are the ledger's, not the caller's.
func sameContent(stored, e backend.Event) bool {
	return stored.Stream == e.Stream && stored.Type == e.Type && stored.SchemaVersion == e.SchemaVersion &&
		bytes.Equal(stored.Payload, e.Payload) && stored.Reality == e.Reality &&
		stored.CausationID == e.CausationID && stored.CorrelationID == e.CorrelationID &&
		stored.ParentTime == e.ParentTime && stored.DeliberationIndex == e.DeliberationIndex &&
		stored.WorldLocalTime == e.WorldLocalTime
}

func (l *Ledger) publish(events []backend.Event) {
	l.mu.RLock()
	fns := l.onCommit
	l.mu.RUnlock()
	for _, fn := range fns {
		fn(events)
	}
}
