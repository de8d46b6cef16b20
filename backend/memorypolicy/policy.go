package memorypolicy

import (
	"fmt"
	"math"
	"strings"

	"ducklm/backend"
)

// Type is what kind of knowledge a memory holds.
type Type string

// The memory types.
const (
	Fact        Type = "fact"        // true of this machine or the world outside, as far as a run could tell
	Observation Type = "observation" // what a step saw at one time (may change later)
	Procedure   Type = "procedure"   // how to do something that worked
	Hypothesis  Type = "hypothesis"  // a guess or a simulated result, never a fact
	Preference  Type = "preference"  // what the user wants
)

// Types lists the memory types in a stable order.
func Types() []Type { return []Type{Fact, Observation, Procedure, Hypothesis, Preference} }

// withArticle is the type after "a" or "an": "an observation".
func (t Type) withArticle() string {
	if t != "" && strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + string(t)
	}
	return "a " + string(t)
}

// Valid reports whether t is one of the memory types.
func (t Type) Valid() bool {
	switch t {
	case Fact, Observation, Procedure, Hypothesis, Preference:
		return true
	}
	return false
}

// Action is what the policy decided.
type Action string

// The actions.
const (
	Store Action = "store" // keep as a new memory
	Merge Action = "merge" // fold into an existing memory, keeping both provenances
	Skip  Action = "skip"  // write nothing
)

// Rule names the branch of the policy that decided, for tests and for
// people reading the ledger.
type Rule string

// The rules, in the order Decide tries them.
const (
	RuleInvalid      Rule = "invalid_input"             // an input is out of range or unknown
	RuleTooShort     Rule = "too_short"                 // the text is shorter than MinRunes
	RuleTooLong      Rule = "too_long"                  // the text is longer than MaxRunes
	RuleNoWorld      Rule = "world_local_without_world" // a world-local result that names no world
	RuleMostlySecret Rule = "mostly_secret"             // secrets cannot be redacted away
	RuleLowWorth     Rule = "below_min_worth"           // worth is under the type's MinWorth
	RuleExact        Rule = "exact_duplicate"           // the same normalised text is stored
	RuleNear         Rule = "near_duplicate"            // a stored memory is similar enough
	RuleNew          Rule = "new"                       // nothing like it is stored
)

// Dedup is what the store found when it looked for the candidate among the
// memories of the same type and reality.
type Dedup struct {
	// ExactMatch: a memory with the same content hash exists; NearestID
	// names it and NearestSimilarity is 1.
	ExactMatch bool `json:"exactMatch"`
	// NearestSimilarity is the cosine similarity of the nearest memory
	// (0 when there is none).
	NearestSimilarity float64 `json:"nearestSimilarity"`
	NearestID         string  `json:"nearestId,omitempty"`
}

// Safety is what the secret scanner found in the candidate's text.
type Safety struct {
	// SecretsFound lists the kinds of secret found (e.g. "openai_key"),
	// never their values.
	SecretsFound []string `json:"secretsFound,omitempty"`
	// SecretShare is the share of the text's words that hold a secret.
	SecretShare float64 `json:"secretShare"`
	// Redactable: once the secrets are replaced by [REDACTED:kind], enough
	// of the text is left to be worth keeping.
	Redactable bool `json:"redactable"`
}

// Input is everything the policy decides from. Recorded with the table in
// the decision's event, it replays to the same decision.
type Input struct {
	CriticScore   float64         `json:"criticScore"`       // 0..1, from the critic
	MemoryType    Type            `json:"memoryType"`        // the type the caller proposes
	RuntimeWeight float64         `json:"runtimeWeight"`     // 0..1, how much the runtime values the source
	Reality       backend.Reality `json:"reality,omitempty"` // of the content: external_real or world_local
	WorldID       string          `json:"worldId,omitempty"`
	TextRunes     int             `json:"textRunes"` // length of the (redacted) text
	Dedup         Dedup           `json:"dedup"`
	Safety        Safety          `json:"safety"`
}

// Decision is the policy's answer.
type Decision struct {
	Action Action `json:"action"`
	Rule   Rule   `json:"rule"`
	Reason string `json:"reason"`
	// Redact: the text holds secrets; only the redacted text may be stored,
	// embedded or hashed.
	Redact bool `json:"redact"`
	// StoreAs is the type the memory is kept as (a world-local result is
	// always a hypothesis).
	StoreAs Type `json:"storeAs"`
	// MergeInto names the memory a merge folds into.
	MergeInto string `json:"mergeInto,omitempty"`
	// Worth is CriticShare*CriticScore + (1-CriticShare)*RuntimeWeight.
	Worth float64 `json:"worth"`
}

