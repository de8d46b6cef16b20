package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

// TestDeferredSyncCommitsAndLeavesConnectionsSynced: an append whose
// context defers its sync commits like any other (read back, in order with
// synced appends around it, concurrent with them, counted apart), and every connection
// the pool holds afterwards still syncs its commits (SQLite: synchronous
// = FULL, 2). How many syncs a step costs is counted in tests/stepcost.
func TestDeferredSyncCommitsAndLeavesConnectionsSynced(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		stream := backend.NewID(backend.KindRun)
		lazy := backend.DeferSync(f.ctx)
		synced0, deferred0 := f.db.Commits()
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := f.ctx
				if i%2 == 0 {
					ctx = lazy
				}
				_, err := f.ledger.Append(ctx, stream, backend.ExpectAny, ev("a", `{}`))
				require.NoError(t, err)
			}()
		}
		wg.Wait()
		_, err := f.ledger.Append(lazy, stream, 8, ev("b", `{}`))
		require.NoError(t, err)
		_, err = f.ledger.Append(lazy, stream, 0, ev("c", `{}`))
		require.Error(t, err, "a deferred append still checks the head")
		all, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: stream})
		require.NoError(t, err)
		require.Len(t, all, 9)
		synced, deferred := f.db.Commits()
		require.EqualValues(t, 4, synced-synced0, "commits that synced")
		require.EqualValues(t, 5, deferred-deferred0, "commits that deferred their sync (the refused one committed nothing)")
		if f.path == "" {
			return
		}
		// Hold every pooled connection at once: each must sync.
		var conns []interface{ Close() error }
		for i := 0; i < 4; i++ {
			conn, err := f.db.SQL.Conn(context.Background())
			require.NoError(t, err)
			conns = append(conns, conn)
			var level int
			require.NoError(t, conn.QueryRowContext(f.ctx, "PRAGMA synchronous").Scan(&level))
			require.Equal(t, 2, level, "connection %d of the pool does not sync its commits", i)
		}
		for _, c := range conns {
			require.NoError(t, c.Close())
		}
	})
}
