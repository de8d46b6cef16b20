package river

import (
	"context"
	"os"
	"slices"
	"sync"
	"time"

	"ducklm/backend"
)

// Recorder keeps a worker's row in the team's database (store.DB does, on
// either dialect: the workers table).
type Recorder interface {
	RecordWorker(ctx context.Context, w backend.Worker) error
}

// heart writes this worker's row: at start, every backend.WorkerHeartbeat,
// soon after a job starts or ends (changes within beatCoalesce share one
// write, so a busy worker does not add a commit per job), and at stop.
type heart struct {
	rec Recorder
	log func(msg string, args ...any)

	mu      sync.Mutex
	row     backend.Worker
	changed chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// beatCoalesce is how long job changes wait to share one write.
const beatCoalesce = 500 * time.Millisecond

func startHeart(ctx context.Context, rec Recorder, id string, slots int, log func(string, ...any)) (*heart, error) {
	host, _ := os.Hostname()
	now := time.Now().UTC()
	h := &heart{rec: rec, log: log, changed: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		row: backend.Worker{ID: id, Host: host, PID: os.Getpid(), Slots: slots, Version: backend.Version,
			StartedAt: now, HeartbeatAt: now, Jobs: []backend.WorkerJob{}}}
	if err := rec.RecordWorker(ctx, h.row); err != nil {
		return nil, err
	}
	go h.loop()
	return h, nil
}

func (h *heart) loop() {
	defer close(h.done)
	tick := time.NewTicker(backend.WorkerHeartbeat)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-tick.C:
		case <-h.changed:
			select {
			case <-h.stop:
				return
			case <-time.After(beatCoalesce):
			}
		}
		h.write(false)
	}
}

func (h *heart) write(stopped bool) {
	h.mu.Lock()
	h.row.HeartbeatAt = time.Now().UTC()
	if stopped {
		h.row.StoppedAt = h.row.HeartbeatAt
	}
	row := h.row
	row.Jobs = slices.Clone(h.row.Jobs)
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.rec.RecordWorker(ctx, row); err != nil {
		h.log("worker heartbeat not recorded", "err", err)
	}
}

func (h *heart) touch() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// begin shows job as under way.
func (h *heart) begin(job backend.WorkerJob) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.row.Jobs = append(h.row.Jobs, job)
	h.mu.Unlock()
	h.touch()
}

// end shows job as finished.
func (h *heart) end(id int64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.row.Jobs = slices.DeleteFunc(h.row.Jobs, func(j backend.WorkerJob) bool { return j.ID == id })
	h.row.Done++
	h.mu.Unlock()
	h.touch()
}

// close writes the row one last time, stopped.
func (h *heart) close() {
	if h == nil {
		return
	}
	close(h.stop)
	<-h.done
	h.mu.Lock()
	h.row.Jobs = []backend.WorkerJob{}
	h.mu.Unlock()
	h.write(true)
}