// TypeRule holds the thresholds of one memory type.
type TypeRule struct {
	// MinWorth is the least worth a candidate needs to be kept.
	MinWorth float64 `json:"minWorth"`
	// MergeSimilarity is the cosine similarity at or above which a
	// candidate merges into its nearest memory instead of being stored.
	MergeSimilarity float64 `json:"mergeSimilarity"`
}

// Table is every threshold of the write policy, in one place.
type Table struct {
	// CriticShare is how much the critic's score counts in a candidate's
	// worth; the runtime's weight counts for the rest.
	CriticShare float64 `json:"criticShare"`
	// MinRunes and MaxRunes bound the length of a text worth keeping.
	MinRunes int `json:"minRunes"`
	MaxRunes int `json:"maxRunes"`
	// MaxSecretShare is the largest share of its words that may hold a
	// secret for a text to be kept (redacted); above it the text is skipped.
	MaxSecretShare float64 `json:"maxSecretShare"`
	// Types holds the per-type thresholds.
	Types map[Type]TypeRule `json:"types"`
}

// Thresholds is the policy's table.
//
//	type          min worth   merge at similarity
//	fact            0.70          0.92   facts must be well supported; paraphrases are one fact
//	observation     0.50          0.96   observations differ in small details (a number, a time)
//	procedure       0.60          0.92   a procedure that worked is worth keeping
//	hypothesis      0.40          0.95   cheap to keep, clearly labelled, never a fact
//	preference      0.30          0.90   what the user asked for is kept readily
//
// worth = 0.7 × critic score + 0.3 × runtime weight. Texts of fewer than 8
// or more than 4000 characters are skipped; a text at most half of whose
// words hold a secret is kept in redacted form, a text more secret than that
// (a bare key, a PEM block) is skipped.
var Thresholds = Table{
	CriticShare:    0.7,
	MinRunes:       8,
	MaxRunes:       4000,
	MaxSecretShare: 0.5,
	Types: map[Type]TypeRule{
		Fact:        {MinWorth: 0.70, MergeSimilarity: 0.92},
		Observation: {MinWorth: 0.50, MergeSimilarity: 0.96},
		Procedure:   {MinWorth: 0.60, MergeSimilarity: 0.92},
		Hypothesis:  {MinWorth: 0.40, MergeSimilarity: 0.95},
		Preference:  {MinWorth: 0.30, MergeSimilarity: 0.90},
	},
}

// EffectiveType is the type a candidate is kept and deduplicated as: a
// world-local result is always a hypothesis.
func EffectiveType(t Type, r backend.Reality) Type {
	if r == backend.WorldLocal {
		return Hypothesis
	}
	return t
}

// Decide applies Thresholds to in.
func Decide(in Input) Decision { return Thresholds.Decide(in) }

// Decide applies the table to in. It is pure: the same table and input
// always give the same decision.
func (t Table) Decide(in Input) Decision {
	d := Decision{Action: Skip, StoreAs: EffectiveType(in.MemoryType, in.Reality), Redact: len(in.Safety.SecretsFound) > 0}
	if why := t.invalid(in); why != "" {
		d.Rule, d.Reason = RuleInvalid, "invalid policy input: "+why
		return d
	}
	d.Worth = t.CriticShare*in.CriticScore + (1-t.CriticShare)*in.RuntimeWeight
	rule := t.Types[d.StoreAs]
	coerced := ""
	if d.StoreAs != in.MemoryType {
		coerced = fmt.Sprintf(" (a world-local result is kept as a hypothesis of world %s, not as a %s)", in.WorldID, in.MemoryType)
	}
	switch {
	case in.TextRunes < t.MinRunes:
		d.Rule, d.Reason = RuleTooShort, fmt.Sprintf("the text has %d characters, fewer than the %d a memory needs", in.TextRunes, t.MinRunes)
	case in.TextRunes > t.MaxRunes:
		d.Rule, d.Reason = RuleTooLong, fmt.Sprintf("the text has %d characters, more than the %d a memory may have", in.TextRunes, t.MaxRunes)
	case in.Reality == backend.WorldLocal && in.WorldID == "":
		d.Rule, d.Reason = RuleNoWorld, "a world-local result must name its world to be kept as a hypothesis"
	case d.Redact && (!in.Safety.Redactable || in.Safety.SecretShare > t.MaxSecretShare):
		d.Rule, d.Reason = RuleMostlySecret, fmt.Sprintf("the text is mostly secret (%s; %.0f%% of its words, at most %.0f%% may be redacted)",
			strings.Join(in.Safety.SecretsFound, ", "), 100*in.Safety.SecretShare, 100*t.MaxSecretShare)
	case d.Worth < rule.MinWorth:
		d.Rule, d.Reason = RuleLowWorth, fmt.Sprintf("worth %.2f (critic %.2f, runtime weight %.2f) is below the %.2f %s needs",
			d.Worth, in.CriticScore, in.RuntimeWeight, rule.MinWorth, d.StoreAs.withArticle())
	case in.Dedup.ExactMatch:
		d.Action, d.Rule, d.MergeInto = Merge, RuleExact, in.Dedup.NearestID
		d.Reason = fmt.Sprintf("the same text is already stored as %s; merged, keeping both provenances", in.Dedup.NearestID)
	case in.Dedup.NearestID != "" && in.Dedup.NearestSimilarity >= rule.MergeSimilarity:
		d.Action, d.Rule, d.MergeInto = Merge, RuleNear, in.Dedup.NearestID
		d.Reason = fmt.Sprintf("%s is %.3f similar (%s merges at %.2f); merged, keeping both provenances",
			in.Dedup.NearestID, in.Dedup.NearestSimilarity, d.StoreAs.withArticle(), rule.MergeSimilarity)
	default:
		d.Action, d.Rule = Store, RuleNew
		d.Reason = fmt.Sprintf("worth %.2f reaches the %.2f %s needs, and nothing stored is as similar as %.2f",
			d.Worth, rule.MinWorth, d.StoreAs.withArticle(), rule.MergeSimilarity)
	}
	if d.Action != Skip {
		if d.Redact {
			d.Reason += "; secrets redacted (" + strings.Join(in.Safety.SecretsFound, ", ") + ")"
		}
		d.Reason += coerced
	}
	return d
}

