package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"time"

	"gorm.io/gorm"

	"ducklm/backend"
)

// ImportTx is one import transaction: facts recorded elsewhere (a bundle)
// are written with their own ids, seqs, recorded times and clocks. Only the
// global position is local and assigned here. Each Put is idempotent: what
// is stored already with the same content is skipped, and an id stored with
// other content is an ECONFLICT that rolls the whole import back.
type ImportTx struct {
	ctx     context.Context
	db      *DB
	tx      *sql.Tx
	g       *gorm.DB
	now     time.Time
	lastPos int64 // -1 until read
	streams map[string]*importStream
	tails   map[string]backend.Event // the last event added per stream, published after commit
}

type importStream struct {
	head    int64
	reality backend.Reality
	exists  bool
}

// Import runs fn in one write transaction, serialised with appends. Foreign
// keys are checked at commit, so fn may write records in any order; a
// dangling reference then fails the commit and nothing is written. After
// the commit the last added event of each stream is published: a subscriber
// that sees the gap before it reads the rest from the ledger.
func (l *Ledger) Import(ctx context.Context, fn func(tx *ImportTx) error) error {
	l.db.writeMu.Lock()
	defer l.db.writeMu.Unlock()
	tx, err := l.db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot start the import transaction")
	}
	defer tx.Rollback()
	if err := l.db.lockLedger(ctx, tx); err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot start the import transaction")
	}
	if _, err := tx.ExecContext(ctx, l.db.dialect.DeferForeignKeys); err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot start the import transaction")
	}
	it := &ImportTx{ctx: ctx, db: l.db, tx: tx, g: l.db.onTx(tx).WithContext(ctx), now: l.now(), lastPos: -1,
		streams: map[string]*importStream{}, tails: map[string]backend.Event{}}
	if err := fn(it); err != nil {
		return err
	}
	if len(it.tails) > 0 {
		if err := l.db.notifyCommit(ctx, tx, it.lastPos); err != nil {
			return backend.Wrap(err, backend.EINTERNAL, "cannot announce the import")
		}
	}
	if err := l.db.dialect.CheckForeignKeys(ctx, tx); err != nil {
		if l.db.dialect.ForeignKeyViolation(err) {
			return backend.Wrap(err, backend.ECORRUPT, "the import refers to a world, run or checkpoint that is neither in it nor stored here")
		}
		return backend.Wrap(err, backend.EINTERNAL, "cannot check the import's references")
	}
	if err := tx.Commit(); err != nil {
		if l.db.dialect.ForeignKeyViolation(err) {
			return backend.Wrap(err, backend.ECORRUPT, "the import refers to a world, run or checkpoint that is neither in it nor stored here")
		}
		return backend.Wrap(err, backend.EINTERNAL, "cannot commit the import")
	}
	if len(it.tails) > 0 {
		tails := make([]backend.Event, 0, len(it.tails))
		for _, e := range it.tails {
			tails = append(tails, e)
		}
		sort.Slice(tails, func(i, j int) bool { return tails[i].Pos < tails[j].Pos })
		l.publish(tails)
	}
	return nil
}

// PutSpec stores a world spec unless the same spec is stored; it reports
// whether it added it.
func (t *ImportTx) PutSpec(s backend.WorldSpec) (bool, error) {
	want := specRow(s)
	want.Params = compactText(want.Params)
	var have WorldSpecRow
	err := t.g.Where("id = ?", s.ID).Take(&have).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return true, dbErr(t.g.Create(&want).Error, "store world "+s.ID)
	}
	if err != nil {
		return false, dbErr(err, "read world "+s.ID)
	}
	have.Params = compactText(have.Params)
	if !reflect.DeepEqual(have, want) {
		return false, backend.Errorf(backend.ECONFLICT, "world %s is already stored here with different content; an id names one world forever", s.ID)
	}
	return false, nil
}

// PutRun stores a run unless it is stored. A stored run must agree on what
// never changes (world, base run and seq, clocks at the start, creation
// time). Its progress (status, clock, latest checkpoint, error) is taken
// from r when head, r's stream head in the import, is past the stored head:
// the run moved on where it was exported. It reports whether it added or
// updated the run.
func (t *ImportTx) PutRun(r backend.WorldRun, head int64) (added, updated bool, err error) {
	want := runRow(r)
	var have WorldRunRow
	err = t.g.Where("id = ?", r.ID).Take(&have).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return true, false, dbErr(t.g.Create(&want).Error, "store run "+r.ID)
	}
	if err != nil {
		return false, false, dbErr(err, "read run "+r.ID)
	}
	if have.WorldID != want.WorldID || !reflect.DeepEqual(have.BaseRunID, want.BaseRunID) || have.BaseSeq != want.BaseSeq ||
		have.ParentTime != want.ParentTime || have.DeliberationIndex != want.DeliberationIndex || have.CreatedAt != want.CreatedAt {
		return false, false, backend.Errorf(backend.ECONFLICT, "run %s is already stored here with a different origin (world, base run or start); an id names one run forever", r.ID)
	}
	st, err := t.stream(r.ID)
	if err != nil {
		return false, false, err
	}
	if head <= st.head {
		return false, false, nil
	}
	res := t.g.Model(&WorldRunRow{}).Where("id = ?", r.ID).Updates(map[string]any{
		"status": want.Status, "world_local_time": want.WorldLocalTime, "latest_checkpoint_id": want.LatestCheckpointID,
		"error": want.Error, "updated_at": want.UpdatedAt,
	})
	if res.Error != nil {
		return false, false, dbErr(res.Error, "update run "+r.ID)
	}
	return false, true, nil
}

