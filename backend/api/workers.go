package api

import (
	"time"

	"ducklm/backend"
)

// WorkersView is what the window's workers view shows: the team's `ducklm
// worker` processes as the shared database last heard of them.
type WorkersView struct {
	// Shared is false on this machine's own SQLite database: workers serve
	// a team's PostgreSQL only, and the list is then empty.
	Shared bool `json:"shared"`
	// Workers are the workers heard of within the last day (stopped and
	// lost ones included), most recent heartbeat first.
	Workers []backend.Worker `json:"workers"`
	// HeartbeatMs is how often a worker writes its heartbeat, and LostAfterMs
	// how long a silent one is shown as lost, for the view's own refresh.
	HeartbeatMs int64 `json:"heartbeatMs"`
	LostAfterMs int64 `json:"lostAfterMs"`
	// Now is the time the states were derived at (this process's clock).
	Now time.Time `json:"now"`
}

// workersShownFor is how long after its last heartbeat a worker is listed.
const workersShownFor = 24 * time.Hour

// Workers lists the team's worker processes with their last heartbeat,
// state and current jobs.
func (a *API) Workers() (WorkersView, error) {
	now := time.Now().UTC()
	v := WorkersView{Workers: []backend.Worker{}, HeartbeatMs: backend.WorkerHeartbeat.Milliseconds(),
		LostAfterMs: backend.WorkerLostAfter.Milliseconds(), Now: now}
	if err := a.ready(); err != nil {
		return v, err
	}
	v.Shared = a.svc.DB.Dialect().Name == "postgres"
	ws, err := a.svc.DB.Workers(a.ctx(), now.Add(-workersShownFor), now)
	if err != nil {
		return v, a.fail("workers", err)
	}
	v.Workers = ws
	return v, nil
}
