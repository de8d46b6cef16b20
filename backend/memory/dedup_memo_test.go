package memory_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
)

// countingRepo counts the dedup lookups that reach the database.
type countingRepo struct {
	memory.Repo
	lookups atomic.Int64
}

func (r *countingRepo) FindByHash(ctx context.Context, hash string, typ mp.Type, reality backend.Reality) (string, bool, error) {
	r.lookups.Add(1)
	return r.Repo.FindByHash(ctx, hash, typ, reality)
}

// The same result offered again (a step that reads the same file each
// time) is an exact duplicate the store already knows: this process alone
// writes the memories of a data directory, so it answers from what it
// stored or found, and asks the database only for a text it has not seen.
// A team's database, which other processes write, is asked every time.
func TestAnExactDuplicateIsKnownWithoutAskingTheDatabaseAgain(t *testing.T) {
	f := setup(t)
	repo := &countingRepo{Repo: f.repo}
	s, err := memory.Open(f.ctx, memory.Options{Repo: repo, SnapshotDir: filepath.Join(f.dir, "memory2")})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	consider := func(text string) memory.Decided {
		d, err := s.Consider(f.ctx, f.candidate(text))
		require.NoError(t, err)
		return d
	}

	first := consider("The build server listens on port 8080.")
	require.Equal(t, mp.Store, first.Decision.Action)
	require.EqualValues(t, 1, repo.lookups.Load(), "a new text is looked up")
	again := consider("the build server   listens on port 8080.")
	require.Equal(t, mp.Merge, again.Decision.Action)
	require.True(t, again.Input.Dedup.ExactMatch)
	require.Equal(t, first.MemoryID, again.MemoryID)
	require.EqualValues(t, 1, repo.lookups.Load(), "the store knows the memory it stored")

	// A memory removed is looked up again, and stored anew.
	require.NoError(t, s.Remove(f.ctx, first.MemoryID))
	third := consider("The build server listens on port 8080.")
	require.Equal(t, mp.Store, third.Decision.Action, "never merged into a memory that is gone")
	require.EqualValues(t, 2, repo.lookups.Load())

	// A store opened on what is already there finds it once, then knows it.
	repo2 := &countingRepo{Repo: f.repo}
	s2, err := memory.Open(f.ctx, memory.Options{Repo: repo2})
	require.NoError(t, err)
	t.Cleanup(func() { s2.Close() })
	for range 3 {
		d, err := s2.Consider(f.ctx, f.candidate("The build server listens on port 8080."))
		require.NoError(t, err)
		require.Equal(t, third.MemoryID, d.MemoryID)
	}
	require.EqualValues(t, 1, repo2.lookups.Load())

	// Shared with other processes: every decision asks.
	repo3 := &countingRepo{Repo: f.repo}
	shared, err := memory.Open(f.ctx, memory.Options{Repo: repo3, Shared: true})
	require.NoError(t, err)
	t.Cleanup(func() { shared.Close() })
	for range 3 {
		_, err := shared.Consider(f.ctx, f.candidate("The build server listens on port 8080."))
		require.NoError(t, err)
	}
	require.EqualValues(t, 3, repo3.lookups.Load())
}
