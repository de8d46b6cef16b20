package memory_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
)

// A store opened before another one wrote finds what the other stored and
// merged once it follows their decisions; decisions it made itself, events
// of other types, memories of another embedding model and memories removed
// since change nothing.
func TestFollowBringsInWhatAnotherStoreWrote(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other := f.open(t, nil)                           // another process's store, on the same table
	small := f.open(t, memory.HashEmbedder{Dims: 64}) // one embedding with another model
	const text = "The backup job of the archive host runs at 02:30 every night."
	query := "when does the archive host's backup job run"
	has := func(s *memory.Store) (memory.Retrieved, bool) {
		rs, err := s.Retrieve(f.ctx, query, 5, memory.Filter{})
		require.NoError(t, err)
		for _, r := range rs {
			if r.Text == text {
				return r, true
			}
		}
		return memory.Retrieved{}, false
	}

	stored := f.consider(t, f.candidate(text))
	_, found := has(other)
	require.False(t, found, "not followed yet")
	decisions := f.events(t, memory.EvDecided)
	require.NoError(t, other.Follow(f.ctx, decisions))
	got, found := has(other)
	require.True(t, found)
	require.Equal(t, stored.MemoryID, got.ID)

	merged := f.consider(t, f.candidate(text))
	require.Equal(t, stored.MemoryID, merged.MemoryID)
	require.NoError(t, other.Follow(f.ctx, f.events(t, memory.EvDecided)))
	got, _ = has(other)
	require.Equal(t, 1, got.MergedCount, "the merge is followed too")

	// Its own decisions, followed again, leave it as it was.
	require.NoError(t, f.store.Follow(f.ctx, f.events(t, memory.EvDecided)))
	mine, _ := has(f.store)
	require.Equal(t, got.MergedCount, mine.MergedCount)

	// A memory of another model stays out of an index, stale, as at the start.
	require.NoError(t, small.Follow(f.ctx, decisions))
	_, found = has(small)
	require.False(t, found)

	// Other events change nothing; a memory removed since is left out.
	all, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: f.run})
	require.NoError(t, err)
	require.NoError(t, f.store.Remove(f.ctx, stored.MemoryID))
	late := f.open(t, nil)
	require.NoError(t, late.Follow(f.ctx, all))
	_, found = has(late)
	require.False(t, found)
}
