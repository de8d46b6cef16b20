package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/memorypolicy"
)

// MemoryRow is a row of memories.
type MemoryRow struct {
	ID             string  `gorm:"column:id;primaryKey"`
	Text           string  `gorm:"column:text;not null"`
	Type           string  `gorm:"column:type;not null"`
	EmbeddingModel string  `gorm:"column:embedding_model;not null"`
	Embedding      []byte  `gorm:"column:embedding;not null"`
	Dims           int     `gorm:"column:dims;not null"`
	ContentHash    string  `gorm:"column:content_hash;not null"`
	RunID          string  `gorm:"column:run_id;not null"`
	EventID        string  `gorm:"column:event_id;not null"`
	Reality        string  `gorm:"column:reality;not null"`
	WorldID        string  `gorm:"column:world_id;not null"`
	SourceURL      string  `gorm:"column:source_url;not null"`
	ObservedAt     int64   `gorm:"column:observed_at;not null"`
	Weight         float64 `gorm:"column:weight;not null"`
	MergedCount    int     `gorm:"column:merged_count;not null"`
	CreatedAt      int64   `gorm:"column:created_at;not null;autoCreateTime:false"`
	MergedAt       int64   `gorm:"column:merged_at;not null"`
	UpdatedAt      int64   `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

// TableName implements gorm's Tabler.
func (MemoryRow) TableName() string { return "memories" }

// MemorySourceRow is a row of memory_sources: one provenance of a memory.
type MemorySourceRow struct {
	ID          int64   `gorm:"column:id;primaryKey;autoIncrement"`
	MemoryID    string  `gorm:"column:memory_id;not null"`
	RunID       string  `gorm:"column:run_id;not null"`
	EventID     string  `gorm:"column:event_id;not null"`
	Reality     string  `gorm:"column:reality;not null"`
	WorldID     string  `gorm:"column:world_id;not null"`
	SourceURL   string  `gorm:"column:source_url;not null"`
	ObservedAt  int64   `gorm:"column:observed_at;not null"`
	CriticScore float64 `gorm:"column:critic_score;not null"`
	Worth       float64 `gorm:"column:worth;not null"`
	AddedAt     int64   `gorm:"column:added_at;not null"`
}

// TableName implements gorm's Tabler.
func (MemorySourceRow) TableName() string { return "memory_sources" }

// MemoryStateRow is the one row of memory_state.
type MemoryStateRow struct {
	ID             int64  `gorm:"column:id;primaryKey;autoIncrement:false"`
	EmbeddingModel string `gorm:"column:embedding_model;not null"`
	Generation     int64  `gorm:"column:generation;not null"`
}

// TableName implements gorm's Tabler.
func (MemoryStateRow) TableName() string { return "memory_state" }

// Memories is the registry of memories, the source of truth of the memory
// store; decisions' events go through the ledger in the same transaction.
type Memories struct {
	db     *DB
	ledger *Ledger
}

var _ memory.Repo = (*Memories)(nil)

// NewMemories returns the registry stored in db.
func NewMemories(db *DB, ledger *Ledger) *Memories { return &Memories{db: db, ledger: ledger} }

// memoryColumns are read by scanMemory, in its order (no embedding).
const memoryColumns = "id, text, type, embedding_model, dims, content_hash, run_id, event_id, reality, world_id, source_url, observed_at, weight, merged_count, created_at, merged_at, updated_at"

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func memoryRow(m memory.Memory) MemoryRow {
	return MemoryRow{ID: m.ID, Text: m.Text, Type: string(m.Type), EmbeddingModel: m.Model, Embedding: encodeVector(m.Vector),
		Dims: len(m.Vector), ContentHash: m.ContentHash, RunID: m.Provenance.RunID, EventID: m.Provenance.EventID,
		Reality: string(m.Provenance.Reality), WorldID: m.Provenance.WorldID, SourceURL: m.Provenance.URL,
		ObservedAt: optMicros(m.Provenance.ObservedAt), Weight: m.Weight, MergedCount: m.MergedCount,
		CreatedAt: micros(m.CreatedAt), MergedAt: optMicros(m.MergedAt), UpdatedAt: micros(m.UpdatedAt)}
}

func sourceRow(id string, s memory.Source) MemorySourceRow {
	return MemorySourceRow{MemoryID: id, RunID: s.RunID, EventID: s.EventID, Reality: string(s.Reality), WorldID: s.WorldID,
		SourceURL: s.URL, ObservedAt: optMicros(s.ObservedAt), CriticScore: s.CriticScore, Worth: s.Worth, AddedAt: micros(s.AddedAt)}
}

// optMicros and optTime map an unset time to 0 and back.
func optMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return micros(t)
}

func optTime(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return fromMicros(us)
}

// scanMemory reads memoryColumns, then any extra destinations.
func scanMemory(scan func(...any) error, extra ...any) (memory.Memory, error) {
	var m memory.Memory
	var typ, reality string
	var dims int
	var created, merged, updated, observed int64
	dest := append([]any{&m.ID, &m.Text, &typ, &m.Model, &dims, &m.ContentHash, &m.Provenance.RunID, &m.Provenance.EventID,
		&reality, &m.Provenance.WorldID, &m.Provenance.URL, &observed, &m.Weight, &m.MergedCount, &created, &merged, &updated}, extra...)
	if err := scan(dest...); err != nil {
		return m, err
	}
	m.Type, m.Provenance.Reality = memorypolicy.Type(typ), backend.Reality(reality)
	m.CreatedAt, m.MergedAt, m.UpdatedAt = fromMicros(created), optTime(merged), fromMicros(updated)
	m.Provenance.ObservedAt = optTime(observed)
	return m, nil
}

// Insert implements memory.Repo.
func (r *Memories) Insert(ctx context.Context, m memory.Memory, stream string, events []backend.Event) error {
	if err := backend.CheckID(m.ID, backend.KindMemory); err != nil {
		return err
	}
	return r.inTx(ctx, stream, events, func(gtx *gorm.DB) error { return r.insert(gtx, m) })
}

// insert writes a new memory and its first source in gtx's transaction.
func (r *Memories) insert(gtx *gorm.DB, m memory.Memory) error {
	if err := backend.CheckID(m.ID, backend.KindMemory); err != nil {
		return err
	}
	first := memory.Source{Provenance: m.Provenance, Worth: m.Weight, AddedAt: m.CreatedAt}
	if len(m.Sources) > 0 {
		first = m.Sources[0]
	}
	if err := gtx.Create(ptr(memoryRow(m))).Error; err != nil {
		return dbErr(err, "store memory "+m.ID)
	}
	return r.insertSource(gtx, m.ID, first)
}

// insertSourceSQL adds a provenance to a memory: a prepared statement, as
// every merge of a step's result into a memory runs it.
const insertSourceSQL = "INSERT INTO memory_sources (memory_id, run_id, event_id, reality, world_id, source_url, observed_at, critic_score, worth, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

// insertSource adds src to memory id's provenance in gtx's transaction.
func (r *Memories) insertSource(gtx *gorm.DB, id string, src memory.Source) error {
	tx, ok := sqlTx(gtx)
	if !ok {
		return dbErr(gtx.Create(ptr(sourceRow(id, src))).Error, "store the provenance of memory "+id)
	}
	row := sourceRow(id, src)
	_, err := r.db.txExec(gtx.Statement.Context, tx, insertSourceSQL, row.MemoryID, row.RunID, row.EventID, row.Reality, row.WorldID,
		row.SourceURL, row.ObservedAt, row.CriticScore, row.Worth, row.AddedAt)
	return dbErr(err, "store the provenance of memory "+id)
}

// Merge implements memory.Repo. The stored weight never goes down.
func (r *Memories) Merge(ctx context.Context, id string, src memory.Source, weight float64, at time.Time, stream string, events []backend.Event) (memory.Memory, error) {
	var out memory.Memory
	err := r.inTx(ctx, stream, events, func(gtx *gorm.DB) (err error) {
		out, err = r.merge(gtx, id, src, weight, at)
		return err
	})
	return out, err
}

// merge folds src into memory id in gtx's transaction and returns the
// memory as stored.
func (r *Memories) merge(gtx *gorm.DB, id string, src memory.Source, weight float64, at time.Time) (memory.Memory, error) {
	tx, ok := sqlTx(gtx)
	if !ok {
		return memory.Memory{}, backend.Errorf(backend.EINTERNAL, "memory %s was merged into outside a transaction", id)
	}
	// Prepared statements: every merge of a step's result into a memory
	// runs them (parsing them again was a sixth of a CLI step's CPU). The
	// update returns the memory as it stored it: no read after it.
	ctx := gtx.Statement.Context
	out, err := scanMemory(r.db.txQueryRow(ctx, tx, "UPDATE memories SET weight = "+r.db.dialect.Greatest+"(weight, ?), merged_count = merged_count + 1, merged_at = ?, updated_at = ? WHERE id = ? RETURNING "+memoryColumns,
		weight, micros(at), micros(at), id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Memory{}, backend.Errorf(backend.ENOTFOUND, "there is no memory %s to merge into", id)
	}
	if err != nil {
		return memory.Memory{}, dbErr(err, "merge into memory "+id)
	}
	if err := r.insertSource(gtx, id, src); err != nil {
		return memory.Memory{}, err
	}
	return out, nil
}

// inTx runs fn in one transaction with events appended to stream (no
// events: a plain write transaction).
func (r *Memories) inTx(ctx context.Context, stream string, events []backend.Event, fn func(gtx *gorm.DB) error) error {
	if len(events) == 0 {
		return r.db.write(ctx, func(gtx *gorm.DB) error { return fn(gtx.WithContext(ctx)) })
	}
	_, err := r.ledger.AppendWith(ctx, stream, backend.ExpectAny, events, func(gtx *gorm.DB, _ []backend.Event) error {
		return fn(gtx.WithContext(ctx))
	})
	return err
}

// Record implements memory.Repo.
func (r *Memories) Record(ctx context.Context, stream string, events []backend.Event) error {
	_, err := r.ledger.Append(ctx, stream, backend.ExpectAny, events...)
	return err
}

// StreamReality implements memory.Repo.
func (r *Memories) StreamReality(ctx context.Context, stream string) (backend.Reality, error) {
	var reality string
	err := r.db.SQL.QueryRowContext(ctx, r.db.Rebind("SELECT reality FROM streams WHERE id = ?"), stream).Scan(&reality)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", backend.Wrap(err, backend.EINTERNAL, "cannot read stream %s", stream)
	}
	return backend.Reality(reality), nil
}

// Get implements memory.Repo.
func (r *Memories) Get(ctx context.Context, id string) (memory.Memory, error) {
	if err := backend.CheckID(id, backend.KindMemory); err != nil {
		return memory.Memory{}, err
	}
	var blob []byte
	m, err := scanMemory(r.db.SQL.QueryRowContext(ctx, r.db.Rebind("SELECT "+memoryColumns+", embedding FROM memories WHERE id = ?"), id).Scan, &blob)
	if errors.Is(err, sql.ErrNoRows) {
		return m, backend.Errorf(backend.ENOTFOUND, "there is no memory %s", id)
	}
	if err != nil {
		return m, dbErr(err, "read memory "+id)
	}
	m.Vector = decodeVector(blob)
	var rows []MemorySourceRow
	if err := r.db.Gorm.WithContext(ctx).Where("memory_id = ?", id).Order("id").Find(&rows).Error; err != nil {
		return m, dbErr(err, "read the provenance of memory "+id)
	}
	for _, s := range rows {
		m.Sources = append(m.Sources, memory.Source{
			Provenance: memory.Provenance{RunID: s.RunID, EventID: s.EventID, Reality: backend.Reality(s.Reality), WorldID: s.WorldID,
				URL: s.SourceURL, ObservedAt: optTime(s.ObservedAt)},
			CriticScore: s.CriticScore, Worth: s.Worth, AddedAt: fromMicros(s.AddedAt)})
	}
	return m, nil
}

// FindByHash implements memory.Repo.
func (r *Memories) FindByHash(ctx context.Context, hash string, typ memorypolicy.Type, reality backend.Reality) (string, bool, error) {
	var id string
	err := r.db.queryRow(ctx, "SELECT id FROM memories WHERE content_hash = ? AND type = ? AND reality = ? ORDER BY created_at, id LIMIT 1",
		hash, string(typ), string(reality)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return id, err == nil, dbErr(err, "look a memory up by its content")
}

// Stored implements memory.Repo.
func (r *Memories) Stored(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := r.db.SQL.QueryContext(ctx, r.db.Rebind("SELECT id FROM memories WHERE id IN (?"+strings.Repeat(", ?", len(ids)-1)+")"), args...)
	if err != nil {
		return nil, dbErr(err, "check which memories are stored")
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, dbErr(err, "check which memories are stored")
		}
		out[id] = true
	}
	return out, dbErr(rows.Err(), "check which memories are stored")
}

// List implements memory.Repo.
func (r *Memories) List(ctx context.Context, q memory.ListQuery) ([]memory.Memory, error) {
	var where []string
	var args []any
	if q.Type != "" {
		where, args = append(where, "type = ?"), append(args, string(q.Type))
	}
	if q.Reality != "" {
		where, args = append(where, "reality = ?"), append(args, string(q.Reality))
	}
	if q.RunID != "" {
		where, args = append(where, "run_id = ?"), append(args, q.RunID)
	}
	if !q.Before.IsZero() {
		at := micros(q.Before.CreatedAt)
		where, args = append(where, "(created_at < ? OR (created_at = ? AND id < ?))"), append(args, at, at, q.Before.ID)
	}
	stmt := "SELECT " + memoryColumns + " FROM memories"
	if len(where) > 0 {
		stmt += " WHERE " + strings.Join(where, " AND ")
	}
	stmt += " ORDER BY created_at DESC, id DESC"
	if q.Limit > 0 {
		stmt, args = stmt+" LIMIT ?", append(args, q.Limit)
	}
	rows, err := r.db.SQL.QueryContext(ctx, r.db.Rebind(stmt), args...)
	if err != nil {
		return nil, dbErr(err, "list memories")
	}
	defer rows.Close()
	var out []memory.Memory
	for rows.Next() {
		m, err := scanMemory(rows.Scan)
		if err != nil {
			return nil, dbErr(err, "list memories")
		}
		out = append(out, m)
	}
	return out, dbErr(rows.Err(), "list memories")
}

// Delete implements memory.Repo.
func (r *Memories) Delete(ctx context.Context, id string) error {
	if err := backend.CheckID(id, backend.KindMemory); err != nil {
		return err
	}
	return r.db.write(ctx, func(gtx *gorm.DB) error {
		res := gtx.WithContext(ctx).Exec("DELETE FROM memories WHERE id = ?", id)
		if res.Error != nil {
			return dbErr(res.Error, "delete memory "+id)
		}
		if res.RowsAffected != 1 {
			return backend.Errorf(backend.ENOTFOUND, "there is no memory %s", id)
		}
		return nil
	})
}

func (r *Memories) generation(ctx context.Context) (int64, error) {
	var g int64
	err := r.db.SQL.QueryRowContext(ctx, r.db.Rebind("SELECT generation FROM memory_state WHERE id = 1")).Scan(&g)
	return g, dbErr(err, "read the memory generation")
}

// Load implements memory.Repo. Count and latest update come from the scan
// itself, and the generation is read before and after it, so the state
// describes exactly the rows fn saw when consistent is true. Large tables
// are read in rowid ranges on several connections at once (fn is still
// called from one goroutine).
func (r *Memories) Load(ctx context.Context, model string, fn func(memory.Memory) error) (memory.IndexState, bool, error) {
	st := memory.IndexState{Model: model}
	before, err := r.generation(ctx)
	if err != nil {
		return st, false, err
	}
	var lo, hi int64
	if err := r.db.SQL.QueryRowContext(ctx, r.db.Rebind("SELECT coalesce(min("+r.db.dialect.RowID+"), 0), coalesce(max("+r.db.dialect.RowID+"), -1) FROM memories")).Scan(&lo, &hi); err != nil {
		return st, false, dbErr(err, "read memories")
	}
	parts := int64(min(runtime.GOMAXPROCS(0), maxLoadScans))
	if hi-lo < loadScanMin {
		parts = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan []memory.Memory, 2*parts)
	errc := make(chan error, parts)
	var wg sync.WaitGroup
	span := (hi - lo + parts) / parts
	for p := int64(0); p < parts; p++ {
		wg.Add(1)
		go func(from, to int64) {
			defer wg.Done()
			errc <- r.scanRange(ctx, model, from, to, out)
		}(lo+p*span, min(hi, lo+(p+1)*span-1))
	}
	go func() { wg.Wait(); close(out) }()
	var fnErr error
	for batch := range out {
		for _, m := range batch {
			st.Count++
			st.MaxUpdated = max(st.MaxUpdated, micros(m.UpdatedAt))
			if fnErr == nil {
				if fnErr = fn(m); fnErr != nil {
					cancel()
				}
			}
		}
	}
	close(errc)
	if fnErr != nil {
		return st, false, fnErr
	}
	for err := range errc {
		if err != nil {
			return st, false, err
		}
	}
	after, err := r.generation(ctx)
	if err != nil {
		return st, false, err
	}
	st.Generation = after
	return st, before == after, nil
}

// The parallel load: at most maxLoadScans connections, and only for tables
// spanning loadScanMin rowids or more.
const (
	maxLoadScans = 4
	loadScanMin  = 4096
	loadBatch    = 256
)

// scanRange sends the memories of model with rowids in [from, to] in batches.
func (r *Memories) scanRange(ctx context.Context, model string, from, to int64, out chan<- []memory.Memory) error {
	// Only what an index document needs is read (no content hash).
	rows, err := r.db.SQL.QueryContext(ctx, r.db.Rebind(`SELECT id, text, type, run_id, event_id, reality, world_id, weight, merged_count,
		created_at, merged_at, updated_at, embedding FROM memories WHERE `+r.db.dialect.RowID+` BETWEEN ? AND ? AND `+
		r.db.dialect.Unindexed("embedding_model")+` = ?`), from, to, model)
	if err != nil {
		return dbErr(err, "read memories")
	}
	defer rows.Close()
	var blob sql.RawBytes
	var typ, reality string
	var created, merged, updated int64
	batch := make([]memory.Memory, 0, loadBatch)
	for rows.Next() {
		m := memory.Memory{Model: model}
		if err := rows.Scan(&m.ID, &m.Text, &typ, &m.Provenance.RunID, &m.Provenance.EventID, &reality, &m.Provenance.WorldID,
			&m.Weight, &m.MergedCount, &created, &merged, &updated, &blob); err != nil {
			return dbErr(err, "read memories")
		}
		m.Type, m.Provenance.Reality = memorypolicy.Type(typ), backend.Reality(reality)
		m.CreatedAt, m.MergedAt, m.UpdatedAt = fromMicros(created), optTime(merged), fromMicros(updated)
		m.Vector = decodeVector(blob)
		if batch = append(batch, m); len(batch) == loadBatch {
			select {
			case out <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
			batch = make([]memory.Memory, 0, loadBatch)
		}
	}
	if err := rows.Err(); err != nil {
		return dbErr(err, "read memories")
	}
	if len(batch) > 0 {
		select {
		case out <- batch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// State implements memory.Repo, in one statement (one read snapshot).
func (r *Memories) State(ctx context.Context, model string) (memory.IndexState, error) {
	st := memory.IndexState{Model: model}
	err := r.db.SQL.QueryRowContext(ctx, r.db.Rebind(`SELECT
		(SELECT count(*) FROM memories WHERE embedding_model = ?1),
		(SELECT coalesce(max(updated_at), 0) FROM memories WHERE embedding_model = ?1),
		(SELECT generation FROM memory_state WHERE id = 1)`), model).Scan(&st.Count, &st.MaxUpdated, &st.Generation)
	return st, dbErr(err, "read the state of the memories")
}

// Stale implements memory.Repo.
func (r *Memories) Stale(ctx context.Context, model, after string, limit int) ([]memory.Memory, int64, error) {
	total := int64(-1)
	if after == "" {
		if err := r.db.SQL.QueryRowContext(ctx, r.db.Rebind("SELECT count(*) FROM memories WHERE embedding_model <> ?"), model).Scan(&total); err != nil {
			return nil, 0, dbErr(err, "count memories to re-embed")
		}
	}
	if limit <= 0 {
		return nil, total, nil
	}
	rows, err := r.db.SQL.QueryContext(ctx, r.db.Rebind("SELECT "+memoryColumns+" FROM memories WHERE embedding_model <> ? AND id > ? ORDER BY id LIMIT ?"),
		model, after, limit)
	if err != nil {
		return nil, 0, dbErr(err, "read memories to re-embed")
	}
	defer rows.Close()
	var out []memory.Memory
	for rows.Next() {
		m, err := scanMemory(rows.Scan)
		if err != nil {
			return nil, 0, dbErr(err, "read memories to re-embed")
		}
		out = append(out, m)
	}
	return out, total, dbErr(rows.Err(), "read memories to re-embed")
}

// SetEmbeddings implements memory.Repo.
func (r *Memories) SetEmbeddings(ctx context.Context, model string, vecs []memory.Embedding, at time.Time) ([]memory.Memory, error) {
	var out []memory.Memory
	err := r.db.write(ctx, func(gtx *gorm.DB) error {
		out = out[:0]
		for _, e := range vecs {
			res := gtx.WithContext(ctx).Exec("UPDATE memories SET embedding_model = ?, embedding = ?, dims = ?, updated_at = ? WHERE id = ?",
				model, encodeVector(e.Vector), len(e.Vector), micros(at), e.ID)
			if res.Error != nil {
				return dbErr(res.Error, "store the embedding of memory "+e.ID)
			}
			if res.RowsAffected == 0 {
				continue // deleted meanwhile
			}
			m, err := scanMemory(gtx.WithContext(ctx).Raw("SELECT "+memoryColumns+" FROM memories WHERE id = ?", e.ID).Row().Scan)
			if err != nil {
				return dbErr(err, "read memory "+e.ID)
			}
			m.Vector = e.Vector
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

// ActiveModel implements memory.Repo.
func (r *Memories) ActiveModel(ctx context.Context) (string, error) {
	var model string
	err := r.db.SQL.QueryRowContext(ctx, r.db.Rebind("SELECT embedding_model FROM memory_state WHERE id = 1")).Scan(&model)
	return model, dbErr(err, "read the memory embedding model")
}

// SetActiveModel implements memory.Repo.
func (r *Memories) SetActiveModel(ctx context.Context, model string) error {
	return r.db.write(ctx, func(gtx *gorm.DB) error {
		return dbErr(gtx.WithContext(ctx).Exec("UPDATE memory_state SET embedding_model = ? WHERE id = 1", model).Error, "record the memory embedding model")
	})
}
