package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"

	"ducklm/backend"
)

// Worlds is the registry of world specs, runs, checkpoints and forks.
type Worlds struct {
	db     *DB
	ledger *Ledger
}

// NewWorlds returns the registry stored in db; run events go through ledger.
func NewWorlds(db *DB, ledger *Ledger) *Worlds {
	return &Worlds{db: db, ledger: ledger}
}

func micros(t time.Time) int64      { return t.UnixMicro() }
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func specRow(s backend.WorldSpec) WorldSpecRow {
	r := WorldSpecRow{
		ID: s.ID, Name: s.Name, Domain: string(s.Domain), Backend: s.Backend,
		ProgramDigest: s.Program.Digest, ProgramSize: s.Program.Size,
		Params: string(s.Params), Seed: s.Seed, ForkID: s.ForkID, CreatedAt: micros(s.CreatedAt),
	}
	if s.InitialState != nil {
		r.InitialStateDigest = s.InitialState.Digest
	}
	if s.ParentWorldID != "" {
		p := s.ParentWorldID
		r.ParentWorldID = &p
	}
	return r
}

func (r WorldSpecRow) spec() backend.WorldSpec {
	s := backend.WorldSpec{
		ID: r.ID, Name: r.Name, Domain: backend.Domain(r.Domain), Backend: r.Backend,
		Program: backend.BlobRef{Digest: r.ProgramDigest, Size: r.ProgramSize, MediaType: programMediaType(r.Backend)},
		Params:  json.RawMessage(r.Params), Seed: r.Seed, ForkID: r.ForkID, CreatedAt: fromMicros(r.CreatedAt),
	}
	if r.InitialStateDigest != "" {
		s.InitialState = &backend.BlobRef{Digest: r.InitialStateDigest, MediaType: "application/json"}
	}
	if r.ParentWorldID != nil {
		s.ParentWorldID = *r.ParentWorldID
	}
	return s
}

func programMediaType(backendName string) string {
	if backendName == "starlark" {
		return "text/x-starlark"
	}
	return "text/plain"
}

func runRow(r backend.WorldRun) WorldRunRow {
	row := WorldRunRow{
		ID: r.ID, WorldID: r.WorldID, Status: string(r.Status), WorldLocalTime: r.WorldLocalTime,
		ParentTime: r.ParentTime, DeliberationIndex: r.DeliberationIndex, BaseSeq: r.BaseSeq,
		LatestCheckpointID: r.LatestCheckpointID, Error: r.Error,
		CreatedAt: micros(r.CreatedAt), UpdatedAt: micros(r.UpdatedAt),
	}
	if r.BaseRunID != "" {
		b := r.BaseRunID
		row.BaseRunID = &b
	}
	return row
}

func (row WorldRunRow) run() backend.WorldRun {
	r := backend.WorldRun{
		ID: row.ID, WorldID: row.WorldID, Status: backend.RunStatus(row.Status), WorldLocalTime: row.WorldLocalTime,
		ParentTime: row.ParentTime, DeliberationIndex: row.DeliberationIndex, BaseSeq: row.BaseSeq,
		LatestCheckpointID: row.LatestCheckpointID, Error: row.Error,
		CreatedAt: fromMicros(row.CreatedAt), UpdatedAt: fromMicros(row.UpdatedAt),
	}
	if row.BaseRunID != nil {
		r.BaseRunID = *row.BaseRunID
	}
	return r
}

func checkpointRow(c backend.Checkpoint) CheckpointRow {
	return CheckpointRow{ID: c.ID, WorldID: c.WorldID, RunID: c.RunID, WorldLocalTime: c.WorldLocalTime,
		LedgerSeq: c.LedgerSeq, Digest: c.Blob.Digest, Size: c.Blob.Size, CreatedAt: micros(c.CreatedAt)}
}

func (row CheckpointRow) checkpoint() backend.Checkpoint {
	return backend.Checkpoint{ID: row.ID, WorldID: row.WorldID, RunID: row.RunID, WorldLocalTime: row.WorldLocalTime,
		LedgerSeq: row.LedgerSeq, Blob: backend.BlobRef{Digest: row.Digest, Size: row.Size, MediaType: "application/json"},
		CreatedAt: fromMicros(row.CreatedAt)}
}

func forkRow(f backend.Fork) ForkRow {
	return ForkRow{ID: f.ID, ParentWorldID: f.ParentWorldID, ParentRunID: f.ParentRunID, CheckpointID: f.CheckpointID,
		ChildWorldID: f.ChildWorldID, DivergenceType: string(f.Divergence), Delta: string(f.Delta),
		SeedPolicy: string(f.SeedPolicy), CreatedAt: micros(f.CreatedAt)}
}

