package runtime

import (
	"encoding/json"
	"strings"

	"ducklm/backend"
	"ducklm/backend/critic"
)

// Where a run records the decisions the loop applied. Each decision is one
// tick of the run's clock wherever it is recorded.
//
//   - decision.applied holds a decision on its own: the planner's, and the
//     router's that start no step (plan, complete, fail, …). Runs recorded
//     before step.started and critic.scored carried theirs hold every
//     decision this way.
//   - step.started carries the router's decision that started the step in
//     its "decision" field (one event a step fewer, the same facts).
//   - step.retrying carries the router's retry decision the same way.
//   - critic.scored with "decision" set is also the critic's decision: that
//     decision (a noop whose payload is the critique, whose confidence is
//     the score and whose reason is the explanation) is rebuilt from the
//     critique instead of being recorded a second time beside it.
//   - step.finished whose "critique" has "decision" set is the critic's
//     decision the same way: the result, its critique and its checkpoint
//     are one event (runs recorded before held the critique in a
//     critic.scored event after the result).

// AppliedDecision is one decision a run's events record.
type AppliedDecision struct {
	// Seq is the event that records it.
	Seq int64 `json:"seq"`
	// Source is who decided: router, planner or critic.
	Source   string           `json:"source"`
	Decision backend.Decision `json:"decision"`
}

// Decisions returns the decisions a run's events record, in their order,
// from every format a run has recorded them in.
func Decisions(events []backend.Event) []AppliedDecision {
	var out []AppliedDecision
	for _, e := range events {
		if d, ok := DecisionOf(e); ok {
			out = append(out, d)
		}
	}
	return out
}

// DecisionOf returns the decision one event records, if it records one.
func DecisionOf(e backend.Event) (AppliedDecision, bool) {
	switch e.Type {
	case EvDecision:
		var r decisionRecord
		if json.Unmarshal(e.Payload, &r) != nil {
			return AppliedDecision{}, false
		}
		return AppliedDecision{Seq: e.Seq, Source: r.Source, Decision: r.Decision}, true
	case EvStepStarted:
		var p stepStarted
		if json.Unmarshal(e.Payload, &p) != nil || p.Decision == nil {
			return AppliedDecision{}, false
		}
		return AppliedDecision{Seq: e.Seq, Source: "router", Decision: *p.Decision}, true
	case EvStepRetrying:
		var p stepNote
		if json.Unmarshal(e.Payload, &p) != nil || p.Decision == nil {
			return AppliedDecision{}, false
		}
		return AppliedDecision{Seq: e.Seq, Source: "router", Decision: *p.Decision}, true
	case EvCritique:
		var p critiquePayload
		if json.Unmarshal(e.Payload, &p) != nil || p.Decision == "" {
			return AppliedDecision{}, false
		}
		return AppliedDecision{Seq: e.Seq, Source: "critic", Decision: p.decision()}, true
	case EvStepFinished:
		var p struct {
			Step     string           `json:"step"`
			Critique *critiquePayload `json:"critique"`
		}
		if json.Unmarshal(e.Payload, &p) != nil || p.Critique == nil || p.Critique.Decision == "" {
			return AppliedDecision{}, false
		}
		crit := p.Critique.recorded(p.Step)
		return AppliedDecision{Seq: e.Seq, Source: "critic", Decision: crit.decision()}, true
	}
	return AppliedDecision{}, false
}

// withResult is the critique as a step.finished event carries it: without
// the step (the result names it) and without the fallback's note, which
// its ModelError gives back (critic.Note).
func (p critiquePayload) withResult() *critiquePayload {
	p.Step = ""
	if p.ModelError != "" {
		p.Explanation = strings.TrimSuffix(p.Explanation, critic.Note(p.ModelError))
	}
	return &p
}

// recorded is the critique a step.finished event of step carries, whole
// again: with its step and its explanation's note.
func (p critiquePayload) recorded(step string) *critiquePayload {
	p.Step = step
	if p.ModelError != "" {
		p.Explanation += critic.Note(p.ModelError)
	}
	return &p
}

// critique is the critic's critique a critic.scored event records.
func (p critiquePayload) critique() critic.Critique {
	return critic.Critique{Score: p.Score, Explanation: p.Explanation, Source: p.Source, Model: p.Model,
		ModelError: p.ModelError, Normalised: p.Normalised}
}

// decision is the critic's decision a critic.scored event carries.
func (p critiquePayload) decision() backend.Decision {
	d := critic.Decision(p.critique())
	d.Type = p.Decision
	return d
}

// critiqueOf is the record of a critique of step, carrying the critic's
// decision.
func critiqueOf(stepID string, crit critic.Critique) critiquePayload {
	return critiquePayload{Step: stepID, Score: crit.Score, Explanation: crit.Explanation,
		Source: crit.Source, Model: crit.Model, ModelError: crit.ModelError, Normalised: crit.Normalised,
		Decision: critic.Decision(crit).Type}
}

// critiqued is the critic.scored event of a critique that came after its
// result's commit (a slow critic), carrying the critic's decision.
func critiqued(stepID string, crit critic.Critique, tick int64) backend.Event {
	return event(EvCritique, critiqueOf(stepID, crit), tick)
}