// invalid says what is wrong with in, or "" when nothing is.
func (t Table) invalid(in Input) string {
	unit := func(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }
	switch {
	case !in.MemoryType.Valid():
		return fmt.Sprintf("memory type %q is not one of fact, observation, procedure, hypothesis, preference", in.MemoryType)
	case !in.Reality.Valid():
		return fmt.Sprintf("reality %q is not external_real or world_local", in.Reality)
	case !unit(in.CriticScore):
		return fmt.Sprintf("critic score %v is not between 0 and 1", in.CriticScore)
	case !unit(in.RuntimeWeight):
		return fmt.Sprintf("runtime weight %v is not between 0 and 1", in.RuntimeWeight)
	case math.IsNaN(in.Dedup.NearestSimilarity) || in.Dedup.NearestSimilarity < -1 || in.Dedup.NearestSimilarity > 1:
		return fmt.Sprintf("nearest similarity %v is not between -1 and 1", in.Dedup.NearestSimilarity)
	case in.Dedup.ExactMatch && in.Dedup.NearestID == "":
		return "an exact match names no memory"
	case !unit(in.Safety.SecretShare):
		return fmt.Sprintf("secret share %v is not between 0 and 1", in.Safety.SecretShare)
	case in.TextRunes < 0:
		return "the text length is negative"
	}
	if _, ok := t.Types[EffectiveType(in.MemoryType, in.Reality)]; !ok {
		return fmt.Sprintf("the table has no thresholds for %s", EffectiveType(in.MemoryType, in.Reality))
	}
	return ""
}

// Validate checks that the table is usable: shares and thresholds in range
// and a rule for every type.
func (t Table) Validate() error {
	unit := func(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }
	if !unit(t.CriticShare) || !unit(t.MaxSecretShare) {
		return backend.Errorf(backend.EINVALID, "the memory policy's shares must be between 0 and 1")
	}
	if t.MinRunes < 0 || t.MaxRunes < t.MinRunes {
		return backend.Errorf(backend.EINVALID, "the memory policy's text bounds %d..%d are not a range", t.MinRunes, t.MaxRunes)
	}
	for _, ty := range Types() {
		r, ok := t.Types[ty]
		if !ok {
			return backend.Errorf(backend.EINVALID, "the memory policy has no thresholds for %s", ty)
		}
		if !unit(r.MinWorth) || !unit(r.MergeSimilarity) {
			return backend.Errorf(backend.EINVALID, "the memory policy's thresholds for %s must be between 0 and 1", ty)
		}
	}
	return nil
}

// Object is the decision in the one shape every decision-producing
// component returns (DESIGN.md): store_memory for a store or a merge, noop
// for a skip, the policy's decision as the payload. The runtime loop
// applies it; the policy never writes.
func (d Decision) Object() backend.Decision {
	t := backend.DecisionStoreMemory
	if d.Action == Skip {
		t = backend.DecisionNoop
	}
	return backend.NewDecision(t, d, 1, d.Reason)
}