// PutCheckpoint stores a checkpoint record unless the same one is stored.
func (t *ImportTx) PutCheckpoint(c backend.Checkpoint) (bool, error) {
	want := checkpointRow(c)
	var have CheckpointRow
	err := t.g.Where("id = ?", c.ID).Take(&have).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return true, dbErr(t.g.Create(&want).Error, "store checkpoint "+c.ID)
	}
	if err != nil {
		return false, dbErr(err, "read checkpoint "+c.ID)
	}
	if have != want {
		return false, backend.Errorf(backend.ECONFLICT, "checkpoint %s is already stored here with different content; an id names one checkpoint forever", c.ID)
	}
	return false, nil
}

// PutFork stores a fork record unless the same one is stored. A world has
// at most one fork record.
func (t *ImportTx) PutFork(f backend.Fork) (bool, error) {
	want := forkRow(f)
	want.Delta = compactText(want.Delta)
	var have ForkRow
	err := t.g.Where("id = ? OR child_world_id = ?", f.ID, f.ChildWorldID).Take(&have).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return true, dbErr(t.g.Create(&want).Error, "store fork "+f.ID)
	}
	if err != nil {
		return false, dbErr(err, "read fork "+f.ID)
	}
	if have.ID != want.ID {
		return false, backend.Errorf(backend.ECONFLICT, "world %s was already forked here by %s, not by %s", f.ChildWorldID, have.ID, f.ID)
	}
	have.Delta = compactText(have.Delta)
	if have != want {
		return false, backend.Errorf(backend.ECONFLICT, "fork %s is already stored here with different content; an id names one fork forever", f.ID)
	}
	return false, nil
}

// AppendEvents writes events of one stream, in seq order and without a gap,
// keeping their ids, seqs, recorded times and clocks. Events at seqs the
// stream already holds must be the same facts; the others must continue it.
// reality is the stream's: a stored stream of the other reality is refused.
// It returns how many events it added.
func (t *ImportTx) AppendEvents(stream string, reality backend.Reality, events []backend.Event) (int, error) {
	if len(events) == 0 {
		return 0, nil
	}
	st, err := t.stream(stream)
	if err != nil {
		return 0, err
	}
	if st.exists && st.reality != reality {
		return 0, backend.Errorf(backend.ECONFLICT, "stream %s records %s events here; the import's are %s (a world-local event can never become an external-real fact)",
			stream, st.reality, reality)
	}
	out := make([]backend.Event, len(events))
	for i, e := range events {
		if e.Stream != stream || e.Reality != reality {
			return 0, backend.Errorf(backend.ECORRUPT, "event %s does not belong to the %s stream %s", e.ID, reality, stream)
		}
		if i > 0 && e.Seq != out[i-1].Seq+1 {
			return 0, backend.Errorf(backend.ECORRUPT, "the events of stream %s jump from seq %d to %d", stream, out[i-1].Seq, e.Seq)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, e.Payload); err != nil {
			return 0, backend.Errorf(backend.ECORRUPT, "event %s has a payload that is not valid JSON", e.ID)
		}
		e.Payload = buf.Bytes()
		e.RecordedAt = e.RecordedAt.UTC().Truncate(time.Microsecond)
		out[i] = e
	}
	if first := out[0].Seq; first < 1 || first > st.head+1 {
		return 0, backend.Errorf(backend.ECORRUPT, "the import continues stream %s at seq %d, but it ends here at seq %d", stream, first, st.head)
	}
	fresh := out
	if out[0].Seq <= st.head {
		n := int(min(st.head-out[0].Seq+1, int64(len(out))))
		if err := t.sameAsStored(stream, out[:n]); err != nil {
			return 0, err
		}
		fresh = out[n:]
	}
	if len(fresh) == 0 {
		return 0, nil
	}
	if !st.exists {
		if _, err := t.tx.ExecContext(t.ctx, t.db.Rebind("INSERT INTO streams (id, reality, head_seq, created_at) VALUES (?, ?, 0, ?)"),
			stream, string(reality), t.now.UnixMicro()); err != nil {
			return 0, backend.Wrap(err, backend.EINTERNAL, "cannot create stream %s", stream)
		}
		st.exists, st.reality = true, reality
	}
	if t.lastPos < 0 {
		if err := t.tx.QueryRowContext(t.ctx, t.db.Rebind("SELECT coalesce(max(pos), 0) FROM events")).Scan(&t.lastPos); err != nil {
			return 0, backend.Wrap(err, backend.EINTERNAL, "cannot read the ledger position")
		}
	}
	for i := range fresh {
		t.lastPos++
		fresh[i].Pos = t.lastPos
	}
	for start := 0; start < len(fresh); start += insertChunk {
		chunk := fresh[start:min(start+insertChunk, len(fresh))]
		if err := insertEvents(t.ctx, t.db, t.tx, chunk); err != nil {
			if t.db.isUniqueViolation(err, "events", "id") {
				return 0, t.takenID(chunk)
			}
			return 0, backend.Wrap(err, backend.EINTERNAL, "cannot import into stream %s", stream)
		}
	}
	st.head = fresh[len(fresh)-1].Seq
	if _, err := t.tx.ExecContext(t.ctx, t.db.Rebind("UPDATE streams SET head_seq = ? WHERE id = ?"), st.head, stream); err != nil {
		return 0, backend.Wrap(err, backend.EINTERNAL, "cannot advance stream %s", stream)
	}
	t.tails[stream] = fresh[len(fresh)-1]
	return len(fresh), nil
}

