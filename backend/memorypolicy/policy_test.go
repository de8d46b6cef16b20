package memorypolicy_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	mp "ducklm/backend/memorypolicy"
)

// good is an input every rule lets through to "store".
func good() mp.Input {
	return mp.Input{CriticScore: 0.9, MemoryType: mp.Fact, RuntimeWeight: 0.8, Reality: backend.ExternalReal,
		TextRunes: 40, Safety: mp.Safety{Redactable: true}}
}

func with(f func(in *mp.Input)) mp.Input {
	in := good()
	f(&in)
	return in
}

func TestDecideEveryBranch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      mp.Input
		action  mp.Action
		rule    mp.Rule
		storeAs mp.Type
		redact  bool
		into    string
		reason  string // a part of the reason
	}{
		{"new fact", good(), mp.Store, mp.RuleNew, mp.Fact, false, "", "nothing stored is as similar"},
		{"unknown type", with(func(in *mp.Input) { in.MemoryType = "rumour" }), mp.Skip, mp.RuleInvalid, "rumour", false, "", `memory type "rumour"`},
		{"unknown reality", with(func(in *mp.Input) { in.Reality = "dream" }), mp.Skip, mp.RuleInvalid, mp.Fact, false, "", `reality "dream"`},
		{"critic above 1", with(func(in *mp.Input) { in.CriticScore = 1.5 }), mp.Skip, mp.RuleInvalid, mp.Fact, false, "", "critic score 1.5"},
		{"critic NaN", with(func(in *mp.Input) { in.CriticScore = math.NaN() }), mp.Skip, mp.RuleInvalid, mp.Fact, false, "", "critic score NaN"},
		{"negative weight", with(func(in *mp.Input) { in.RuntimeWeight = -0.1 }), mp.Skip, mp.RuleInvalid, mp.Fact, false, "", "runtime weight -0.1"},
		{"similarity above 1", with(func(in *mp.Input) { in.Dedup = mp.Dedup{NearestSimilarity: 1.2, NearestID: "mem_x"} }), mp.Skip, mp.RuleInvalid, mp.Fact, false, "", "nearest similarity 1.2"},
		{"exact without id", with(func(in *mp.Input) { in.Dedup = mp.Dedup{ExactMatch: true, NearestSimilarity: 1} }), mp.Skip, mp.RuleInvalid, mp.Fact, false, "", "exact match names no memory"},
		{"secret share above 1", with(func(in *mp.Input) { in.Safety.SecretShare = 2 }), mp.Skip, mp.RuleInvalid, mp.Fact, false, "", "secret share 2"},
		{"negative length", with(func(in *mp.Input) { in.TextRunes = -1 }), mp.Skip, mp.RuleInvalid, mp.Fact, false, "", "negative"},
		{"too short", with(func(in *mp.Input) { in.TextRunes = 7 }), mp.Skip, mp.RuleTooShort, mp.Fact, false, "", "7 characters"},
		{"shortest kept", with(func(in *mp.Input) { in.TextRunes = 8 }), mp.Store, mp.RuleNew, mp.Fact, false, "", ""},
		{"too long", with(func(in *mp.Input) { in.TextRunes = 4001 }), mp.Skip, mp.RuleTooLong, mp.Fact, false, "", "4001 characters"},
		{"world-local without world", with(func(in *mp.Input) { in.Reality = backend.WorldLocal }), mp.Skip, mp.RuleNoWorld, mp.Hypothesis, false, "", "must name its world"},
		{"world-local fact becomes hypothesis", with(func(in *mp.Input) { in.Reality, in.WorldID = backend.WorldLocal, "wld_1" }),
			mp.Store, mp.RuleNew, mp.Hypothesis, false, "", "kept as a hypothesis of world wld_1, not as a fact"},
		{"world-local hypothesis", with(func(in *mp.Input) {
			in.Reality, in.WorldID, in.MemoryType = backend.WorldLocal, "wld_1", mp.Hypothesis
		}), mp.Store, mp.RuleNew, mp.Hypothesis, false, "", "a hypothesis needs"},
		{"world-local judged by hypothesis thresholds", with(func(in *mp.Input) {
			in.Reality, in.WorldID, in.CriticScore, in.RuntimeWeight = backend.WorldLocal, "wld_1", 0.5, 0.5 // worth 0.5: < fact 0.7, >= hypothesis 0.4
		}), mp.Store, mp.RuleNew, mp.Hypothesis, false, "", ""},
		{"secret redacted", with(func(in *mp.Input) {
			in.Safety = mp.Safety{SecretsFound: []string{"openai_key"}, SecretShare: 0.3, Redactable: true}
		}),
			mp.Store, mp.RuleNew, mp.Fact, true, "", "secrets redacted (openai_key)"},
		{"secret at the share limit", with(func(in *mp.Input) {
			in.Safety = mp.Safety{SecretsFound: []string{"jwt"}, SecretShare: 0.5, Redactable: true}
		}),
			mp.Store, mp.RuleNew, mp.Fact, true, "", ""},
		{"mostly secret", with(func(in *mp.Input) {
			in.Safety = mp.Safety{SecretsFound: []string{"private_key"}, SecretShare: 0.9, Redactable: true}
		}),
			mp.Skip, mp.RuleMostlySecret, mp.Fact, true, "", "mostly secret (private_key; 90%"},
		{"secret not redactable", with(func(in *mp.Input) { in.Safety = mp.Safety{SecretsFound: []string{"password"}, SecretShare: 0.2} }),
			mp.Skip, mp.RuleMostlySecret, mp.Fact, true, "", "mostly secret"},
		{"no secret, not redactable is irrelevant", with(func(in *mp.Input) { in.Safety = mp.Safety{} }), mp.Store, mp.RuleNew, mp.Fact, false, "", ""},
		{"below worth", with(func(in *mp.Input) { in.CriticScore, in.RuntimeWeight = 0.6, 0.6 }), mp.Skip, mp.RuleLowWorth, mp.Fact, false, "", "worth 0.60"},
		{"worth exactly at the minimum", with(func(in *mp.Input) { in.CriticScore, in.RuntimeWeight = 0.5, 0.5; in.MemoryType = mp.Observation }),
			mp.Store, mp.RuleNew, mp.Observation, false, "", ""},
		{"low worth beats duplicate", with(func(in *mp.Input) {
			in.CriticScore, in.RuntimeWeight = 0.1, 0.1
			in.Dedup = mp.Dedup{ExactMatch: true, NearestID: "mem_a", NearestSimilarity: 1}
		}), mp.Skip, mp.RuleLowWorth, mp.Fact, false, "", ""},
		{"exact duplicate", with(func(in *mp.Input) { in.Dedup = mp.Dedup{ExactMatch: true, NearestID: "mem_a", NearestSimilarity: 1} }),
			mp.Merge, mp.RuleExact, mp.Fact, false, "mem_a", "already stored as mem_a"},
		{"near duplicate at the threshold", with(func(in *mp.Input) { in.Dedup = mp.Dedup{NearestID: "mem_b", NearestSimilarity: 0.92} }),
			mp.Merge, mp.RuleNear, mp.Fact, false, "mem_b", "0.920 similar"},
		{"just below the merge threshold", with(func(in *mp.Input) { in.Dedup = mp.Dedup{NearestID: "mem_b", NearestSimilarity: 0.9199} }),
			mp.Store, mp.RuleNew, mp.Fact, false, "", ""},
		{"observation needs more similarity", with(func(in *mp.Input) {
			in.MemoryType = mp.Observation
			in.Dedup = mp.Dedup{NearestID: "mem_b", NearestSimilarity: 0.95}
		}), mp.Store, mp.RuleNew, mp.Observation, false, "", ""},
		{"similar without an id stores", with(func(in *mp.Input) { in.Dedup = mp.Dedup{NearestSimilarity: 0.99} }), mp.Store, mp.RuleNew, mp.Fact, false, "", ""},
		{"merge with redaction", with(func(in *mp.Input) {
			in.Dedup = mp.Dedup{NearestID: "mem_c", NearestSimilarity: 0.97}
			in.Safety = mp.Safety{SecretsFound: []string{"github_token"}, SecretShare: 0.1, Redactable: true}
		}), mp.Merge, mp.RuleNear, mp.Fact, true, "mem_c", "secrets redacted (github_token)"},
		{"preference kept readily", with(func(in *mp.Input) { in.MemoryType, in.CriticScore, in.RuntimeWeight = mp.Preference, 0.2, 0.6 }),
			mp.Store, mp.RuleNew, mp.Preference, false, "", ""},
		{"procedure", with(func(in *mp.Input) { in.MemoryType = mp.Procedure }), mp.Store, mp.RuleNew, mp.Procedure, false, "", ""},
	}
	seen := map[mp.Rule]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := mp.Decide(tc.in)
			require.Equal(t, tc.action, d.Action, d.Reason)
			require.Equal(t, tc.rule, d.Rule, d.Reason)
			require.Equal(t, tc.storeAs, d.StoreAs)
			require.Equal(t, tc.redact, d.Redact)
			require.Equal(t, tc.into, d.MergeInto)
			require.Contains(t, d.Reason, tc.reason)
			require.NotEmpty(t, d.Reason)
			require.Equal(t, d, mp.Decide(tc.in), "deterministic")
		})
		seen[tc.rule] = true
	}
	for _, r := range []mp.Rule{mp.RuleInvalid, mp.RuleTooShort, mp.RuleTooLong, mp.RuleNoWorld, mp.RuleMostlySecret,
		mp.RuleLowWorth, mp.RuleExact, mp.RuleNear, mp.RuleNew} {
		require.True(t, seen[r], "rule %s is covered", r)
	}
}

