package memory_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
)

func TestPagesWalkEveryMemoryNewestFirstOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// Two memories share a creation time: the id breaks the tie, so
	// neither is skipped nor repeated across a page boundary.
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := []time.Time{at, at.Add(time.Second), at.Add(time.Second), at.Add(2 * time.Second), at.Add(3 * time.Second)}
	i := 0
	s, err := memory.Open(f.ctx, memory.Options{Repo: f.repo, Now: func() time.Time { return clock[min(i, len(clock)-1)] }})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	topics := []string{"nginx listens on port 8080", "postgres keeps its data in /var/lib/postgresql",
		"the backup job runs at three in the morning", "the build needs Go 1.26 and Node 20", "logs rotate weekly with logrotate"}
	var ids []string
	for _, topic := range topics {
		d, err := s.Consider(f.ctx, f.candidate("On this host "+topic+"."))
		require.NoError(t, err)
		require.Equal(t, mp.Store, d.Decision.Action, d.Decision.Reason)
		ids = append(ids, d.MemoryID)
		i++
	}

	var seen []string
	q := memory.ListQuery{Limit: 2}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5, "the pages end")
		p, err := s.Page(f.ctx, q)
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Memories), 2)
		for _, m := range p.Memories {
			seen = append(seen, m.ID)
		}
		if p.Next == "" {
			break
		}
		c, err := memory.ParseCursor(p.Next)
		require.NoError(t, err)
		q.Before = c
	}
	require.Len(t, seen, len(ids))
	require.ElementsMatch(t, ids, seen)
	require.Equal(t, ids[4], seen[0], "newest first")
	require.Equal(t, ids[0], seen[4], "oldest last")

	// A deleted memory does not shift the next page (a keyset, not an offset).
	first, err := s.Page(f.ctx, memory.ListQuery{Limit: 2})
	require.NoError(t, err)
	require.NoError(t, s.Remove(f.ctx, first.Memories[0].ID))
	c, err := memory.ParseCursor(first.Next)
	require.NoError(t, err)
	second, err := s.Page(f.ctx, memory.ListQuery{Limit: 2, Before: c})
	require.NoError(t, err)
	require.Equal(t, seen[2], second.Memories[0].ID)

	// A filtered page.
	typed, err := s.Page(f.ctx, memory.ListQuery{Filter: memory.Filter{Type: mp.Procedure}, Limit: 2})
	require.NoError(t, err)
	require.Empty(t, typed.Memories)
	require.NotNil(t, typed.Memories, "an empty page is a list")
	require.Empty(t, typed.Next)
}

func TestCursorsRoundTripAndRefuseNonsense(t *testing.T) {
	t.Parallel()
	id := backend.NewID(backend.KindMemory)
	at := time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)
	c := memory.Cursor{CreatedAt: at, ID: id}
	back, err := memory.ParseCursor(c.String())
	require.NoError(t, err)
	require.Equal(t, c, back)
	for _, bad := range []string{"x", "12", fmt.Sprintf("abc.%s", id), "12.evt_nope"} {
		_, err := memory.ParseCursor(bad)
		require.Error(t, err, bad)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	}
	empty, err := memory.ParseCursor("")
	require.NoError(t, err)
	require.True(t, empty.IsZero())
}
