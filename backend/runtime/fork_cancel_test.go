package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

// A run cancelled from another installation (through a cancel request) is
// forked from its last checkpoint to go on: the fork goes on. The request
// was the parent's, answered by its cancellation; the fork does not
// inherit it and cancel itself as it starts.
func TestAForkOfARunCancelledOnRequestGoesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, run, _ := heldInAStep(t, "cancelled elsewhere, then forked")
	require.NoError(t, b.rt.Cancel(ctx, run.ID, "Cancelled from host-b."))
	a.waitFor(t, run.ID, backend.RunTerminated)
	require.NoError(t, a.rt.Wait(ctx, run.ID))

	_, parent, err := a.rt.Load(ctx, run.ID)
	require.NoError(t, err)
	require.NotEmpty(t, parent.LatestCheckpointID)
	_, _, child, err := a.rt.Fork(ctx, runtime.ForkRequest{CheckpointID: parent.LatestCheckpointID, Delta: json.RawMessage(`{}`)})
	require.NoError(t, err)
	st := a.waitFor(t, child.ID, backend.RunAwaitingApproval, backend.RunTerminated)
	require.Equal(t, backend.RunAwaitingApproval, st.Status, "the fork asks again for its step (%s)", st.StatusReason)
	require.Empty(t, st.CancelRequested)
}
