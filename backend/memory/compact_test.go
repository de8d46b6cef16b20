package memory_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
)

// A memory.decided event says each thing once: what the memory's row holds
// (its content hash, its embedding model) is not repeated when the decision
// names the memory, nor the memory's id a second time as the nearest, nor
// the reality the event itself carries. The reader gives the input back
// whole, so every kind of decision replays to exactly what was decided.
func TestADecisionSaysEachThingOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	store := f.consider(t, f.candidate("The backup job runs every night at 02:00 and writes to /srv/backup."))
	exact := f.consider(t, f.candidate("the backup job runs every night at 02:00 and writes to  /srv/backup."))
	nearC := f.candidate("Backup job runs every night at 02:00 and writes to /srv/backup")
	near := f.consider(t, nearC)
	low := f.candidate("The weather in the log output was mentioned once.")
	low.CriticScore, low.RuntimeWeight = 0.2, 0.2
	skip := f.consider(t, low)
	world := f.candidate("The simulated operator reached the goal in three moves.")
	world.Reality, world.WorldID = backend.WorldLocal, backend.NewID(backend.KindWorld)
	hypo := f.consider(t, world)

	require.Equal(t, mp.Store, store.Decision.Action)
	require.Equal(t, mp.RuleExact, exact.Decision.Rule)
	require.Equal(t, mp.RuleNear, near.Decision.Rule, near.Decision.Reason)
	require.Equal(t, mp.Skip, skip.Decision.Action)
	require.Equal(t, mp.Store, hypo.Decision.Action)
	want := []memory.Decided{store, exact, near, skip, hypo}

	events := f.events(t, memory.EvDecided)
	require.Len(t, events, len(want))
	payload := func(i int) string { return string(events[i].Payload) }
	for i := range []int{0, 1, 2} {
		require.NotContains(t, payload(i), `"embeddingModel"`, "the memory's row holds its model")
		require.NotContains(t, payload(i), `"reality"`, "the event's reality says it")
		require.Contains(t, payload(i), `"memoryId":"`+want[i].MemoryID+`"`, "Follow reads it")
	}
	require.NotContains(t, payload(0), `"contentHash"`, "a stored memory's row holds its hash")
	require.NotContains(t, payload(1), `"contentHash"`, "an exact duplicate has the memory's hash")
	require.Contains(t, payload(2), `"contentHash":"`+near.ContentHash+`"`, "a near duplicate's hash is its own, not the memory's")
	require.NotContains(t, payload(1), `"nearestId"`, "the memory merged into is the nearest")
	require.NotContains(t, payload(2), `"nearestId"`, "the memory merged into is the nearest")
	require.Contains(t, payload(3), `"contentHash":"`+skip.ContentHash+`"`, "a skip names no memory that holds it")
	require.Contains(t, payload(4), `"reality":"world_local"`, "the content's reality is not the run's")

	decided := f.decided(t)
	require.Len(t, decided, len(want))
	for i, d := range decided {
		require.Equal(t, want[i].Input, d.Input, "decision %d reads back its whole input", i)
		require.Equal(t, want[i].Decision, d.Decision, "decision %d", i)
		require.Equal(t, want[i].Decision, d.Table.Decide(d.Input), "decision %d replays", i)
		require.Equal(t, want[i].MemoryID, d.MemoryID)
	}
	require.Equal(t, skip.ContentHash, decided[3].ContentHash)
	require.Equal(t, near.ContentHash, decided[2].ContentHash)

	// What the event leaves out, the memory holds.
	m, err := f.store.Get(f.ctx, store.MemoryID)
	require.NoError(t, err)
	require.Equal(t, store.ContentHash, m.ContentHash)
	require.Equal(t, exact.ContentHash, m.ContentHash)
	require.Equal(t, store.Model, m.Model)

	// The merge-exact of a trivial step, in bytes.
	require.Less(t, len(payload(1)), 330, payload(1))
}

