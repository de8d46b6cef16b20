// Package memorypolicy is the memory write policy: one pure, deterministic
// function that decides whether a candidate memory is stored, merged into
// an existing memory, or skipped:
//
//	(critic score, memory type, runtime weight, dedup state, safety state) -> store | merge | skip
//
// Every threshold it uses is in one exported table (Thresholds), and a
// decision's inputs with that table are enough to replay it exactly: the
// memory store records the inputs and the table's digest in a
// "memory.decided" event (the outcome is the table's for the inputs).
//
// It owns the rule that a world-local result is kept only as a hypothesis
// that names its world, never as a fact.
//
// It must never do I/O, read a clock, embed text, scan for secrets or touch
// a store: the memory store gathers the inputs (dedup lookup, secret scan)
// and applies the decision. The critic only scores; this package alone
// decides what is written.
package memorypolicy
