package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

// On this machine's SQLite there is no team: the view says so with an
// empty list. A worker row (as a worker writes it on PostgreSQL) is listed
// with its heartbeat, state and job.
func TestWorkersListsHeartbeatsAndJobs(t *testing.T) {
	a, svc := setupSvc(t)
	v, err := a.Workers()
	require.NoError(t, err)
	require.False(t, v.Shared)
	require.Empty(t, v.Workers)
	require.NotNil(t, v.Workers, "an empty list, not null, for the window")
	require.Equal(t, backend.WorkerHeartbeat.Milliseconds(), v.HeartbeatMs)

	now := time.Now().UTC().Truncate(time.Millisecond)
	job := backend.WorkerJob{ID: 3, Kind: "branches", RunID: "run_p", Label: "4 branches of round 1", StartedAt: now}
	require.NoError(t, svc.DB.RecordWorker(context.Background(), backend.Worker{ID: "w1", Host: "h", PID: 2, Slots: 1,
		Version: backend.Version, StartedAt: now, HeartbeatAt: now, Jobs: []backend.WorkerJob{job}}))
	require.NoError(t, svc.DB.RecordWorker(context.Background(), backend.Worker{ID: "old", Host: "h", PID: 3, Slots: 1,
		Version: backend.Version, StartedAt: now.Add(-48 * time.Hour), HeartbeatAt: now.Add(-48 * time.Hour)}))
	v, err = a.Workers()
	require.NoError(t, err)
	require.Len(t, v.Workers, 1, "a worker silent for a day is no longer listed")
	require.Equal(t, backend.WorkerWorking, v.Workers[0].State)
	require.Equal(t, []backend.WorkerJob{job}, v.Workers[0].Jobs)
}
