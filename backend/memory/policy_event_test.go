package memory_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
)

// A run records the write policy's table once, in a memory.policy event;
// each memory.decided names it by digest instead of repeating it, and the
// reader resolves it. Every decision still replays from the events.
func TestARunRecordsThePolicyTableOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.consider(t, f.candidate("The build server is build-01.example.org."))
	f.consider(t, f.candidate("short"))                                          // skipped by the policy
	f.consider(t, f.candidate("The release branch is cut every second Monday.")) // stored

	policies := f.events(t, memory.EvPolicy)
	require.Len(t, policies, 1)
	var p memory.PolicyPayload
	require.NoError(t, json.Unmarshal(policies[0].Payload, &p))
	require.Equal(t, mp.Thresholds, p.Table)
	require.NotEmpty(t, p.Digest)

	for _, e := range f.events(t, memory.EvDecided) {
		require.NotContains(t, string(e.Payload), `"criticShare"`, "the table is not repeated")
		require.Contains(t, string(e.Payload), p.Digest)
		require.Greater(t, e.Seq, policies[0].Seq, "the table is recorded before the decisions that name it")
	}
	decided := f.decided(t)
	require.Len(t, decided, 3)
	require.Equal(t, mp.Skip, decided[1].Decision.Action)

	// A store opened again (ducklm restarted) records the table again for
	// the run, once; the decisions before and after resolve alike.
	again := f.open(t, nil)
	_, err := again.Consider(f.ctx, f.candidate("The staging database listens on port 6543."))
	require.NoError(t, err)
	_, err = again.Consider(f.ctx, f.candidate("tiny"))
	require.NoError(t, err)
	require.Len(t, f.events(t, memory.EvPolicy), 2)
	require.Len(t, f.decided(t), 5)
}

// memory.decided events recorded before the table was recorded once per run
// carry the table inline and still read and replay.
func TestDecisionsWithTheTableInlineStillRead(t *testing.T) {
	t.Parallel()
	in := mp.Input{CriticScore: 0.9, MemoryType: mp.Fact, RuntimeWeight: 0.8, Reality: backend.ExternalReal, TextRunes: 40}
	old := map[string]any{"input": in, "table": mp.Thresholds, "decision": mp.Thresholds.Decide(in), "contentHash": "x",
		"source": memory.Provenance{Reality: backend.ExternalReal}}
	data, err := json.Marshal(old)
	require.NoError(t, err)
	got, err := memory.ReadDecided([]backend.Event{{Seq: 4, Type: memory.EvDecided, Payload: data}})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.NotNil(t, got[0].Table)
	require.Equal(t, mp.Thresholds, *got[0].Table)
	require.Equal(t, got[0].Decision, got[0].Table.Decide(got[0].Input))

	// A decision naming a table no event holds is an error, not a guess.
	data, err = json.Marshal(map[string]any{"input": in, "tableDigest": "sha256:00", "decision": mp.Thresholds.Decide(in)})
	require.NoError(t, err)
	_, err = memory.ReadDecided([]backend.Event{{Seq: 5, Type: memory.EvDecided, Payload: data}})
	require.Error(t, err)
	require.Contains(t, backend.ErrorMessage(err), "policy table")
}
