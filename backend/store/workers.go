package store

import (
	"context"
	"encoding/json"
	"time"

	"ducklm/backend"
)

// WorkerRow is a row of workers: one `ducklm worker` process.
type WorkerRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	Host        string `gorm:"column:host;not null"`
	PID         int    `gorm:"column:pid;not null"`
	Slots       int    `gorm:"column:slots;not null"`
	Version     string `gorm:"column:version;not null"`
	StartedAt   int64  `gorm:"column:started_at;not null"`
	HeartbeatAt int64  `gorm:"column:heartbeat_at;not null"`
	StoppedAt   int64  `gorm:"column:stopped_at;not null"`
	Jobs        string `gorm:"column:jobs;not null"`
	Done        int64  `gorm:"column:done;not null"`
}

// TableName implements gorm's Tabler.
func (WorkerRow) TableName() string { return "workers" }

// RecordWorker writes w's row as it is now (its heartbeat, jobs under way,
// jobs done, stopped or not). Only the worker itself writes its row, so the
// last write wins. It is not a ledger write and takes no ledger lock.
func (db *DB) RecordWorker(ctx context.Context, w backend.Worker) error {
	jobs := w.Jobs
	if jobs == nil {
		jobs = []backend.WorkerJob{}
	}
	js, err := json.Marshal(jobs)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot encode worker %s's jobs", w.ID)
	}
	_, err = db.SQL.ExecContext(ctx, db.Rebind(`INSERT INTO workers
		(id, host, pid, slots, version, started_at, heartbeat_at, stopped_at, jobs, done)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, stopped_at = excluded.stopped_at,
		jobs = excluded.jobs, done = excluded.done, slots = excluded.slots`),
		w.ID, w.Host, w.PID, w.Slots, w.Version, millis(w.StartedAt), millis(w.HeartbeatAt), millis(w.StoppedAt), string(js), w.Done)
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot record worker %s's heartbeat", w.ID)
	}
	return nil
}

// Workers lists the workers whose row is newer than since (zero: all),
// most recent heartbeat first, each with its state at now.
func (db *DB) Workers(ctx context.Context, since, now time.Time) ([]backend.Worker, error) {
	var rows []WorkerRow
	if err := db.Gorm.WithContext(ctx).Where("heartbeat_at >= ?", millis(since)).
		Order("heartbeat_at DESC, id").Find(&rows).Error; err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot read the workers")
	}
	out := make([]backend.Worker, 0, len(rows))
	for _, r := range rows {
		w := backend.Worker{ID: r.ID, Host: r.Host, PID: r.PID, Slots: r.Slots, Version: r.Version,
			StartedAt: fromMillis(r.StartedAt), HeartbeatAt: fromMillis(r.HeartbeatAt), StoppedAt: fromMillis(r.StoppedAt), Done: r.Done}
		if err := json.Unmarshal([]byte(r.Jobs), &w.Jobs); err != nil {
			return nil, backend.Wrap(err, backend.ECORRUPT, "worker %s's jobs are not readable", r.ID)
		}
		if w.Jobs == nil {
			w.Jobs = []backend.WorkerJob{}
		}
		w.State = w.StateAt(now)
		out = append(out, w)
	}
	return out, nil
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