func (row ForkRow) fork() backend.Fork {
	return backend.Fork{ID: row.ID, ParentWorldID: row.ParentWorldID, ParentRunID: row.ParentRunID,
		CheckpointID: row.CheckpointID, ChildWorldID: row.ChildWorldID, Divergence: backend.DivergenceType(row.DivergenceType),
		Delta: json.RawMessage(row.Delta), SeedPolicy: backend.SeedPolicy(row.SeedPolicy), CreatedAt: fromMicros(row.CreatedAt)}
}

func dbErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var e *backend.Error
	if errors.As(err, &e) {
		return err
	}
	return backend.Wrap(err, backend.EINTERNAL, "cannot %s", what)
}

// CreateSpec stores a new spec; its fields can never change afterwards.
func (w *Worlds) CreateSpec(ctx context.Context, s backend.WorldSpec) error {
	return w.db.write(ctx, func(gtx *gorm.DB) error {
		return dbErr(gtx.WithContext(ctx).Create(ptr(specRow(s))).Error, "store world "+s.ID)
	})
}

// CreateSpecAndRun stores a spec with its first run in one transaction.
func (w *Worlds) CreateSpecAndRun(ctx context.Context, s backend.WorldSpec, r backend.WorldRun) error {
	return w.db.write(ctx, func(gtx *gorm.DB) error {
		if err := gtx.WithContext(ctx).Create(ptr(specRow(s))).Error; err != nil {
			return dbErr(err, "store world "+s.ID)
		}
		return dbErr(gtx.WithContext(ctx).Create(ptr(runRow(r))).Error, "store run "+r.ID)
	})
}

// CreateSpecAndRunWith stores a spec, its first run and the run's first
// events in one transaction, so that the run never exists without them (a
// task run's request is its first event, which its spec does not repeat).
// The run's stream must be empty: a stream that already has events is a
// conflict, and nothing is stored.
func (w *Worlds) CreateSpecAndRunWith(ctx context.Context, s backend.WorldSpec, r backend.WorldRun, events []backend.Event) ([]backend.Event, error) {
	if len(events) == 0 {
		return nil, backend.Errorf(backend.EINVALID, "run %s is created with its first events, and none were given", r.ID)
	}
	then := func(gtx *gorm.DB, _ []backend.Event) error {
		gtx = gtx.WithContext(ctx)
		if err := gtx.Create(ptr(specRow(s))).Error; err != nil {
			return dbErr(err, "store world "+s.ID)
		}
		return dbErr(gtx.Create(ptr(runRow(r))).Error, "store run "+r.ID)
	}
	return w.ledger.AppendWith(ctx, r.ID, 0, events, then)
}

// GetSpec returns a spec by id.
func (w *Worlds) GetSpec(ctx context.Context, id string) (backend.WorldSpec, error) {
	if err := backend.CheckID(id, backend.KindWorld); err != nil {
		return backend.WorldSpec{}, err
	}
	var row WorldSpecRow
	err := w.db.Gorm.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return backend.WorldSpec{}, backend.Errorf(backend.ENOTFOUND, "there is no world %s", id)
	}
	if err != nil {
		return backend.WorldSpec{}, dbErr(err, "read world "+id)
	}
	return row.spec(), nil
}

// ListSpecs returns every spec, oldest first.
func (w *Worlds) ListSpecs(ctx context.Context) ([]backend.WorldSpec, error) {
	var rows []WorldSpecRow
	if err := w.db.Gorm.WithContext(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, dbErr(err, "list worlds")
	}
	out := make([]backend.WorldSpec, len(rows))
	for i, r := range rows {
		out[i] = r.spec()
	}
	return out, nil
}

// GetRun returns a run by id.
func (w *Worlds) GetRun(ctx context.Context, id string) (backend.WorldRun, error) {
	if err := backend.CheckID(id, backend.KindRun); err != nil {
		return backend.WorldRun{}, err
	}
	var row WorldRunRow
	err := w.db.Gorm.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return backend.WorldRun{}, backend.Errorf(backend.ENOTFOUND, "there is no run %s", id)
	}
	if err != nil {
		return backend.WorldRun{}, dbErr(err, "read run "+id)
	}
	return row.run(), nil
}

