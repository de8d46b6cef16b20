// Package ollama is ducklm's one door to Ollama: listing installed models,
// streaming chat with structured output (a JSON Schema `format`), and
// embeddings, over github.com/ollama/ollama/api.
//
// It owns the classification of Ollama's failures into backend errors, done
// once here so every caller sees the same sentences: an unreachable host is
// EUNAVAILABLE and says how to start Ollama, a missing model is ENOTFOUND and
// says which `ollama pull` fixes it, a stream cut mid-answer is EUNAVAILABLE
// and says so.
//
// It never decides which model serves which role (the router does), never
// builds prompts (the planner and the critic do), and never stores tokens: a
// chat hands each token to the caller's OnToken as it arrives and returns
// only the whole answer.
package ollama
