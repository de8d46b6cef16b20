package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

// TestSearchMatchesWhatGoMatches checks the database's matching against the
// definition (backend.EventText's matcher over each event's line) for
// needles inside one field, across fields, in #seq, with LIKE's wildcards,
// letters outside ASCII and regular expressions.
func TestSearchMatchesWhatGoMatches(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		a, b := backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)
		payloads := []string{
			`{"kind":"reading","value":7}`, `{"kind":"ALARM","value":17}`, `{"note":"100% done_now"}`,
			`{"note":"Überfall über"}`, `{"note":"a\\b"}`, `{"kind":"alarm level","value":70}`, `{}`,
		}
		for i := 0; i < 40; i++ {
			typ := []string{"world.step", "world.event", "Tool.Result"}[i%3]
			_, err := f.ledger.Append(f.ctx, a, backend.ExpectAny, ev(typ, payloads[i%len(payloads)]))
			require.NoError(t, err)
		}
		_, err := f.ledger.Append(f.ctx, b, 0, ev("world.event", `{"kind":"alarm"}`))
		require.NoError(t, err)
		all, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: a})
		require.NoError(t, err)

		for _, text := range []backend.EventText{
			{Text: "alarm"}, {Text: "ALARM"}, {Text: "tool.result"}, {Text: "#1"}, {Text: "#12"}, {Text: "3"},
			{Text: "100%"}, {Text: "%"}, {Text: "_"}, {Text: "done_now"}, {Text: `a\b`}, {Text: `a\\b`},
			{Text: "über"}, {Text: "ÜBER"}, {Text: "alarm level"}, {Text: "result #4 {"}, {Text: a[:8]},
			{Text: fmt.Sprintf("%s #2 ", a)}, {Text: "step " + a}, {Text: `"value":\s*7\b`, Regex: true},
			{Text: `^world\.event .* #\d+ \{"kind"`, Regex: true}, {Text: "zzz"},
			{Text: `"kind":"(alarm|reading)".*7`, Regex: true}, {Text: `alarm.+\d{2}`, Regex: true}, {Text: `(?:value)+":1?7`, Regex: true},
			{Text: `7\}$`, Regex: true}, {Text: `step run_`, Regex: true}, {Text: `#1\d`, Regex: true}, {Text: `(?-i)ALARM.*7`, Regex: true},
			{Text: a[4:10] + `.*"value":7`, Regex: true}, {Text: `(ab)*alarm%_`, Regex: true}, {Text: `über|value`, Regex: true},
		} {
			match, err := text.Matcher()
			require.NoError(t, err)
			want := []int64{}
			for _, e := range all {
				if match(backend.EventLine(e)) {
					want = append(want, e.Seq)
				}
			}
			got, err := f.ledger.Search(f.ctx, backend.EventQuery{Stream: a}, text)
			require.NoError(t, err)
			require.Equal(t, want, seqs(got), "search %+v", text)
		}

		// Combined with a seq range, a type and a limit; and over every stream.
		q := backend.EventQuery{Stream: a, FromSeq: 5, ToSeq: 38, Types: []string{"world.event"}, Limit: 2}
		want := []int64{}
		for _, e := range all {
			if e.Seq >= q.FromSeq && e.Seq <= q.ToSeq && e.Type == "world.event" && len(want) < q.Limit && strings.Contains(strings.ToLower(string(e.Payload)), "alarm") {
				want = append(want, e.Seq)
			}
		}
		require.Len(t, want, 2)
		got, err := f.ledger.Search(f.ctx, q, backend.EventText{Text: "alarm"})
		require.NoError(t, err)
		require.Equal(t, want, seqs(got))
		both, err := f.ledger.Search(f.ctx, backend.EventQuery{}, backend.EventText{Text: b[len(b)-10:]})
		require.NoError(t, err)
		require.Len(t, both, 1, "a stream's id is part of its lines")

		_, err = f.ledger.Search(f.ctx, backend.EventQuery{Stream: a}, backend.EventText{Text: "(", Regex: true})
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	})
}

// TestSearchFindsTextInEncodedPayloads: payloads long enough to be stored
// encoded (BLOBs on SQLite, which LIKE cannot read) are found as the Go
// definition finds them, beside short payloads kept as text: plain ASCII,
// letters outside ASCII, regular expressions, needles across fields.
func TestSearchFindsTextInEncodedPayloads(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		a := backend.NewID(backend.KindRun)
		filler := `,"detail":"The step succeeded and produced output; this sentence pads the payload past the size that is encoded."`
		payloads := []string{
			`{"kind":"reading","value":7` + filler + `}`, `{"kind":"ALARM","value":17` + filler + `}`, `{"note":"100% done_now"` + filler + `}`,
			`{"note":"Überfall über"` + filler + `}`, `{"note":"a\\b"` + filler + `}`, `{"kind":"alarm level","value":70` + filler + `}`,
			`{"kind":"alarm","value":7}`, `{"note":"über"}`,
		}
		for i := 0; i < 40; i++ {
			typ := []string{"world.step", "world.event", "Tool.Result"}[i%3]
			_, err := f.ledger.Append(f.ctx, a, backend.ExpectAny, ev(typ, payloads[i%len(payloads)]))
			require.NoError(t, err)
		}
		if f.path != "" {
			var blobs int
			require.NoError(t, f.db.SQL.QueryRowContext(f.ctx, "SELECT count(*) FROM events WHERE typeof(payload) = 'blob'").Scan(&blobs))
			require.Equal(t, 30, blobs, "the long payloads are stored encoded")
		}
		all, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: a})
		require.NoError(t, err)

		for _, text := range []backend.EventText{
			{Text: "alarm"}, {Text: "ALARM"}, {Text: "tool.result"}, {Text: "#1"}, {Text: "#12"}, {Text: "3"},
			{Text: "100%"}, {Text: "_"}, {Text: "done_now"}, {Text: `a\\b`}, {Text: "PADS the payload"},
			{Text: "über"}, {Text: "ÜBER"}, {Text: "Überfall über"}, {Text: "alarm level"}, {Text: "result #4 {"},
			{Text: fmt.Sprintf("%s #2 {", a)}, {Text: "step " + a}, {Text: "zzz"}, {Text: a[:8]},
			{Text: `"value":\s*7\b`, Regex: true}, {Text: `^world\.event .* #\d+ \{"kind"`, Regex: true},
			{Text: `"kind":"(alarm|reading)".*7`, Regex: true}, {Text: `über|value`, Regex: true}, {Text: `7\}$`, Regex: true},
			{Text: `succeeded.*encoded`, Regex: true}, {Text: `(?-i)ALARM.*7`, Regex: true}, {Text: `step run_.*done`, Regex: true},
		} {
			match, err := text.Matcher()
			require.NoError(t, err)
			want := []int64{}
			for _, e := range all {
				if match(backend.EventLine(e)) {
					want = append(want, e.Seq)
				}
			}
			got, err := f.ledger.Search(f.ctx, backend.EventQuery{Stream: a}, text)
			require.NoError(t, err)
			require.Equal(t, want, seqs(got), "search %+v", text)
			any, err := f.ledger.Search(f.ctx, backend.EventQuery{Limit: 5}, text)
			require.NoError(t, err)
			require.Equal(t, want[:min(5, len(want))], seqs(any), "search %+v over every stream", text)
		}
	})
}
