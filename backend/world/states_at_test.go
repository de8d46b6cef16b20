package world_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/world"
)

// Compare at a chosen time: each branch's state at world time t is the
// state after its last step at or before t, replayed from the nearest
// checkpoint; before a branch's own history begins, its parent's (up to the
// fork) answers.
func TestStatesAtAChosenWorldTime(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run := create(t, f, 3)
	steps(t, f, run.ID, 2)
	cp2, err := f.worlds.Checkpoint(f.ctx, run.ID)
	require.NoError(t, err)
	// What the parent holds after each step, by its world time.
	parentAt := map[int64]json.RawMessage{}
	parentAt[2], err = f.worlds.State(f.ctx, run.ID)
	require.NoError(t, err)
	for i := int64(3); i <= 9; i++ {
		steps(t, f, run.ID, 1)
		parentAt[i], err = f.worlds.State(f.ctx, run.ID)
		require.NoError(t, err)
		if i == 5 {
			_, err := f.worlds.Checkpoint(f.ctx, run.ID)
			require.NoError(t, err)
		}
	}
	_, _, child, err := f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp2.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{"params": {"inc": 10}}`)})
	require.NoError(t, err)
	childAt := map[int64]json.RawMessage{}
	childAt[2], err = f.worlds.State(f.ctx, child.ID)
	require.NoError(t, err)
	for i := int64(3); i <= 6; i++ {
		steps(t, f, child.ID, 1)
		childAt[i], err = f.worlds.State(f.ctx, child.ID)
		require.NoError(t, err)
	}

	fresh := f.reopen() // nothing cached: every state is read or replayed
	for _, at := range []int64{2, 3, 4, 5, 6} {
		s, err := fresh.StatesAt(f.ctx, run.ID, child.ID, at)
		require.NoError(t, err)
		require.Equal(t, at, s.At)
		require.Equal(t, at, s.A.Time)
		require.Equal(t, at, s.B.Time)
		require.JSONEq(t, string(parentAt[at]), string(s.A.State), "the parent at t=%d", at)
		require.JSONEq(t, string(childAt[at]), string(s.B.State), "the child at t=%d", at)
		changes, err := world.JSONDiff(s.A.State, s.B.State)
		require.NoError(t, err)
		require.Equal(t, changes, s.Changes)
	}
	// Past the child's last step, the child's latest state, saying its time.
	s, err := fresh.StatesAt(f.ctx, run.ID, child.ID, 9)
	require.NoError(t, err)
	require.EqualValues(t, 9, s.A.Time)
	require.EqualValues(t, 6, s.B.Time)
	require.JSONEq(t, string(childAt[6]), string(s.B.State))
	// Before the fork, the child is its parent: its history up to the fork answers.
	s, err = fresh.StatesAt(f.ctx, run.ID, child.ID, 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, s.B.Time)
	require.JSONEq(t, string(s.A.State), string(s.B.State))
	require.Empty(t, s.Changes)

	_, err = fresh.StatesAt(f.ctx, run.ID, child.ID, -1)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}
