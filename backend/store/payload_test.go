package store_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/store"
)

// longPayloads are payloads long enough to be stored encoded on SQLite,
// with one too short to be, in ducklm's shapes and not.
func longPayloads() []string {
	return []string{
		`{"step":"s5","attempt":1,"ok":true,"exitCode":0,"timedOut":false,"truncated":false,"durationMs":0,"output":{"path":"notes/a.txt","bytes":6,"sha256":"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03","content":"hello\n","encoding":"utf-8","truncated":false},"sandboxed":true,"confinement":"workspace","critique":{"score":0.9,"explanation":"The step succeeded and produced output.","source":"heuristic","modelError":"no critic model is available","decision":"noop"},"checkpointId":"ckp_01a2444836777c9ba4a230b614dceece"}`,
		`{"step":"s6","attempt":1,"tool":"file_read","args":{"path":"f.txt"},"sandboxed":true,"network":false,"decision":{"type":"tool","payload":{"step":"s6","tool":"file_read","network":false},"requires_permission":false,"confidence":1,"reason":"Step \"s6\" is ready, so file_read runs it."}}`,
		`{"note":"Überfall über den Fluß: ein Bericht über 40 Schritte, mit Umlauten und ß, damit die Suche außerhalb von ASCII etwas findet. ÜBER ALLES"}`,
		`{"n":1}`,
		`{"output":"` + strings.Repeat("line of tool output 0123456789\\n", 4000) + `"}`,
	}
}

// TestEncodedPayloadsReadBackAsTheirJSON: whatever the store keeps, every
// read gives the payload's JSON back exactly; SQLite keeps long payloads
// as frames (BLOBs), PostgreSQL as text; a retry compares JSON with JSON.
func TestEncodedPayloadsReadBackAsTheirJSON(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		var mu sync.Mutex
		var published []backend.Event
		f.ledger.OnCommit(func(es []backend.Event) {
			mu.Lock()
			published = append(published, es...)
			mu.Unlock()
		})
		stream := backend.NewID(backend.KindRun)
		payloads := longPayloads()
		events := make([]backend.Event, len(payloads))
		for i, p := range payloads {
			events[i] = ev("step.finished", p)
			events[i].ID = backend.NewID(backend.KindEvent)
		}
		stored, err := f.ledger.Append(f.ctx, stream, 0, events...)
		require.NoError(t, err)
		want := func(got []backend.Event) {
			t.Helper()
			require.Len(t, got, len(payloads))
			for i, e := range got {
				require.Equal(t, payloads[e.Seq-1], string(e.Payload), "event %d", i)
			}
		}
		want(stored)
		mu.Lock()
		want(published)
		mu.Unlock()

		all, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: stream})
		require.NoError(t, err)
		want(all)
		page, err := f.ledger.Page(f.ctx, stream, 0, 100)
		require.NoError(t, err)
		want(page.Events)
		since, err := f.ledger.Since(f.ctx, stored[0].Pos-1, 100)
		require.NoError(t, err)
		want(since)
		one, err := f.ledger.Get(f.ctx, events[0].ID)
		require.NoError(t, err)
		require.Equal(t, payloads[0], string(one.Payload))

		if f.path != "" {
			var blobs, texts int
			require.NoError(t, f.db.SQL.QueryRowContext(f.ctx,
				"SELECT count(*) FILTER (WHERE typeof(payload) = 'blob'), count(*) FILTER (WHERE typeof(payload) = 'text') FROM events WHERE stream_id = ?", stream).
				Scan(&blobs, &texts))
			require.Equal(t, len(payloads)-1, blobs, "every payload of 128 B or more is encoded")
			require.Equal(t, 1, texts, "a short payload stays text")
		}

		// A retry with the same content is a no-op; other content under a
		// stored id is a conflict.
		again, err := f.ledger.Append(f.ctx, stream, 0, events...)
		require.NoError(t, err)
		require.Empty(t, again)
		changed := events[0]
		changed.Payload = json.RawMessage(strings.Replace(payloads[0], `"s5"`, `"s7"`, 1))
		_, err = f.ledger.Append(f.ctx, stream, backend.ExpectAny, changed)
		require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))

		// An import of what is stored is a no-op, and into a new stream it
		// reads back the same.
		recorded := make([]backend.Event, len(stored))
		copy(recorded, stored)
		require.NoError(t, f.ledger.Import(f.ctx, func(tx *store.ImportTx) error {
			n, err := tx.AppendEvents(stream, backend.ExternalReal, recorded)
			require.Zero(t, n)
			return err
		}))
		other := backend.NewID(backend.KindRun)
		moved := make([]backend.Event, len(stored))
		for i, e := range stored {
			e.ID, e.Stream = backend.NewID(backend.KindEvent), other
			e.RecordedAt = time.Now().UTC()
			moved[i] = e
		}
		require.NoError(t, f.ledger.Import(f.ctx, func(tx *store.ImportTx) error {
			_, err := tx.AppendEvents(other, backend.ExternalReal, moved)
			return err
		}))
		imported, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: other})
		require.NoError(t, err)
		want(imported)

		// New streams appended together read back the same too.
		a, b := backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)
		batch := func() []backend.Event {
			out := make([]backend.Event, len(payloads))
			for i, p := range payloads {
				out[i] = backend.Event{Type: "world.step", Reality: backend.WorldLocal, Payload: json.RawMessage(p)}
			}
			return out
		}
		_, err = f.ledger.AppendNewStreams(f.ctx, []string{a, b}, [][]backend.Event{batch(), batch()}, nil)
		require.NoError(t, err)
		for _, s := range []string{a, b} {
			got, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: s})
			require.NoError(t, err)
			want(got)
		}
	})
}

