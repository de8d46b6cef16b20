package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

// A worker's row follows its life: it starts idle, shows the job under way,
// is lost when its heartbeat grows old, and stopped when it leaves; the
// list is newest heartbeat first and can leave out rows older than a time.
func TestWorkersRecordHeartbeatsAndJobs(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		start := time.UnixMilli(1_800_000_000_000).UTC()
		a := backend.Worker{ID: "host-a-1", Host: "host-a", PID: 41, Slots: 2, Version: "test",
			StartedAt: start, HeartbeatAt: start}
		require.NoError(t, f.db.RecordWorker(f.ctx, a))
		got, err := f.db.Workers(f.ctx, time.Time{}, start.Add(time.Second))
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, backend.WorkerIdle, got[0].State)
		require.Equal(t, []backend.WorkerJob{}, got[0].Jobs)
		require.True(t, got[0].StoppedAt.IsZero())

		job := backend.WorkerJob{ID: 7, Kind: "branches", RunID: "run_x", Label: "8 branches of round 1", StartedAt: start.Add(time.Second)}
		a.HeartbeatAt, a.Jobs, a.Done = start.Add(2*time.Second), []backend.WorkerJob{job}, 3
		require.NoError(t, f.db.RecordWorker(f.ctx, a))
		b := backend.Worker{ID: "host-b-1", Host: "host-b", PID: 9, Slots: 1, Version: "test",
			StartedAt: start, HeartbeatAt: start.Add(3 * time.Second)}
		require.NoError(t, f.db.RecordWorker(f.ctx, b))

		now := start.Add(4 * time.Second)
		got, err = f.db.Workers(f.ctx, time.Time{}, now)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, "host-b-1", got[0].ID, "newest heartbeat first")
		require.Equal(t, backend.WorkerWorking, got[1].State)
		require.Equal(t, []backend.WorkerJob{job}, got[1].Jobs)
		require.EqualValues(t, 3, got[1].Done)
		require.Equal(t, start.Add(2*time.Second), got[1].HeartbeatAt)

		got, err = f.db.Workers(f.ctx, time.Time{}, start.Add(2*time.Second+backend.WorkerLostAfter+time.Second))
		require.NoError(t, err)
		require.Equal(t, backend.WorkerLost, got[1].State, "a silent worker is lost")

		b.StoppedAt, b.HeartbeatAt = start.Add(5*time.Second), start.Add(5*time.Second)
		require.NoError(t, f.db.RecordWorker(f.ctx, b))
		got, err = f.db.Workers(f.ctx, start.Add(3*time.Second), now)
		require.NoError(t, err)
		require.Len(t, got, 1, "rows older than since are left out")
		require.Equal(t, backend.WorkerStopped, got[0].State)
	})
}