// ListRuns returns the runs of one world (all runs when worldID is ""),
// newest first.
func (w *Worlds) ListRuns(ctx context.Context, worldID string) ([]backend.WorldRun, error) {
	q := w.db.Gorm.WithContext(ctx).Order("created_at DESC, id DESC")
	if worldID != "" {
		q = q.Where("world_id = ?", worldID)
	}
	var rows []WorldRunRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, dbErr(err, "list runs")
	}
	out := make([]backend.WorldRun, len(rows))
	for i, r := range rows {
		out[i] = r.run()
	}
	return out, nil
}

// CreateRun stores a new run of an existing spec.
func (w *Worlds) CreateRun(ctx context.Context, r backend.WorldRun) error {
	return w.db.write(ctx, func(gtx *gorm.DB) error {
		return dbErr(gtx.WithContext(ctx).Create(ptr(runRow(r))).Error, "store run "+r.ID)
	})
}

// SaveRun writes a run's mutable fields (status with error, world-local time,
// latest checkpoint; zero values keep what is stored) together with its
// events, in the events' transaction.
func (w *Worlds) SaveRun(ctx context.Context, r backend.WorldRun, expect int64, events []backend.Event, cp *backend.Checkpoint, also ...backend.Prepared) ([]backend.Event, error) {
	writes, err := preparedHere(also)
	if err != nil {
		return nil, err
	}
	then := func(gtx *gorm.DB, stored []backend.Event) error {
		if cp != nil {
			// The checkpoint covers the run's stream up to the last event of
			// this append (its own "world.checkpoint" event).
			cp.LedgerSeq = stored[len(stored)-1].Seq
			if err := w.insertCheckpoint(ctx, gtx, *cp); err != nil {
				return dbErr(err, "store checkpoint "+cp.ID)
			}
		}
		for _, write := range writes {
			if err := write(ctx, gtx); err != nil {
				return err
			}
		}
		return w.updateRun(ctx, gtx, r)
	}
	if len(events) == 0 {
		return nil, w.db.write(ctx, func(gtx *gorm.DB) error { return w.updateRun(ctx, gtx, r) })
	}
	return w.ledger.AppendWith(ctx, r.ID, expect, events, then)
}

func (w *Worlds) updateRun(ctx context.Context, gtx *gorm.DB, r backend.WorldRun) error {
	// Zero fields keep what is stored, so concurrent writers of one run
	// (the loop and its step workers) only write what they changed. The
	// statement is one prepared text whatever is written: a flag per field.
	tx, ok := sqlTx(gtx)
	if !ok {
		return backend.Errorf(backend.EINTERNAL, "run %s was updated outside a transaction", r.ID)
	}
	res, err := w.db.txExec(ctx, tx, `UPDATE world_runs SET updated_at = ?,
		status = CASE WHEN ? THEN ? ELSE status END, error = CASE WHEN ? THEN ? ELSE error END,
		world_local_time = CASE WHEN ? THEN ? ELSE world_local_time END,
		latest_checkpoint_id = CASE WHEN ? THEN ? ELSE latest_checkpoint_id END
		WHERE id = ?`,
		micros(r.UpdatedAt), r.Status != "", string(r.Status), r.Status != "", r.Error,
		r.WorldLocalTime > 0, r.WorldLocalTime, r.LatestCheckpointID != "", r.LatestCheckpointID, r.ID)
	if err != nil {
		return dbErr(err, "update run "+r.ID)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return backend.Errorf(backend.ENOTFOUND, "there is no run %s", r.ID)
	}
	return nil
}

