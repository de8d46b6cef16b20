package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

// BenchmarkSearch100k searches a stream of 100,000 step results (~300 B of
// payload each, long enough to be stored encoded on SQLite) for text that
// one event holds: plain ASCII (SQL's LIKE over text payloads), letters
// outside ASCII and a regular expression (both through Go).
func BenchmarkSearch100k(b *testing.B) {
	_, l := openBench(b)
	stream := backend.NewID(backend.KindRun)
	ctx := context.Background()
	const n = 100_000
	for done := 0; done < n; done += 5000 {
		events := make([]backend.Event, 5000)
		for i := range events {
			k := done + i
			events[i] = backend.Event{Type: "step.finished", Reality: backend.ExternalReal, Payload: json.RawMessage(fmt.Sprintf(
				`{"step":"s%d","attempt":1,"ok":true,"exitCode":0,"durationMs":%d,"output":{"path":"notes/%d.txt","bytes":%d,"sha256":"%064x"},"critique":{"score":0.9,"explanation":"The step succeeded and produced output.","source":"heuristic"},"checkpointId":"ckp_%032x"}`,
				k, k%97, k, k%5000, k*7919, k*104729))}
		}
		_, err := l.Append(ctx, stream, backend.ExpectAny, events...)
		require.NoError(b, err)
	}
	for _, c := range []struct {
		name string
		text backend.EventText
		want int
	}{
		{"ascii", backend.EventText{Text: "notes/42424.txt"}, 1},
		{"spanning", backend.EventText{Text: `finished ` + stream + ` #42425 {"step":"s42424"`}, 1},
		{"nonascii", backend.EventText{Text: "notes/42424.txt über"}, 0},
		{"regex", backend.EventText{Text: `"path":"notes/42424\.txt","bytes":\d+`, Regex: true}, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				got, err := l.Search(ctx, backend.EventQuery{Stream: stream}, c.text)
				require.NoError(b, err)
				require.Len(b, got, c.want)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/search")
		})
	}
}