// A world-local result is never stored as anything but a hypothesis,
// whatever type is proposed.
func TestWorldLocalIsNeverAFact(t *testing.T) {
	t.Parallel()
	for _, ty := range mp.Types() {
		for _, score := range []float64{0, 0.5, 1} {
			in := with(func(in *mp.Input) {
				in.Reality, in.WorldID, in.MemoryType, in.CriticScore = backend.WorldLocal, "wld_1", ty, score
			})
			d := mp.Decide(in)
			require.Equal(t, mp.Hypothesis, d.StoreAs, "%s %v", ty, score)
		}
	}
}

// A decision replays from the inputs and table its event records.
func TestDecisionReplaysFromRecordedInputs(t *testing.T) {
	t.Parallel()
	in := with(func(in *mp.Input) {
		in.CriticScore, in.RuntimeWeight = 0.83, 0.41
		in.Dedup = mp.Dedup{NearestID: "mem_b", NearestSimilarity: 0.9312}
		in.Safety = mp.Safety{SecretsFound: []string{"aws_access_key"}, SecretShare: 0.137, Redactable: true}
	})
	payload, err := json.Marshal(struct {
		Input    mp.Input    `json:"input"`
		Table    mp.Table    `json:"table"`
		Decision mp.Decision `json:"decision"`
	}{in, mp.Thresholds, mp.Decide(in)})
	require.NoError(t, err)

	var rec struct {
		Input    mp.Input    `json:"input"`
		Table    mp.Table    `json:"table"`
		Decision mp.Decision `json:"decision"`
	}
	require.NoError(t, json.Unmarshal(payload, &rec))
	require.Equal(t, rec.Decision, rec.Table.Decide(rec.Input))
	require.Equal(t, mp.Merge, rec.Decision.Action)
}

