package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/store/postgres/pgtest"
)

// A memory one installation stores on the team's database is found by
// another's retrieval without a restart: the other process follows the
// ledger's memory decisions into its own index, merges included.
func TestAMemoryStoredByOneInstallationIsFoundByAnotherLive(t *testing.T) {
	t.Setenv("OLLAMA_HOST", deadHost)
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, b := openTeam(t, ctx, url), openTeam(t, ctx, url)
	storeA, err := a.Memory(ctx)
	require.NoError(t, err)
	storeB, err := b.Memory(ctx) // its index loaded now: the memory is not in the table yet
	require.NoError(t, err)
	require.Equal(t, storeA.Model(), storeB.Model())

	const text = "The staging database of the billing team listens on port 6543."
	find := func() (memory.Retrieved, bool) {
		rs, err := storeB.Retrieve(ctx, "which port does the staging database of billing listen on", 5, memory.Filter{})
		require.NoError(t, err)
		for _, r := range rs {
			if r.Text == text {
				return r, true
			}
		}
		return memory.Retrieved{}, false
	}
	_, found := find()
	require.False(t, found)

	candidate := func() memory.Candidate {
		return memory.Candidate{Text: text, Type: mp.Fact, RunID: backend.NewID(backend.KindRun), EventID: backend.NewID(backend.KindEvent),
			CriticScore: 0.9, RuntimeWeight: 0.8}
	}
	stored, err := storeA.Consider(ctx, candidate())
	require.NoError(t, err)
	require.Equal(t, mp.Store, stored.Decision.Action)
	var got memory.Retrieved
	require.Eventually(t, func() bool { got, found = find(); return found }, time.Minute, 20*time.Millisecond,
		"B's retrieval finds what A stored, without a restart")
	require.Equal(t, stored.MemoryID, got.ID)
	require.Zero(t, got.MergedCount)

	merged, err := storeA.Consider(ctx, candidate())
	require.NoError(t, err)
	require.Equal(t, mp.Merge, merged.Decision.Action)
	require.Eventually(t, func() bool { got, _ = find(); return got.MergedCount == 1 }, time.Minute, 20*time.Millisecond,
		"B's index follows A's merge")
	require.Equal(t, stored.MemoryID, got.ID)

	// Removed on A (the Memory screen's Remove, which records no event): B's
	// next retrieval no longer returns it.
	require.NoError(t, storeA.Remove(ctx, stored.MemoryID))
	_, found = find()
	require.False(t, found, "B's retrieval leaves out a memory another installation removed")
}