// stream returns what is stored of a stream, read once per transaction.
func (t *ImportTx) stream(id string) (*importStream, error) {
	if st, ok := t.streams[id]; ok {
		return st, nil
	}
	st := &importStream{}
	var reality string
	err := t.tx.QueryRowContext(t.ctx, t.db.Rebind("SELECT head_seq, reality FROM streams WHERE id = ?"), id).Scan(&st.head, &reality)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot read stream %s", id)
	default:
		st.exists, st.reality = true, backend.Reality(reality)
	}
	t.streams[id] = st
	return st, nil
}

// sameAsStored checks that events (consecutive, all at or below the head)
// are exactly the stored ones.
func (t *ImportTx) sameAsStored(stream string, events []backend.Event) error {
	rows, err := t.tx.QueryContext(t.ctx, t.db.Rebind("SELECT "+eventColumns+" FROM events WHERE stream_id = ? AND seq >= ? AND seq <= ? ORDER BY seq"),
		stream, events[0].Seq, events[len(events)-1].Seq)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot read stream %s", stream)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var s backend.Event
		var payload []byte
		var reality string
		var recorded int64
		if err := rows.Scan(&s.Pos, &s.ID, &s.Stream, &s.Seq, &s.Type, &s.SchemaVersion, &payload, &reality,
			&s.CausationID, &s.CorrelationID, &recorded, &s.ParentTime, &s.DeliberationIndex, &s.WorldLocalTime); err != nil {
			return backend.Wrap(err, backend.EINTERNAL, "cannot read stream %s", stream)
		}
		if s.Payload, err = readPayload(payload); err != nil {
			return backend.Wrap(err, backend.ErrorCode(err), "cannot read event %s", s.ID)
		}
		s.Reality, s.RecordedAt = backend.Reality(reality), time.UnixMicro(recorded).UTC()
		if i >= len(events) {
			break
		}
		e := events[i]
		if s.ID != e.ID {
			return backend.Errorf(backend.ECONFLICT, "seq %d of stream %s is already recorded here as another fact (event %s, not %s)", e.Seq, stream, s.ID, e.ID)
		}
		if !sameContent(s, e) || !s.RecordedAt.Equal(e.RecordedAt) {
			return backend.Errorf(backend.ECONFLICT, "event %s (seq %d of stream %s) is already recorded here with different content; an event id names one fact forever", e.ID, e.Seq, stream)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot read stream %s", stream)
	}
	if i != len(events) {
		return backend.Errorf(backend.ECORRUPT, "stream %s is damaged here: it has fewer events than its head says", stream)
	}
	return nil
}

// takenID names the event of chunk whose id is already stored elsewhere.
func (t *ImportTx) takenID(chunk []backend.Event) error {
	for _, e := range chunk {
		var stream string
		var seq int64
		err := t.tx.QueryRowContext(t.ctx, t.db.Rebind("SELECT stream_id, seq FROM events WHERE id = ?"), e.ID).Scan(&stream, &seq)
		if err == nil {
			return backend.Errorf(backend.ECONFLICT, "event %s is already recorded here as seq %d of stream %s, not as seq %d of %s; an event id names one fact forever",
				e.ID, seq, stream, e.Seq, e.Stream)
		}
	}
	return backend.Errorf(backend.ECONFLICT, "an event id of stream %s appears twice in the import or is already recorded here for another fact", chunk[0].Stream)
}

// compactText returns JSON text on one line (unchanged when it is not JSON).
func compactText(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}
