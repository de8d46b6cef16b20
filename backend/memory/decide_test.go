package memory_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
)

// The write policy's verdict is a decision object the loop applies: a
// store_memory decision for a store or a merge, a noop for a skip, the
// policy's decision its payload. Applying anything but that decision is
// refused and writes nothing; applying it writes, as Consider does.
func TestTheWritePolicyReturnsADecisionTheLoopApplies(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p, err := f.store.Decide(f.ctx, f.candidate("The nginx service on this host listens on port 8080."))
	require.NoError(t, err)
	d := p.Decision()
	require.NoError(t, d.Validate())
	require.Equal(t, backend.DecisionStoreMemory, d.Type)
	var payload mp.Decision
	require.NoError(t, json.Unmarshal(d.Payload, &payload))
	require.Equal(t, mp.Store, payload.Action)
	require.Equal(t, payload.Reason, d.Reason)

	forged := d
	forged.Type = backend.DecisionNoop
	_, err = p.Apply(f.ctx, forged)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.Empty(t, f.events(t, memory.EvDecided), "a decision that is not the policy's writes nothing")

	p, err = f.store.Decide(f.ctx, f.candidate("The nginx service on this host listens on port 8080."))
	require.NoError(t, err)
	got, err := p.Apply(f.ctx, p.Decision())
	require.NoError(t, err)
	require.NoError(t, backend.CheckID(got.MemoryID, backend.KindMemory))
	require.Len(t, f.events(t, memory.EvDecided), 1)

	// Too short to keep: the policy's skip is a noop the loop applies, and
	// applying it records why.
	p, err = f.store.Decide(f.ctx, f.candidate("ok"))
	require.NoError(t, err)
	skip := p.Decision()
	require.Equal(t, backend.DecisionNoop, skip.Type)
	require.Contains(t, skip.Reason, "fewer than")
	_, err = p.Apply(f.ctx, skip)
	require.NoError(t, err)
	require.Len(t, f.events(t, memory.EvDecided), 2)
}