// TestPlainPayloadsWrittenBeforeReadUnchanged: a database whose payloads
// are all JSON text (every database before payload encoding) reads as it
// did, beside encoded rows.
func TestPlainPayloadsWrittenBeforeReadUnchanged(t *testing.T) {
	t.Parallel()
	f := setup(t)
	stream := backend.NewID(backend.KindRun)
	_, err := f.ledger.Append(f.ctx, stream, 0, ev("a", `{"k":"v"}`))
	require.NoError(t, err)
	long := longPayloads()[0]
	// As an older ducklm wrote it: text, however long.
	require.NoError(t, f.exec(`INSERT INTO events (pos, id, stream_id, seq, type, schema_version, payload, reality, causation_id, correlation_id, recorded_at, parent_time, deliberation_index, world_local_time)
		VALUES ((SELECT max(pos) + 1 FROM events), ?, ?, 2, 'b', 1, ?, 'external_real', '', '', 0, 0, 0, 0)`, backend.NewID(backend.KindEvent), stream, long))
	require.NoError(t, f.exec(`UPDATE streams SET head_seq = 2 WHERE id = ?`, stream))
	_, err = f.ledger.Append(f.ctx, stream, 2, ev("c", long))
	require.NoError(t, err)
	all, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: stream})
	require.NoError(t, err)
	require.Equal(t, []string{`{"k":"v"}`, long, long}, []string{string(all[0].Payload), string(all[1].Payload), string(all[2].Payload)})
	var kinds string
	require.NoError(t, f.db.SQL.QueryRowContext(f.ctx, "SELECT group_concat(typeof(payload), ',') FROM (SELECT payload FROM events WHERE stream_id = ? ORDER BY seq)", stream).Scan(&kinds))
	require.Equal(t, "text,text,blob", kinds)
	for _, text := range []string{"succeeded and produced", "s5", "ckp_01a2444836777c9ba4a230b614dceece"} {
		got, err := f.ledger.Search(f.ctx, backend.EventQuery{Stream: stream}, backend.EventText{Text: text})
		require.NoError(t, err)
		require.Equal(t, []int64{2, 3}, seqs(got), "search %q", text)
	}
}

// TestDamagedEncodedPayloadIsCorrupt: a frame that does not decode is
// reported as damaged data, never handed on as a payload.
func TestDamagedEncodedPayloadIsCorrupt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	stream := backend.NewID(backend.KindRun)
	_, err := f.ledger.Append(f.ctx, stream, 0, ev("a", `{"k":"v"}`))
	require.NoError(t, err)
	require.NoError(t, f.exec(`INSERT INTO events (pos, id, stream_id, seq, type, schema_version, payload, reality, causation_id, correlation_id, recorded_at, parent_time, deliberation_index, world_local_time)
		VALUES ((SELECT max(pos) + 1 FROM events), ?, ?, 2, 'b', 1, ?, 'external_real', '', '', 0, 0, 0, 0)`,
		backend.NewID(backend.KindEvent), stream, []byte{0x28, 0xB5, 0x2F, 0xFD, 0xff, 0x00, 0x13, 0x37}))
	_, err = f.ledger.Query(f.ctx, backend.EventQuery{Stream: stream})
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
	_, err = f.ledger.Search(f.ctx, backend.EventQuery{Stream: stream}, backend.EventText{Text: "über"})
	require.Error(t, err)
}
