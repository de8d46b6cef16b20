// Package router is ducklm's policy evaluator: a pure function from a run's
// state and its assembled context to the next decision object for the
// runtime loop (seed §3: "(input state + assembled context) ->
// ExecutionDirective").
//
// It owns the routing rules (plan, replan, run the next ready step, ask for
// permission, complete, fail), the deterministic risk policy over a step's
// tool and args (Risk, with every rule listed by Rules so the UI can show
// which rule asked), the approval policy (NeedsPermission) and the choice of
// a model per role (PickModel).
//
// It must never do I/O, execute anything, read a clock or randomness, mutate
// its input or any package state, or trust a model's own account of a step's
// risk. It suggests; the runtime loop validates and applies the decision.
// The risk policy decides when to ask a person; it is not a security
// boundary (a command can hide what it does from any tokenizer); the
// sandbox is the boundary.
package router
