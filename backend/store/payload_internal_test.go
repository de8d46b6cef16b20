package store

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libtnb/sqlite"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

// realPayloads are the payloads of a database an older ducklm wrote (the
// bundles' v1 fixture: a task run with plans, steps, critiques, memory
// decisions, checkpoints and a fork), and a few more shapes.
func realPayloads(t *testing.T) [][]byte {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "tests", "bundles", "testdata", "v1", "data", "ducklm.db"))
	require.NoError(t, err)
	db, err := sql.Open(sqlite.DriverName, "file:"+path+"?mode=ro&immutable=1")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query("SELECT payload FROM events ORDER BY pos")
	require.NoError(t, err)
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var p []byte
		require.NoError(t, rows.Scan(&p))
		out = append(out, p)
	}
	require.NoError(t, rows.Err())
	require.Greater(t, len(out), 50)
	big, err := json.Marshal(map[string]any{"stdoutTail": strings.Repeat("0123456789abcdef\n", 60000), "exitCode": 0})
	require.NoError(t, err)
	return append(out,
		[]byte(`{"note":"Überfall über den Fluß — 日本語のテキスト, emoji 🦆, and escapes \"\\\u0000\n\t"}`),
		[]byte(`{"run":{"id":"run_01a2","worldId":"wld_01a2","status":"running","worldLocalTime":12,"parentTime":0,"deliberationIndex":0,"baseSeq":0,"createdAt":"2026-12-05T03:00:00Z","updatedAt":"2026-12-05T03:00:00Z"},"state":{"x":[1,2,3]},"done":false}`),
		[]byte(`[1,2,3]`), []byte(`"just a string"`), []byte(`{}`), big,
		[]byte(`{"a":1}`),
	)
}

// TestPayloadEncodingRoundTrips: every payload reads back byte for byte;
// SQLite stores a frame only for payloads of at least minEncodedPayload
// bytes whose frame is smaller, and PostgreSQL never does.
func TestPayloadEncodingRoundTrips(t *testing.T) {
	t.Parallel()
	sqlite, pg := SQLiteDialect(), &Dialect{Name: "postgres"}
	var plain, encoded int
	for _, p := range realPayloads(t) {
		require.Equal(t, string(p), pg.valueString(t, p), "PostgreSQL keeps JSON text")
		switch v := payloadValue(sqlite, backend.ExternalReal, p).(type) {
		case string:
			require.Equal(t, string(p), v)
			back, err := readPayload([]byte(v))
			require.NoError(t, err)
			require.Equal(t, p, back)
			plain += len(p)
		case []byte:
			require.GreaterOrEqual(t, len(p), minEncodedPayload)
			require.Less(t, len(v), len(p))
			require.True(t, bytes.HasPrefix(v, zstdMagic))
			back, err := readPayload(v)
			require.NoError(t, err)
			require.Equal(t, string(p), string(back), "a frame decodes to its payload, byte for byte")
			encoded++
		default:
			t.Fatalf("payloadValue gave a %T", v)
		}
	}
	require.Greater(t, encoded, 40)

	_, err := readPayload(append(append([]byte{}, zstdMagic...), 0xff, 0x00, 0x13))
	require.Error(t, err, "a damaged frame is an error, not garbage")
}

// TestWorldLocalPayloadsStayPlain: a simulated world's or a deliberation
// branch's events are written thousands a second and searched in SQL: they
// keep JSON text however large, on SQLite too.
func TestWorldLocalPayloadsStayPlain(t *testing.T) {
	t.Parallel()
	sqlite := SQLiteDialect()
	for _, p := range realPayloads(t) {
		s, ok := payloadValue(sqlite, backend.WorldLocal, p).(string)
		require.True(t, ok, "a world-local payload of %d B was encoded", len(p))
		require.Equal(t, string(p), s)
	}
}

// valueString is what d stores for p, which must be text.
func (d *Dialect) valueString(t *testing.T, p []byte) string {
	t.Helper()
	s, ok := payloadValue(d, backend.ExternalReal, p).(string)
	require.True(t, ok)
	return s
}

// TestPayloadDictionaryPays measures the dictionary on the fixture's
// payloads: encoded, they take well under half their size.
func TestPayloadDictionaryPays(t *testing.T) {
	t.Parallel()
	var in, out int
	for _, p := range realPayloads(t) {
		if len(p) < minEncodedPayload || len(p) > 64<<10 {
			continue
		}
		in += len(p)
		if f := encodePayload(p); f != nil {
			out += len(f)
		} else {
			out += len(p)
		}
	}
	t.Logf("%d B of payloads stored as %d B (%.2f)", in, out, float64(out)/float64(in))
	require.Less(t, float64(out)/float64(in), 0.5)
}

// stepResult is a step's result as a trivial step records it.
const stepResult = `{"step":"s5","attempt":1,"ok":true,"exitCode":0,"timedOut":false,"truncated":false,"durationMs":0,"output":{"path":"notes/a.txt","bytes":6,"sha256":"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03","content":"hello\n","encoding":"utf-8","truncated":false},"sandboxed":true,"confinement":"workspace","critique":{"score":0.9,"explanation":"The step succeeded and produced output.","source":"heuristic","modelError":"no critic model is available","decision":"noop"},"checkpointId":"ckp_01a2444836777c9ba4a230b614dceece","memory":{"input":{"criticScore":0.9,"memoryType":"observation","runtimeWeight":0.5,"textRunes":61,"dedup":{"exactMatch":true,"nearestSimilarity":1},"safety":{"secretShare":0,"redactable":true}},"memoryId":"mem_01a24448366f769ea3e6feb597520487"}}`

// BenchmarkPayloadEncode and BenchmarkPayloadDecode: the CPU a step's
// result costs to store encoded and to read back.
func BenchmarkPayloadEncode(b *testing.B) {
	p := []byte(stepResult)
	var n int
	for b.Loop() {
		n = len(encodePayload(p))
	}
	b.ReportMetric(float64(n), "B/frame")
	b.ReportMetric(float64(len(p)), "B/json")
}

func BenchmarkPayloadDecode(b *testing.B) {
	frame := encodePayload([]byte(stepResult))
	for b.Loop() {
		if _, err := readPayload(frame); err != nil {
			b.Fatal(err)
		}
	}
}