// Decisions recorded before they said each thing once carry every field,
// and read exactly as they did.
func TestDecisionsWithEveryFieldStillRead(t *testing.T) {
	t.Parallel()
	digest := "sha256:7ed423b1e63eb93074c7b7d2942f2a746dbcd01c3d1600fce2e2046c5ff45e8d"
	table, err := json.Marshal(memory.PolicyPayload{Digest: digest, Table: mp.Thresholds})
	require.NoError(t, err)
	const old = `{"input":{"criticScore":0.9,"memoryType":"observation","runtimeWeight":0.5,"reality":"external_real","textRunes":61,` +
		`"dedup":{"exactMatch":true,"nearestSimilarity":1,"nearestId":"mem_01a244341ab772e6aec95480d39e28a8"},"safety":{"secretShare":0,"redactable":true}},` +
		`"tableDigest":"sha256:7ed423b1e63eb93074c7b7d2942f2a746dbcd01c3d1600fce2e2046c5ff45e8d","memoryId":"mem_01a244341ab772e6aec95480d39e28a8",` +
		`"contentHash":"bacd841c15e1f0346e96b3d2a077dc8a52bbb95f7b28e0ccf7ee37d6900efae0","embeddingModel":"ducklm-hash-384"}`
	run, cause := backend.NewID(backend.KindRun), backend.NewID(backend.KindEvent)
	got, err := memory.ReadDecided([]backend.Event{
		{Seq: 3, Stream: run, Type: memory.EvPolicy, Payload: table, Reality: backend.ExternalReal},
		{Seq: 4, Stream: run, Type: memory.EvDecided, Payload: []byte(old), Reality: backend.ExternalReal, CausationID: cause},
	})
	require.NoError(t, err)
	require.Len(t, got, 1)
	in := mp.Input{CriticScore: 0.9, MemoryType: mp.Observation, RuntimeWeight: 0.5, Reality: backend.ExternalReal, TextRunes: 61,
		Dedup:  mp.Dedup{ExactMatch: true, NearestSimilarity: 1, NearestID: "mem_01a244341ab772e6aec95480d39e28a8"},
		Safety: mp.Safety{Redactable: true}}
	tbl := mp.Thresholds
	require.Equal(t, memory.DecidedPayload{Input: in, Table: &tbl, TableDigest: digest, Decision: mp.Thresholds.Decide(in),
		MemoryID: "mem_01a244341ab772e6aec95480d39e28a8", ContentHash: "bacd841c15e1f0346e96b3d2a077dc8a52bbb95f7b28e0ccf7ee37d6900efae0",
		EmbeddingModel: "ducklm-hash-384", Source: memory.Provenance{RunID: run, EventID: cause, Reality: backend.ExternalReal}}, got[0])
	require.Equal(t, mp.Merge, got[0].Decision.Action)
}

// The reader restores the nearest memory only where the writer left it
// out: never into a decision recorded with its outcome inline, whose input
// is read as it was written.
func TestANearestMemoryIsRestoredOnlyWhereLeftOut(t *testing.T) {
	t.Parallel()
	in := mp.Input{CriticScore: 0.9, MemoryType: mp.Fact, RuntimeWeight: 0.8, Reality: backend.ExternalReal, TextRunes: 40,
		Dedup: mp.Dedup{NearestSimilarity: 0.99}}
	d := mp.Thresholds.Decide(in)
	require.Equal(t, mp.Store, d.Action, "a nearest similarity without a memory stores")
	data, err := json.Marshal(map[string]any{"input": in, "table": mp.Thresholds, "decision": d, "memoryId": "mem_new", "contentHash": "x"})
	require.NoError(t, err)
	got, err := memory.ReadDecided([]backend.Event{{Seq: 4, Type: memory.EvDecided, Payload: data, Reality: backend.ExternalReal}})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, in, got[0].Input)
	require.Equal(t, d, got[0].Decision)
}
