package backend

import "time"

// Worker is one `ducklm worker` process as the team's database last heard
// of it: each worker writes its row when it starts, at every heartbeat
// (WorkerHeartbeat) and when it starts or ends a job, and marks it stopped
// when it leaves. The window's workers view lists these.
type Worker struct {
	// ID names the worker (host-pid-random); River's tables use the same id.
	ID string `json:"id"`
	// Host is the worker's machine (its host name) and PID its process there.
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Slots is how many jobs it runs at once.
	Slots int `json:"slots"`
	// Version is the ducklm version the worker runs.
	Version   string    `json:"version"`
	StartedAt time.Time `json:"startedAt"`
	// HeartbeatAt is when it last said it was alive.
	HeartbeatAt time.Time `json:"heartbeatAt"`
	// StoppedAt is when it left the queue cleanly (zero while it works, or
	// when it died: then its heartbeat simply grows old).
	StoppedAt time.Time `json:"stoppedAt"`
	// State is derived when read: "working" (a job under way), "idle",
	// "stopped" (it left), or "lost" (no heartbeat for WorkerLostAfter).
	State WorkerState `json:"state"`
	// Jobs are the jobs under way, oldest first; empty when idle.
	Jobs []WorkerJob `json:"jobs"`
	// Done counts the jobs it finished (completed or failed) since it started.
	Done int64 `json:"done"`
}

// WorkerJob is a job a worker is running.
type WorkerJob struct {
	// ID is the job's id in the work queue (River's river_job.id).
	ID int64 `json:"id"`
	// Kind is what the job does: "branches" (deliberation branches), later
	// "world_run" and "task_step".
	Kind string `json:"kind"`
	// RunID is the run the job serves: a deliberation's parent run, the
	// world run it advances, the task run whose step it is.
	RunID string `json:"runId"`
	// Label says what it does in a few words ("8 branches of round 2").
	Label     string    `json:"label"`
	StartedAt time.Time `json:"startedAt"`
}

// WorkerState is a worker's state as read from its row.
type WorkerState string

// Worker states.
const (
	WorkerWorking WorkerState = "working"
	WorkerIdle    WorkerState = "idle"
	WorkerStopped WorkerState = "stopped"
	WorkerLost    WorkerState = "lost"
)

// WorkerHeartbeat is how often a worker writes its row; a worker silent
// for WorkerLostAfter is shown as lost (killed, its machine or network gone).
const (
	WorkerHeartbeat = 5 * time.Second
	WorkerLostAfter = 3 * WorkerHeartbeat
)

// StateAt derives w's state at now from its row.
func (w Worker) StateAt(now time.Time) WorkerState {
	switch {
	case !w.StoppedAt.IsZero():
		return WorkerStopped
	case now.Sub(w.HeartbeatAt) > WorkerLostAfter:
		return WorkerLost
	case len(w.Jobs) > 0:
		return WorkerWorking
	}
	return WorkerIdle
}
