package router

import (
	"encoding/json"
	"fmt"

	"ducklm/backend"
)

// Search is a finished world_search step whose chosen line the task takes:
// the simulated run it searched and the line of actions it chose, the
// chosen action first.
type Search struct {
	Step string
	Run  string
	Line []json.RawMessage
	// Taken is true once the line's steps are in the plan
	// (MoveStepID(Step, 1) is a step of it).
	Taken bool
}

// MoveStepID is the id of the i-th step (1-based) that takes the chosen
// line of search step search.
func MoveStepID(search string, i int) string { return fmt.Sprintf("%s-move-%d", search, i) }

// takeLine turns a search's chosen line into steps: one world_sim step per
// action on the run it searched, in order, the first after the search. The
// runtime adds them to the plan; steps that waited for the search wait for
// the last of them. They are steps like any other: the risk rules and the
// approval mode apply to each.
func takeLine(sr Search) backend.Decision {
	steps := make([]backend.TaskNode, len(sr.Line))
	for i, a := range sr.Line {
		args, _ := json.Marshal(struct {
			Run    string          `json:"run"`
			Action json.RawMessage `json:"action"`
			Steps  int             `json:"steps"`
		}{sr.Run, a, 1})
		prev := sr.Step
		if i > 0 {
			prev = steps[i-1].ID
		}
		steps[i] = backend.TaskNode{ID: MoveStepID(sr.Step, i+1), Kind: backend.KindToolStep, Tool: ToolWorldSim,
			Args: args, DependsOn: []string{prev},
			Title: fmt.Sprintf("Move %s (%d of %d, chosen by %s)", compactAction(a), i+1, len(sr.Line), sr.Step)}
	}
	return decide(backend.DecisionPlan, PlanPayload{Search: sr.Step, Steps: steps},
		fmt.Sprintf("Step %q searched the simulated world and chose a line of %d %s, so the task takes it, one step per move.",
			sr.Step, len(sr.Line), plural(len(sr.Line), "move")))
}

// compactAction is an action as a title shows it: a string bare, anything
// else as compact JSON.
func compactAction(a json.RawMessage) string {
	var s string
	if json.Unmarshal(a, &s) == nil {
		return s
	}
	var v any
	if json.Unmarshal(a, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	return string(a)
}
