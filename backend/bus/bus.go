// Package bus delivers committed ledger events to subscribers. It is a
// projection of the ledger, never a source of truth: it publishes only what
// the ledger has committed, replays history from the ledger, and when a
// subscriber falls behind it catches up from the ledger instead of holding
// appends back. Delivery is at least once; consumers deduplicate on
// (stream, seq), and a Subscription already drops what it has delivered.
package bus

import (
	"context"
	"sync"

	"ducklm/backend"
)

// Reader is what the bus needs of the ledger to replay and catch up.
type Reader interface {
	Query(ctx context.Context, q backend.EventQuery) ([]backend.Event, error)
	Since(ctx context.Context, after int64, limit int) ([]backend.Event, error)
}

// pendingLimit bounds what one subscriber holds in memory; past it the
// subscriber is marked behind and re-reads from the ledger.
const pendingLimit = 4096

// catchUpPage is how many events one ledger read fetches while catching up.
const catchUpPage = 2000

// Bus fans committed events out to subscribers.
type Bus struct {
	ledger Reader

	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// New returns a bus that replays from ledger. Wire it with
// ledger.OnCommit(bus.Publish).
func New(ledger Reader) *Bus {
	return &Bus{ledger: ledger, subs: map[*Subscription]struct{}{}}
}

// Publish hands committed events to every interested subscriber. It never
// blocks: a subscriber whose queue is full is flagged to catch up.
func (b *Bus) Publish(events []backend.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.offer(events)
	}
}

// Subscription is one subscriber's ordered view of a stream (or of all
// streams, by global position).
type Subscription struct {
	bus    *Bus
	stream string // "" = all streams

	mu      sync.Mutex
	pending []backend.Event
	behind  bool
	wake    chan struct{}

	out    chan backend.Event
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Subscribe replays stream from fromSeq (1 = from the start) and then goes
// live, without a gap or a duplicate at the switch. With stream == "" it
// follows every stream in commit order, starting after global position
// fromSeq-1. Events arrive on C(); Close ends the subscription.
func (b *Bus) Subscribe(ctx context.Context, stream string, fromSeq int64) *Subscription {
	ctx, cancel := context.WithCancel(ctx)
	s := &Subscription{
		bus:    b,
		stream: stream,
		wake:   make(chan struct{}, 1),
		out:    make(chan backend.Event, 256),
		cancel: cancel,
		done:   make(chan struct{}),
		behind: true, // start by reading history from the ledger
	}
	// Register before the first ledger read so nothing committed in between
	// is missed; what is read twice is dropped by the cursor.
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	if fromSeq < 1 {
		fromSeq = 1
	}
	go s.run(ctx, fromSeq-1)
	return s
}

// C returns the channel events are delivered on; it is closed when the
// subscription ends.
func (s *Subscription) C() <-chan backend.Event { return s.out }

// Close ends the subscription and waits for its goroutine.
func (s *Subscription) Close() {
	s.cancel()
	<-s.done
}

// Err returns why the subscription ended early (a ledger read failed), or nil.
func (s *Subscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

func (s *Subscription) cursorOf(e backend.Event) int64 {
	if s.stream == "" {
		return e.Pos
	}
	return e.Seq
}

func (s *Subscription) offer(events []backend.Event) {
	s.mu.Lock()
	for _, e := range events {
		if s.stream != "" && e.Stream != s.stream {
			continue
		}
		if s.behind || len(s.pending) >= pendingLimit {
			s.behind = true
			s.pending = nil
			break
		}
		s.pending = append(s.pending, e)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Subscription) run(ctx context.Context, cursor int64) {
	defer func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		s.bus.mu.Unlock()
		close(s.out)
		close(s.done)
	}()
	for {
		s.mu.Lock()
		batch, behind := s.pending, s.behind
		s.pending, s.behind = nil, false
		s.mu.Unlock()

		// A gap between the cursor and the queued events means something was
		// dropped (or never queued): read it from the ledger.
		if !behind && len(batch) > 0 && s.cursorOf(batch[0]) > cursor+1 {
			behind = true
		}
		if behind {
			var err error
			if cursor, err = s.catchUp(ctx, cursor); err != nil {
				if ctx.Err() == nil {
					s.err = err
				}
				return
			}
		}
		for _, e := range batch {
			if s.cursorOf(e) <= cursor {
				continue // already delivered by the catch-up
			}
			if !s.send(ctx, e) {
				return
			}
			cursor = s.cursorOf(e)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
	}
}

// catchUp reads from the ledger until it has delivered everything committed.
func (s *Subscription) catchUp(ctx context.Context, cursor int64) (int64, error) {
	for {
		var events []backend.Event
		var err error
		if s.stream == "" {
			events, err = s.bus.ledger.Since(ctx, cursor, catchUpPage)
		} else {
			events, err = s.bus.ledger.Query(ctx, backend.EventQuery{Stream: s.stream, FromSeq: cursor + 1, Limit: catchUpPage})
		}
		if err != nil {
			return cursor, err
		}
		for _, e := range events {
			if !s.send(ctx, e) {
				return cursor, ctx.Err()
			}
			cursor = s.cursorOf(e)
		}
		if len(events) < catchUpPage {
			return cursor, nil
		}
	}
}

func (s *Subscription) send(ctx context.Context, e backend.Event) bool {
	select {
	case s.out <- e:
		return true
	case <-ctx.Done():
		return false
	}
}
