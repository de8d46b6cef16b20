package memory

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	mp "ducklm/backend/memorypolicy"
)

// A decision whose nearest memory the reader would wrongly restore (a
// store with a similarity and no memory named, which dedup never gives)
// keeps its outcome inline, and reads back as it was decided.
func TestCompactKeepsWhatTheReaderCouldNotTellApart(t *testing.T) {
	t.Parallel()
	digest, policy := policyOf(mp.Thresholds)
	in := mp.Input{CriticScore: 0.9, MemoryType: mp.Fact, RuntimeWeight: 0.8, Reality: backend.ExternalReal, TextRunes: 40,
		Dedup: mp.Dedup{NearestSimilarity: 0.99}}
	d := mp.Thresholds.Decide(in)
	require.Equal(t, mp.Store, d.Action)
	p := DecidedPayload{Input: in, TableDigest: digest, MemoryID: "mem_new", ContentHash: "x", EmbeddingModel: HashModel}.compact(backend.ExternalReal, d)
	require.Equal(t, d, p.Decision, "the outcome is kept inline")
	data, err := json.Marshal(p)
	require.NoError(t, err)
	got, err := ReadDecided([]backend.Event{
		{Seq: 1, Type: EvPolicy, Payload: policy, Reality: backend.ExternalReal},
		{Seq: 2, Type: EvDecided, Payload: data, Reality: backend.ExternalReal},
	})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, in, got[0].Input)
	require.Equal(t, d, got[0].Decision)
	require.Equal(t, d, got[0].Table.Decide(got[0].Input))
}