// insertCheckpoint stores a checkpoint record in an append's transaction.
func (w *Worlds) insertCheckpoint(ctx context.Context, gtx *gorm.DB, cp backend.Checkpoint) error {
	tx, ok := sqlTx(gtx)
	if !ok {
		return gtx.WithContext(ctx).Create(ptr(checkpointRow(cp))).Error
	}
	row := checkpointRow(cp)
	_, err := w.db.txExec(ctx, tx, `INSERT INTO checkpoints (id, world_id, run_id, world_local_time, ledger_seq, digest, size, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, row.ID, row.WorldID, row.RunID, row.WorldLocalTime, row.LedgerSeq, row.Digest, row.Size, row.CreatedAt)
	return err
}

// GetCheckpoint returns a checkpoint record by id.
func (w *Worlds) GetCheckpoint(ctx context.Context, id string) (backend.Checkpoint, error) {
	if err := backend.CheckID(id, backend.KindCheckpoint); err != nil {
		return backend.Checkpoint{}, err
	}
	var row CheckpointRow
	err := w.db.Gorm.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return backend.Checkpoint{}, backend.Errorf(backend.ENOTFOUND, "there is no checkpoint %s", id)
	}
	if err != nil {
		return backend.Checkpoint{}, dbErr(err, "read checkpoint "+id)
	}
	return row.checkpoint(), nil
}

// ListCheckpoints returns a run's own checkpoints in ledger order.
func (w *Worlds) ListCheckpoints(ctx context.Context, runID string) ([]backend.Checkpoint, error) {
	var rows []CheckpointRow
	// ledger_seq is unique within a run, so the (run_id, ledger_seq) index
	// gives the order without a sort.
	if err := w.db.Gorm.WithContext(ctx).Where("run_id = ?", runID).Order("ledger_seq").Find(&rows).Error; err != nil {
		return nil, dbErr(err, "list checkpoints")
	}
	out := make([]backend.Checkpoint, len(rows))
	for i, r := range rows {
		out[i] = r.checkpoint()
	}
	return out, nil
}

// CreateFork stores a fork with its child spec and child run, and the
// child's first events (with its starting checkpoint), in one transaction.
func (w *Worlds) CreateFork(ctx context.Context, f backend.Fork, child backend.WorldSpec, run backend.WorldRun, events []backend.Event, cp *backend.Checkpoint) ([]backend.Event, error) {
	then := func(gtx *gorm.DB, stored []backend.Event) error {
		gtx = gtx.WithContext(ctx)
		if err := gtx.Create(ptr(specRow(child))).Error; err != nil {
			return dbErr(err, "store world "+child.ID)
		}
		if err := gtx.Create(ptr(runRow(run))).Error; err != nil {
			return dbErr(err, "store run "+run.ID)
		}
		if err := gtx.Create(ptr(forkRow(f))).Error; err != nil {
			return dbErr(err, "store fork "+f.ID)
		}
		if cp != nil {
			cp.LedgerSeq = stored[len(stored)-1].Seq
			if err := gtx.Create(ptr(checkpointRow(*cp))).Error; err != nil {
				return dbErr(err, "store checkpoint "+cp.ID)
			}
		}
		return nil
	}
	return w.ledger.AppendWith(ctx, run.ID, 0, events, then)
}

// ListRunsOfBackend returns the runs of worlds with the named backend
// ("task" for task runs), newest first, without reading other worlds.
func (w *Worlds) ListRunsOfBackend(ctx context.Context, name string) ([]backend.WorldRun, error) {
	var rows []WorldRunRow
	err := w.db.Gorm.WithContext(ctx).Table("world_runs").Select("world_runs.*").
		Joins("JOIN world_specs s ON s.id = world_runs.world_id").Where("s.backend = ?", name).
		Order("world_runs.created_at DESC, world_runs.id DESC").Find(&rows).Error
	if err != nil {
		return nil, dbErr(err, "list runs")
	}
	out := make([]backend.WorldRun, len(rows))
	for i, r := range rows {
		out[i] = r.run()
	}
	return out, nil
}

// ListForks returns every fork record, oldest first.
func (w *Worlds) ListForks(ctx context.Context) ([]backend.Fork, error) {
	var rows []ForkRow
	if err := w.db.Gorm.WithContext(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, dbErr(err, "list forks")
	}
	out := make([]backend.Fork, len(rows))
	for i, r := range rows {
		out[i] = r.fork()
	}
	return out, nil
}

// ForkTimes returns, for every fork id, the world-local time of the
// checkpoint it was taken from, in one query.
func (w *Worlds) ForkTimes(ctx context.Context) (map[string]int64, error) {
	rows, err := w.db.SQL.QueryContext(ctx, w.db.Rebind("SELECT f.id, c.world_local_time FROM forks f JOIN checkpoints c ON c.id = f.checkpoint_id"))
	if err != nil {
		return nil, dbErr(err, "read fork times")
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var t int64
		if err := rows.Scan(&id, &t); err != nil {
			return nil, dbErr(err, "read fork times")
		}
		out[id] = t
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(err, "read fork times")
	}
	return out, nil
}

// ForkOf returns the fork that created world id, or ENOTFOUND for a root.
func (w *Worlds) ForkOf(ctx context.Context, childWorldID string) (backend.Fork, error) {
	var row ForkRow
	err := w.db.Gorm.WithContext(ctx).Where("child_world_id = ?", childWorldID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return backend.Fork{}, backend.Errorf(backend.ENOTFOUND, "world %s was not forked", childWorldID)
	}
	if err != nil {
		return backend.Fork{}, dbErr(err, "read fork")
	}
	return row.fork(), nil
}

func ptr[T any](v T) *T { return &v }
