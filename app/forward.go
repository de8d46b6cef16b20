package app

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/bus"
	"ducklm/backend/service"
)

// EventTokens is the window event that carries batches of streamed model
// tokens ([]service.Token); they are not stored, the final message is.
const EventTokens = "run:tokens"

// EventNavigate is the window event that asks the page to show a route
// (api.Opened), sent when a later `ducklm open …` names what to show.
const EventNavigate = "app:navigate"

// EventProgress is the window event that carries the progress of long work
// ([]service.Progress, the latest of each piece of work since the last batch).
const EventProgress = "work:progress"

// EventLedger is the window event that carries batches of committed ledger
// events ([]backend.Event, in commit order).
const EventLedger = "ledger:events"

// Batching keeps a busy run from drowning the window: at most one emit per
// flushEvery, or sooner when a batch reaches flushSize.
const (
	flushEvery = 150 * time.Millisecond
	flushSize  = 500
)

type forwarder struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// forward follows every stream from the position after `after` and emits
// batches to the window until ctx ends.
func forward(ctx context.Context, b *bus.Bus, after int64, emit func([]backend.Event)) *forwarder {
	ctx, cancel := context.WithCancel(ctx)
	f := &forwarder{cancel: cancel, done: make(chan struct{})}
	sub := b.Subscribe(ctx, "", after+1)
	go func() {
		defer close(f.done)
		defer sub.Close()
		ticker := time.NewTicker(flushEvery)
		defer ticker.Stop()
		var batch []backend.Event
		flush := func() {
			if len(batch) > 0 {
				emit(batch)
				batch = nil
			}
		}
		for {
			select {
			case e, ok := <-sub.C():
				if !ok {
					flush()
					return
				}
				batch = append(batch, e)
				if len(batch) >= flushSize {
					flush()
				}
			case <-ticker.C:
				flush()
			}
		}
	}()
	return f
}

func (f *forwarder) stop() {
	f.cancel()
	<-f.done
}

// startup is Wails' OnStartup: it keeps the context and starts forwarding.
func (a *App) startup(ctx context.Context) {
	a.mu.Lock()
	a.ctx = ctx
	a.mu.Unlock()
	// SIGTERM and SIGINT need nothing here: Wails quits the main loop on
	// them itself, and shutdown below runs after it. A second quit of ours
	// raced Wails' window teardown and crashed the process now and then.
	if a.svc == nil {
		return
	}
	// A later launch on the same data directory asks this window forward.
	stop, err := service.ListenRaise(a.svc.Dir, a.raise)
	if err != nil {
		a.log.Warn("second launches cannot raise this window", "err", err)
	}
	a.stopRaise = stop
	// Runs that were moving when ducklm stopped go on; paused runs resume
	// when their model is back.
	runCtx, cancel := context.WithCancel(ctx)
	a.stopRun = cancel
	if resumed, err := a.svc.StartRuntime(runCtx); err != nil {
		a.log.Error("resume runs", "err", err)
	} else if len(resumed) > 0 {
		a.log.Info("resumed runs", "runs", resumed)
	}
	a.stopTokens = forwardHub(ctx, a.svc.Tokens, nil, func(tokens []service.Token) {
		runtime.EventsEmit(ctx, EventTokens, tokens)
	})
	a.stopProgress = forwardHub(ctx, a.svc.Progress, service.LatestProgress, func(p []service.Progress) {
		runtime.EventsEmit(ctx, EventProgress, p)
	})
	head, err := a.svc.Ledger.Count(ctx)
	if err != nil {
		a.log.Error("forward events", "err", err)
		return
	}
	a.fwd = forward(ctx, a.svc.Bus, head, func(events []backend.Event) {
		runtime.EventsEmit(ctx, EventLedger, events)
	})
}

// domReady is Wails' OnDomReady; the smoke test waits for this line.
func (a *App) domReady(ctx context.Context) {
	a.log.Info("window ready")
}

// shutdown is Wails' OnShutdown.
func (a *App) shutdown(ctx context.Context) {
	if a.stopRun != nil {
		a.stopRun()
	}
	if a.stopTokens != nil {
		a.stopTokens()
	}
	if a.stopProgress != nil {
		a.stopProgress()
	}
	if a.fwd != nil {
		a.fwd.stop()
	}
	if a.stopRaise != nil {
		a.stopRaise()
	}
}

// raise brings the window forward (a second launch asked for it).
// A later `ducklm open …` also says what to show: the window navigates there.
func (a *App) raise(open string) {
	ctx := a.context()
	runtime.WindowUnminimise(ctx)
	runtime.WindowShow(ctx)
	if open == "" {
		return
	}
	var req api.OpenRequest
	if err := json.Unmarshal([]byte(open), &req); err != nil {
		a.log.Warn("a later launch sent an open request that is not JSON", "err", err)
		return
	}
	runtime.EventsEmit(ctx, EventNavigate, a.API.Resolve(req))
}

// forwardHub batches what a hub publishes like ledger events: a fast model
// or a busy import must not drown the window. squash, when set, thins a
// batch before it is sent (progress keeps only the latest of each piece of
// work).
func forwardHub[T any](ctx context.Context, hub *service.Hub[T], squash func([]T) []T, emit func([]T)) (stop func()) {
	var mu sync.Mutex
	var batch []T
	cancel := hub.Subscribe(func(t T) {
		mu.Lock()
		batch = append(batch, t)
		mu.Unlock()
	})
	ctx, done := context.WithCancel(ctx)
	go func() {
		ticker := time.NewTicker(flushEvery)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			mu.Lock()
			out := batch
			batch = nil
			mu.Unlock()
			if squash != nil {
				out = squash(out)
			}
			if len(out) > 0 {
				emit(out)
			}
		}
	}()
	return func() { cancel(); done() }
}
