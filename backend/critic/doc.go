// Package critic evaluates the result of one step of a task graph: how well
// did it serve the task? It returns a Critique (a score from 0 to 1, an
// explanation, and whether a model or the heuristic produced it).
//
// Model asks a model through Ollama with a JSON Schema `format`; Heuristic
// scores from the exit code, the output and the limits hit, without a model;
// WithFallback uses the model and falls back to the heuristic on any model
// failure, saying why, as the seed's failure model asks ("critic failure ->
// fallback policy").
//
// The critic only evaluates. It never decides whether a memory is written
// (the memory write policy does), never decides to retry or replan (the
// runtime does), and never runs anything or mutates state.
package critic
