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
// each memory.decided uses the run's latest table instead of repeating it
// (or naming it: decisions recorded before named it by digest), and the
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
		require.NotContains(t, string(e.Payload), p.Digest, "nor named: it is the run's latest")
		require.Greater(t, e.Seq, policies[0].Seq, "the table is recorded before the decisions that use it")
	}
	decided := f.decided(t)
	require.Len(t, decided, 3)
	require.Equal(t, mp.Skip, decided[1].Decision.Action)

	// A store opened again (ducklm restarted) records its table again for
	// the run, once: with another table, the decisions before use the
	// first and those after the second.
	stricter := mp.Thresholds
	stricter.MinRunes = 10
	again, err := memory.Open(f.ctx, memory.Options{Repo: f.repo, Table: &stricter, SnapshotDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { again.Close() })
	_, err = again.Consider(f.ctx, f.candidate("The staging database listens on port 6543."))
	require.NoError(t, err)
	_, err = again.Consider(f.ctx, f.candidate("tiny text")) // 9 runes: kept by the first table's 8, not the second's 10
	require.NoError(t, err)
	require.Len(t, f.events(t, memory.EvPolicy), 2)
	decided = f.decided(t)
	require.Len(t, decided, 5)
	for i, d := range decided {
		want := mp.Thresholds
		if i >= 3 {
			want = stricter
		}
		require.Equal(t, want, *d.Table, "decision %d", i)
	}
	require.Equal(t, mp.Skip, decided[4].Decision.Action)
}

// A decision that uses the run's latest table with no memory.policy event
// before it is an error, not a guess.
func TestADecisionWithNoTableBeforeItIsAnError(t *testing.T) {
	t.Parallel()
	in := mp.Input{CriticScore: 0.9, MemoryType: mp.Fact, RuntimeWeight: 0.8, Reality: backend.ExternalReal, TextRunes: 40}
	data, err := json.Marshal(map[string]any{"input": in})
	require.NoError(t, err)
	_, err = memory.ReadDecided([]backend.Event{{Seq: 3, Type: memory.EvDecided, Payload: data}})
	require.Error(t, err)
	require.Contains(t, backend.ErrorMessage(err), "no memory.policy event before it")
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

// A decision refers to what other events say instead of copying it: the
// outcome is the table's for the input, the source is the event's stream,
// cause and reality. The reader gives them back whole; a source the event
// cannot say (a world, a URL) is still written.
func TestADecisionRefersToTheTableAndItsCause(t *testing.T) {
	t.Parallel()
	f := setup(t)
	stored := f.candidate("The build server is build-01.example.org.")
	f.consider(t, stored)
	f.consider(t, stored) // merged into the first: exact duplicate
	web := f.candidate("The status page says every system is operational.")
	web.URL = "https://status.example.org/"
	f.consider(t, web)

	events := f.events(t, memory.EvDecided)
	require.Len(t, events, 3)
	for i, e := range events {
		require.NotContains(t, string(e.Payload), `"decision"`, "the table gives the outcome")
		if i < 2 {
			require.NotContains(t, string(e.Payload), `"source"`, "the event's stream and cause say it")
		} else {
			require.Contains(t, string(e.Payload), `"url":"https://status.example.org/"`)
		}
	}
	decided := f.decided(t)
	require.Len(t, decided, 3)
	require.Equal(t, mp.Store, decided[0].Decision.Action)
	require.Equal(t, mp.Merge, decided[1].Decision.Action)
	require.EqualValues(t, "exact_duplicate", decided[1].Decision.Rule)
	for i, d := range decided {
		require.Equal(t, d.Decision, d.Table.Decide(d.Input), "the decision replays")
		require.Equal(t, f.run, d.Source.RunID, i)
		require.Equal(t, backend.ExternalReal, d.Source.Reality)
	}
	require.Equal(t, stored.EventID, decided[1].Source.EventID)
	require.Equal(t, web.EventID, decided[2].Source.EventID)
	require.Equal(t, web.URL, decided[2].Source.URL)
}
