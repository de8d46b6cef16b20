package store_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

func ev(typ string, payload string) backend.Event {
	return backend.Event{Type: typ, Payload: json.RawMessage(payload), Reality: backend.ExternalReal}
}

func TestAppendAssignsGapFreeSeqAndClocks(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		stream := backend.NewID(backend.KindRun)

		first, err := f.ledger.Append(f.ctx, stream, 0, ev("a", `{"n": 1}`))
		require.NoError(t, err)
		require.Len(t, first, 1)
		require.EqualValues(t, 1, first[0].Seq)
		require.Equal(t, `{"n":1}`, string(first[0].Payload), "payload is stored compact")
		require.NoError(t, backend.CheckID(first[0].ID, backend.KindEvent))

		batch := []backend.Event{ev("b", `{}`), ev("c", `[1,2]`), ev("d", `"x"`)}
		batch[1].ParentTime, batch[1].DeliberationIndex, batch[1].WorldLocalTime = 7, 3, 11
		got, err := f.ledger.Append(f.ctx, stream, 1, batch...)
		require.NoError(t, err)
		require.Len(t, got, 3)
		for i, e := range got {
			require.EqualValues(t, i+2, e.Seq)
		}

		all, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: stream})
		require.NoError(t, err)
		require.Len(t, all, 4)
		require.Equal(t, []string{"a", "b", "c", "d"}, types(all))
		require.EqualValues(t, 7, all[2].ParentTime)
		require.EqualValues(t, 3, all[2].DeliberationIndex)
		require.EqualValues(t, 11, all[2].WorldLocalTime)

		head, err := f.ledger.Head(f.ctx, stream)
		require.NoError(t, err)
		require.EqualValues(t, 4, head)
	})
}

func TestAppendExpectedSeqConflict(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		stream := backend.NewID(backend.KindRun)
		_, err := f.ledger.Append(f.ctx, stream, 0, ev("a", `{}`))
		require.NoError(t, err)

		_, err = f.ledger.Append(f.ctx, stream, 0, ev("b", `{}`))
		require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))
		require.Contains(t, err.Error(), "expected seq 0")

		head, err := f.ledger.Head(f.ctx, stream)
		require.NoError(t, err)
		require.EqualValues(t, 1, head, "a refused append writes nothing")
	})
}

func TestAppendSameIDIsIdempotent(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		stream := backend.NewID(backend.KindRun)
		e := ev("a", `{"k":"v"}`)
		e.ID = backend.NewID(backend.KindEvent)

		_, err := f.ledger.Append(f.ctx, stream, 0, e)
		require.NoError(t, err)
		// A retry that states the head it saw before its first try is still a no-op.
		again, err := f.ledger.Append(f.ctx, stream, 0, e)
		require.NoError(t, err)
		require.Empty(t, again)

		changed := e
		changed.Payload = json.RawMessage(`{"k":"other"}`)
		_, err = f.ledger.Append(f.ctx, stream, backend.ExpectAny, changed)
		require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))

		head, err := f.ledger.Head(f.ctx, stream)
		require.NoError(t, err)
		require.EqualValues(t, 1, head)
	})
}

func TestAppendRejectsBadInput(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		stream := backend.NewID(backend.KindRun)
		cases := map[string]struct {
			stream string
			events []backend.Event
		}{
			"bad payload":      {stream, []backend.Event{ev("a", `{nope`)}},
			"no type":          {stream, []backend.Event{ev("", `{}`)}},
			"bad reality":      {stream, []backend.Event{{Type: "a", Reality: "imagined"}}},
			"mixed reality":    {stream, []backend.Event{ev("a", `{}`), {Type: "b", Reality: backend.WorldLocal}}},
			"wrong id kind":    {stream, []backend.Event{{ID: backend.NewID(backend.KindRun), Type: "a", Reality: backend.ExternalReal}}},
			"bad stream":       {"not-an-id", []backend.Event{ev("a", `{}`)}},
			"negative clock":   {stream, []backend.Event{{Type: "a", Reality: backend.ExternalReal, WorldLocalTime: -1}}},
			"other stream set": {stream, []backend.Event{{Stream: backend.NewID(backend.KindRun), Type: "a", Reality: backend.ExternalReal}}},
		}
		for name, c := range cases {
			_, err := f.ledger.Append(f.ctx, c.stream, backend.ExpectAny, c.events...)
			require.Equal(t, backend.EINVALID, backend.ErrorCode(err), name)
		}
		n, err := f.ledger.Count(f.ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func TestWorldLocalNeverBecomesExternalReal(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		sim := backend.NewID(backend.KindRun)
		local := backend.Event{ID: backend.NewID(backend.KindEvent), Type: "moved", Reality: backend.WorldLocal, WorldLocalTime: 1}
		_, err := f.ledger.Append(f.ctx, sim, 0, local)
		require.NoError(t, err)

		// The same fact cannot be re-recorded as external-real, on its stream or another.
		promoted := local
		promoted.Reality = backend.ExternalReal
		_, err = f.ledger.Append(f.ctx, sim, backend.ExpectAny, promoted)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
		_, err = f.ledger.Append(f.ctx, backend.NewID(backend.KindRun), backend.ExpectAny, promoted)
		require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))

		// And the database refuses to rewrite it.
		err = f.exec("UPDATE events SET reality = 'external_real' WHERE id = ?", local.ID)
		require.ErrorContains(t, err, "immutable")
		err = f.exec("UPDATE streams SET reality = 'external_real' WHERE id = ?", sim)
		require.ErrorContains(t, err, "reality cannot change")
		err = f.exec("DELETE FROM events")
		require.ErrorContains(t, err, "immutable")
	})
}

