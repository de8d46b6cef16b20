// Package planner is the orchestrator/planner of the seed: given a task, its
// context and the tool catalog, it reasons and returns one backend.Decision —
// a plan (a task graph), a direct response, a replan request when a model's
// answer was unusable, or a failure.
//
// LLM asks a model through Ollama with a JSON Schema `format` (PlanSchema),
// streams its tokens to the caller, and checks the answer's shape: an answer
// that is not JSON or breaks the schema becomes a replan decision carrying
// the exact reason, so the runtime loop can bound replans; only a failure to
// reach the model is an error. Offline serves without a model: explicit
// plans and shell one-liners, and a clear "needs a model" failure otherwise.
//
// The planner never executes a step, calls a tool, writes the ledger or
// mutates any state, and it does not judge a graph's meaning (unknown tools,
// missing dependencies, cycles): the runtime validates and applies what the
// planner returns.
package planner
