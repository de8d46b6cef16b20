package store_test

import (
	"context"
	"os"
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

// TestFlushSyncsWhatWasDeferred: Flush makes the commits that deferred
// their sync durable with one synced commit, unless a synced commit since
// has; it writes nothing when nothing waits, and refuses to defer itself.
func TestFlushSyncsWhatWasDeferred(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		stream := backend.NewID(backend.KindRun)
		lazy := backend.DeferSync(f.ctx)
		_, err := f.ledger.Append(f.ctx, stream, backend.ExpectAny, ev("a", `{}`))
		require.NoError(t, err)
		synced0, _ := f.db.Commits()
		require.NoError(t, f.ledger.Flush(f.ctx, stream))
		synced, _ := f.db.Commits()
		require.Equal(t, synced0, synced, "nothing was deferred: no commit")

		_, err = f.ledger.Append(lazy, stream, backend.ExpectAny, ev("b", `{}`))
		require.NoError(t, err)
		wal := func() int64 {
			if f.path == "" {
				return 0
			}
			fi, err := os.Stat(f.path + "-wal")
			require.NoError(t, err)
			return fi.Size()
		}
		before := wal()
		require.NoError(t, f.ledger.Flush(f.ctx, stream))
		synced, _ = f.db.Commits()
		require.Equal(t, synced0+1, synced, "one synced commit covers the deferred one")
		require.Equal(t, int64(1), f.db.Flushes(), "it is counted as a flush")
		if f.path != "" {
			require.Greater(t, wal(), before, "the flush wrote a frame to the log, so its commit synced it")
			var v int
			require.NoError(t, f.db.SQL.QueryRowContext(f.ctx, "PRAGMA user_version").Scan(&v))
			require.Zero(t, v, "the flush changed no data")
		}
		require.NoError(t, f.ledger.Flush(f.ctx, stream))
		again, _ := f.db.Commits()
		require.Equal(t, synced, again, "a second flush finds nothing deferred")
		require.Equal(t, int64(1), f.db.Flushes(), "and is not counted")

		_, err = f.ledger.Append(lazy, stream, backend.ExpectAny, ev("c", `{}`))
		require.NoError(t, err)
		_, err = f.ledger.Append(f.ctx, stream, backend.ExpectAny, ev("d", `{}`))
		require.NoError(t, err)
		after, _ := f.db.Commits()
		require.NoError(t, f.ledger.Flush(f.ctx, stream))
		last, _ := f.db.Commits()
		require.Equal(t, after, last, "a synced append after the deferred one made it durable")

		require.Error(t, f.ledger.Flush(lazy, stream), "a flush that would not sync is refused")
		head, err := f.ledger.Head(f.ctx, stream)
		require.NoError(t, err)
		require.EqualValues(t, 4, head, "flushes append nothing")
	})
}
