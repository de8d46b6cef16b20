package stepcost_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/service"
)

// BenchmarkServiceStep is what `ducklm run --plan` measures, in one
// process: a chain of file_read steps through the whole stack the CLI
// opens (service.OpenWith: the real tools, the critic's rule of thumb,
// memory), the marginal step being (T200 - T50)/150 of runs on one open
// data directory. Against the CLI's figure it says what the CLI itself
// adds; against BenchmarkLoopTrivialStep (the loop alone, no memory, a
// tool that does nothing) what the rest of the stack does.
func BenchmarkServiceStep(b *testing.B) {
	ctx := context.Background()
	var short, long time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		root := b.TempDir()
		dir, ws := filepath.Join(root, "data"), filepath.Join(root, "ws")
		require.NoError(b, os.MkdirAll(ws, 0o700))
		require.NoError(b, os.WriteFile(filepath.Join(ws, "f.txt"), []byte("hello\n"), 0o600))
		svc, err := service.OpenWith(ctx, dir, service.Options{OllamaHost: noOllama})
		require.NoError(b, err)
		_, err = svc.StartRuntime(ctx)
		require.NoError(b, err)
		b.StartTimer()
		for _, n := range []int{50, 200} {
			t0 := time.Now()
			require.NoError(b, runChain(ctx, svc, ws, "file_read", n))
			if n == 50 {
				short += time.Since(t0)
			} else {
				long += time.Since(t0)
			}
		}
		b.StopTimer()
		svc.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(long-short)/float64(b.N)/150/1e6, "ms/step-marginal")
}