func TestThresholdsAreValid(t *testing.T) {
	t.Parallel()
	require.NoError(t, mp.Thresholds.Validate())
	bad := mp.Table{CriticShare: 0.5, MinRunes: 1, MaxRunes: 10, Types: map[mp.Type]mp.TypeRule{mp.Fact: {MinWorth: 0.5, MergeSimilarity: 0.9}}}
	require.Error(t, bad.Validate(), "a missing type")
	d := bad.Decide(with(func(in *mp.Input) { in.MemoryType = mp.Procedure; in.TextRunes = 5 }))
	require.Equal(t, mp.RuleInvalid, d.Rule)
	require.Contains(t, d.Reason, "no thresholds for procedure")
	bad = mp.Thresholds
	bad.MaxRunes = 1
	require.Error(t, bad.Validate())
	bad = mp.Thresholds
	bad.CriticShare = 2
	require.Error(t, bad.Validate())
}

// BenchmarkDecide is the policy alone, without the dedup lookup.
func BenchmarkDecide(b *testing.B) {
	in := with(func(in *mp.Input) {
		in.Dedup = mp.Dedup{NearestID: "mem_b", NearestSimilarity: 0.9}
		in.Safety = mp.Safety{SecretsFound: []string{"openai_key"}, SecretShare: 0.1, Redactable: true}
	})
	var d mp.Decision
	for i := 0; i < b.N; i++ {
		d = mp.Decide(in)
	}
	if d.Action != mp.Store {
		b.Fatal(d.Reason)
	}
}
