package store

import (
	"context"
	"database/sql"
	"strings"

	"gorm.io/gorm"

	"ducklm/backend"
)

// CreateBranches records many branches in ONE transaction: every branch's
// events on its own new stream, then their child specs, runs, forks and end
// checkpoints in one multi-row INSERT each. It is CreateFork for a batch
// (a queue job's branches), paying the ledger's lock and the commit once
// instead of once a branch. Each record's checkpoint must cover its whole
// stream (LedgerSeq = the number of its events). Nothing is written unless
// everything is: when one branch is already recorded (a retry) the whole
// call fails, and the caller records them one at a time. within, when set,
// runs inside the same transaction once the records are written, before
// the events take their ledger positions under the lock (a queue completes
// the job whose branches these are), and its error rolls everything back.
func (w *Worlds) CreateBranches(ctx context.Context, recs []backend.BranchRecord, within func(tx *sql.Tx) error) error {
	if len(recs) == 0 {
		return nil
	}
	streams := make([]string, len(recs))
	batches := make([][]backend.Event, len(recs))
	specs := make([]WorldSpecRow, len(recs))
	runs := make([]WorldRunRow, len(recs))
	forks := make([]ForkRow, len(recs))
	cps := make([]CheckpointRow, len(recs))
	for i, r := range recs {
		if r.Checkpoint.LedgerSeq != int64(len(r.Events)) {
			return backend.Errorf(backend.EINVALID, "the end checkpoint of branch run %s is at seq %d, but the branch records %d events", r.Run.ID, r.Checkpoint.LedgerSeq, len(r.Events))
		}
		streams[i], batches[i] = r.Run.ID, r.Events
		specs[i], runs[i], forks[i], cps[i] = specRow(r.Child), runRow(r.Run), forkRow(r.Fork), checkpointRow(r.Checkpoint)
	}
	// The records need no ledger position (LedgerSeq is the stream's own),
	// so they are written before the ledger's lock is taken.
	first := func(gtx *gorm.DB) error {
		gtx = gtx.WithContext(ctx)
		if err := gtx.Create(&specs).Error; err != nil {
			return dbErr(err, "store the branches' worlds")
		}
		if err := gtx.Create(&runs).Error; err != nil {
			return dbErr(err, "store the branches' runs")
		}
		if err := gtx.Create(&forks).Error; err != nil {
			return dbErr(err, "store the branches' forks")
		}
		if err := gtx.Create(&cps).Error; err != nil {
			return dbErr(err, "store the branches' checkpoints")
		}
		if within == nil {
			return nil
		}
		tx, ok := sqlTx(gtx)
		if !ok {
			return backend.Errorf(backend.EINTERNAL, "the branches were recorded outside a transaction")
		}
		return within(tx)
	}
	_, err := w.ledger.AppendNewStreams(ctx, streams, batches, first)
	return err
}

// BranchStarts reads checkpoints and the specs of their worlds in ONE
// query: where a batch of branches starts (the checkpoints this worker did
// not record itself). Ids not stored are left out.
func (w *Worlds) BranchStarts(ctx context.Context, ids []string) ([]backend.Checkpoint, []backend.WorldSpec, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		if err := backend.CheckID(id, backend.KindCheckpoint); err != nil {
			return nil, nil, err
		}
		args[i] = id
	}
	rows, err := w.db.SQL.QueryContext(ctx, w.db.Rebind(`SELECT c.id, c.world_id, c.run_id, c.world_local_time, c.ledger_seq, c.digest, c.size, c.created_at,
		s.id, s.name, s.domain, s.backend, s.program_digest, s.program_size, s.initial_state_digest, s.params, s.seed, s.parent_world_id, s.fork_id, s.created_at
		FROM checkpoints c JOIN world_specs s ON s.id = c.world_id WHERE c.id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`), args...)
	if err != nil {
		return nil, nil, dbErr(err, "read where the branches start")
	}
	defer rows.Close()
	var cps []backend.Checkpoint
	var specs []backend.WorldSpec
	for rows.Next() {
		var c CheckpointRow
		var s WorldSpecRow
		if err := rows.Scan(&c.ID, &c.WorldID, &c.RunID, &c.WorldLocalTime, &c.LedgerSeq, &c.Digest, &c.Size, &c.CreatedAt,
			&s.ID, &s.Name, &s.Domain, &s.Backend, &s.ProgramDigest, &s.ProgramSize, &s.InitialStateDigest, &s.Params, &s.Seed,
			&s.ParentWorldID, &s.ForkID, &s.CreatedAt); err != nil {
			return nil, nil, dbErr(err, "read where the branches start")
		}
		cps = append(cps, c.checkpoint())
		specs = append(specs, s.spec())
	}
	if err := rows.Err(); err != nil {
		return nil, nil, dbErr(err, "read where the branches start")
	}
	return cps, specs, nil
}
