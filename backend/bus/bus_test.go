package bus_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bus"
	"ducklm/backend/store"
)

type fixture struct {
	ctx    context.Context
	ledger *store.Ledger
	bus    *bus.Bus
}

func setup(t *testing.T) fixture {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ducklm.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	l := store.NewLedger(db)
	b := bus.New(l)
	l.OnCommit(b.Publish)
	return fixture{ctx: context.Background(), ledger: l, bus: b}
}

func appendN(t *testing.T, f fixture, stream string, n int) {
	t.Helper()
	events := make([]backend.Event, n)
	for i := range events {
		events[i] = backend.Event{Type: "tick", Reality: backend.ExternalReal}
	}
	_, err := f.ledger.Append(f.ctx, stream, backend.ExpectAny, events...)
	require.NoError(t, err)
}

func collect(t *testing.T, sub *bus.Subscription, n int) []backend.Event {
	t.Helper()
	// The bound is on a stall, not on the whole: catching up 10,000
	// events under -race on a loaded machine took over 10 s once, and
	// what matters is that delivery never stops.
	const stall = 30 * time.Second
	var got []backend.Event
	timer := time.NewTimer(stall)
	defer timer.Stop()
	for len(got) < n {
		select {
		case e, ok := <-sub.C():
			require.True(t, ok, "subscription ended early: %v", sub.Err())
			got = append(got, e)
			timer.Reset(stall)
		case <-timer.C:
			t.Fatalf("got %d of %d events, then none for %s", len(got), n, stall)
		}
	}
	return got
}

func requireSeqs(t *testing.T, events []backend.Event, from int64) {
	t.Helper()
	for i, e := range events {
		require.Equal(t, from+int64(i), e.Seq, "event %d", i)
	}
}

func TestReplayThenLiveWithoutGapOrDuplicate(t *testing.T) {
	t.Parallel()
	f := setup(t)
	stream := backend.NewID(backend.KindRun)
	appendN(t, f, stream, 50)

	sub := f.bus.Subscribe(f.ctx, stream, 10)
	defer sub.Close()
	// Appends race with the replay on purpose.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 30; i++ {
			appendN(t, f, stream, 5)
		}
	}()
	got := collect(t, sub, 41+150)
	wg.Wait()
	requireSeqs(t, got, 10)
	select {
	case e := <-sub.C():
		t.Fatalf("unexpected extra event seq %d", e.Seq)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestSubscriptionFiltersItsStream(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a, b := backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)
	sub := f.bus.Subscribe(f.ctx, a, 1)
	defer sub.Close()
	appendN(t, f, b, 3)
	appendN(t, f, a, 2)
	got := collect(t, sub, 2)
	for _, e := range got {
		require.Equal(t, a, e.Stream)
	}
}

func TestSlowSubscriberNeverBlocksAppendsAndCatchesUp(t *testing.T) {
	t.Parallel()
	f := setup(t)
	stream := backend.NewID(backend.KindRun)
	sub := f.bus.Subscribe(f.ctx, stream, 1)
	defer sub.Close()

	// Nobody reads while far more than the in-memory queue is appended.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			appendN(t, f, stream, 500)
		}
	}()
	// Blocked appends never finish; the bound is only there to end the
	// test, generous because 20 durable commits under -race on a loaded
	// machine took over 30 s once.
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Fatal("appends were blocked by a subscriber that does not read")
	}
	got := collect(t, sub, 10000)
	requireSeqs(t, got, 1)
}

func TestAllStreamsSubscriptionFollowsCommitOrder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a, b := backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)
	appendN(t, f, a, 2)
	sub := f.bus.Subscribe(f.ctx, "", 1)
	defer sub.Close()
	appendN(t, f, b, 2)
	appendN(t, f, a, 1)
	got := collect(t, sub, 5)
	for i, e := range got {
		require.EqualValues(t, i+1, e.Pos)
	}
	require.Equal(t, []string{a, a, b, b, a}, []string{got[0].Stream, got[1].Stream, got[2].Stream, got[3].Stream, got[4].Stream})
}

func TestCloseEndsSubscription(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sub := f.bus.Subscribe(f.ctx, backend.NewID(backend.KindRun), 1)
	sub.Close()
	_, ok := <-sub.C()
	require.False(t, ok)
	require.NoError(t, sub.Err())
}