func TestQueryFilters(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		a, b := backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)
		for i := 0; i < 10; i++ {
			_, err := f.ledger.Append(f.ctx, a, backend.ExpectAny, ev(fmt.Sprintf("t%d", i%3), `{}`))
			require.NoError(t, err)
		}
		_, err := f.ledger.Append(f.ctx, b, 0, backend.Event{Type: "t0", Reality: backend.WorldLocal})
		require.NoError(t, err)

		rng, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: a, FromSeq: 3, ToSeq: 5})
		require.NoError(t, err)
		require.Equal(t, []int64{3, 4, 5}, seqs(rng))

		t0, err := f.ledger.Query(f.ctx, backend.EventQuery{Types: []string{"t0"}})
		require.NoError(t, err)
		require.Len(t, t0, 5) // 4 in a, 1 in b, in pos order
		require.Equal(t, b, t0[4].Stream)

		local, err := f.ledger.Query(f.ctx, backend.EventQuery{Reality: backend.WorldLocal})
		require.NoError(t, err)
		require.Len(t, local, 1)

		page, err := f.ledger.Page(f.ctx, a, 0, 4)
		require.NoError(t, err)
		require.Equal(t, []int64{10, 9, 8, 7}, seqs(page.Events))
		page, err = f.ledger.Page(f.ctx, a, page.Next, 4)
		require.NoError(t, err)
		require.Equal(t, []int64{6, 5, 4, 3}, seqs(page.Events))
		page, err = f.ledger.Page(f.ctx, a, page.Next, 4)
		require.NoError(t, err)
		require.Equal(t, []int64{2, 1}, seqs(page.Events))
		require.Zero(t, page.Next)

		since, err := f.ledger.Since(f.ctx, 9, 100)
		require.NoError(t, err)
		require.Len(t, since, 2)

		_, err = f.ledger.Query(f.ctx, backend.EventQuery{FromSeq: 2})
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))

		got, err := f.ledger.Get(f.ctx, since[0].ID)
		require.NoError(t, err)
		require.Equal(t, since[0].ID, got.ID)
		_, err = f.ledger.Get(f.ctx, backend.NewID(backend.KindEvent))
		require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	})
}

func TestConcurrentAppendsStayGapFree(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		stream := backend.NewID(backend.KindRun)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 25; i++ {
					_, err := f.ledger.Append(f.ctx, stream, backend.ExpectAny, ev("x", `{}`), ev("y", `{}`))
					require.NoError(t, err)
				}
			}()
		}
		wg.Wait()
		all, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: stream})
		require.NoError(t, err)
		require.Len(t, all, 400)
		for i, e := range all {
			require.EqualValues(t, i+1, e.Seq)
		}
	})
}

func TestOnCommitSeesOnlyCommittedEventsInOrder(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		var got []int64
		f.ledger.OnCommit(func(events []backend.Event) {
			for _, e := range events {
				got = append(got, e.Pos)
			}
		})
		stream := backend.NewID(backend.KindRun)
		_, err := f.ledger.Append(f.ctx, stream, 0, ev("a", `{}`), ev("b", `{}`))
		require.NoError(t, err)
		_, err = f.ledger.Append(f.ctx, stream, 0, ev("refused", `{}`))
		require.Error(t, err)
		_, err = f.ledger.Append(f.ctx, stream, 2, ev("c", `{}`))
		require.NoError(t, err)
		require.Equal(t, []int64{1, 2, 3}, got)
	})
}

func types(events []backend.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

func seqs(events []backend.Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}
