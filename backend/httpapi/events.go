package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/service"
)

// The window's event names (app/forward.go), which the browser receives as
// SSE event names.
const (
	EventLedger   = "ledger:events"
	EventTokens   = "run:tokens"
	EventProgress = "work:progress"
)

// Batching as the window batches: at most one message per flushEvery for
// each event name, or sooner when a ledger batch reaches flushSize.
const (
	flushEvery = 150 * time.Millisecond
	flushSize  = 500
	// maxPendingTokens bounds what a slow browser makes the server hold;
	// tokens are not stored (the final message is an event), so past it
	// they are dropped.
	maxPendingTokens = 20000
	// writeTimeout drops a browser that stopped reading.
	writeTimeout = 30 * time.Second
	// defaultHeartbeat keeps proxies and idle timeouts from closing a quiet stream.
	defaultHeartbeat = 15 * time.Second
)

// serveEvents streams committed ledger events (from the current head, or
// after the Last-Event-ID a reconnecting EventSource sends) and streamed
// tokens until the browser goes away or the server closes.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, "the event stream is read with GET")
		return
	}
	stop, ok := s.openStream()
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "ducklm serve is shutting down")
		return
	}
	defer s.closeStream(stop)
	ctx := r.Context()
	head, err := s.svc.Ledger.Count(ctx)
	if err != nil {
		s.log.Error("event stream", "err", err)
		writeError(w, http.StatusInternalServerError, backend.ErrorMessage(err))
		return
	}
	after := head
	// A reconnecting EventSource says the last position it received, so
	// nothing committed while it was away is lost.
	if id, err := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64); err == nil && id >= 0 && id < head {
		after = id
	}
	sub := s.svc.Bus.Subscribe(ctx, "", after+1)
	defer sub.Close()

	var tmu sync.Mutex
	var tokens []service.Token
	cancelTokens := s.svc.Tokens.Subscribe(func(t service.Token) {
		tmu.Lock()
		if len(tokens) < maxPendingTokens {
			tokens = append(tokens, t)
		}
		tmu.Unlock()
	})
	defer cancelTokens()
	var progress []service.Progress
	cancelProgress := s.svc.Progress.Subscribe(func(p service.Progress) {
		tmu.Lock()
		progress = service.LatestProgress(append(progress, p))
		tmu.Unlock()
	})
	defer cancelProgress()

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(chunk string) bool {
		if err := rc.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false
		}
		if _, err := w.Write([]byte(chunk)); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// The comment opens the stream at once, so the browser's EventSource
	// reports it open before the first event.
	if !send("retry: 2000\n: connected\n\n") {
		return
	}
	event := func(name string, id int64, v any) bool {
		data, err := json.Marshal(v)
		if err != nil {
			s.log.Error("event stream", "event", name, "err", err)
			return true
		}
		idLine := ""
		if id > 0 {
			idLine = fmt.Sprintf("id: %d\n", id)
		}
		return send(fmt.Sprintf("event: %s\n%sdata: %s\n\n", name, idLine, data))
	}

	ticker := time.NewTicker(flushEvery)
	defer ticker.Stop()
	heartbeat := time.NewTicker(s.heartbeat)
	defer heartbeat.Stop()
	var batch []backend.Event
	flushLedger := func() bool {
		if len(batch) == 0 {
			return true
		}
		ok := event(EventLedger, batch[len(batch)-1].Pos, batch)
		batch = nil
		return ok
	}
	for {
		select {
		case e, ok := <-sub.C():
			if !ok {
				// The bus stopped (the browser left, or a ledger read
				// failed): the EventSource reconnects from its last id.
				if err := sub.Err(); err != nil {
					s.log.Error("event stream", "err", err)
				}
				flushLedger()
				return
			}
			batch = append(batch, e)
			if len(batch) >= flushSize && !flushLedger() {
				return
			}
		case <-ticker.C:
			if !flushLedger() {
				return
			}
			tmu.Lock()
			out, work := tokens, progress
			tokens, progress = nil, nil
			tmu.Unlock()
			if len(out) > 0 && !event(EventTokens, 0, out) {
				return
			}
			if len(work) > 0 && !event(EventProgress, 0, work) {
				return
			}
		case <-heartbeat.C:
			if !send(": heartbeat\n\n") {
				return
			}
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// openStream registers an event stream; the channel closes when the server
// closes.
func (s *Server) openStream() (chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	c := make(chan struct{})
	s.streams[c] = struct{}{}
	return c, true
}

func (s *Server) closeStream(c chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.streams[c]; ok {
		delete(s.streams, c)
		close(c)
	}
}
