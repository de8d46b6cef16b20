package backend

import (
	"encoding/json"
	"math"
)

// DecisionType is what a decision asks the runtime loop to do.
type DecisionType string

// The decision types of the seed's contract (§4).
const (
	DecisionPlan              DecisionType = "plan"
	DecisionTool              DecisionType = "tool"
	DecisionCoder             DecisionType = "coder"
	DecisionRespond           DecisionType = "respond"
	DecisionReplan            DecisionType = "replan"
	DecisionStoreMemory       DecisionType = "store_memory"
	DecisionRequestPermission DecisionType = "request_permission"
	DecisionComplete          DecisionType = "complete"
	DecisionFail              DecisionType = "fail"
	DecisionNoop              DecisionType = "noop"
	// DecisionReview asks the orchestrator to read what the plan's steps
	// did and answer the task, add steps, or give up (DESIGN.md, the loop).
	DecisionReview DecisionType = "review"
	// DecisionRetry runs a failed step again, after a backoff.
	DecisionRetry DecisionType = "retry"
)

var decisionTypes = map[DecisionType]bool{
	DecisionPlan: true, DecisionTool: true, DecisionCoder: true, DecisionRespond: true, DecisionReplan: true,
	DecisionStoreMemory: true, DecisionRequestPermission: true, DecisionComplete: true, DecisionFail: true, DecisionNoop: true,
	DecisionReview: true, DecisionRetry: true,
}

// Decision is the one shape every decision-producing component returns
// (router, planner, critic, memory policy). Components never apply their own
// decisions; the runtime loop validates and applies them, and records each
// applied decision as an event.
type Decision struct {
	Type               DecisionType    `json:"type"`
	Payload            json.RawMessage `json:"payload"`
	RequiresPermission bool            `json:"requires_permission"`
	Confidence         float64         `json:"confidence"`
	Reason             string          `json:"reason"`
}

// Validate checks the decision against the contract.
func (d Decision) Validate() error {
	if !decisionTypes[d.Type] {
		return Errorf(EINVALID, "decision type %q is not one of plan, tool, coder, respond, replan, store_memory, request_permission, complete, fail, noop, review, retry", d.Type)
	}
	if math.IsNaN(d.Confidence) || d.Confidence < 0 || d.Confidence > 1 {
		return Errorf(EINVALID, "decision confidence must be between 0 and 1, not %v", d.Confidence)
	}
	if len(d.Payload) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(d.Payload, &obj); err != nil || obj == nil {
			return Errorf(EINVALID, "a %s decision's payload must be a JSON object", d.Type)
		}
	}
	return nil
}

// NewDecision builds a decision with payload marshalled from v.
func NewDecision(t DecisionType, payload any, confidence float64, reason string) Decision {
	data, err := json.Marshal(payload)
	if err != nil || string(data) == "null" {
		data = json.RawMessage("{}")
	}
	return Decision{Type: t, Payload: data, Confidence: confidence, Reason: reason}
}
