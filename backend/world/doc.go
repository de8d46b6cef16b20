// Package world runs worlds: it creates specs and runs, steps deterministic
// Starlark worlds, takes exact checkpoints, forks runs at a checkpoint with a
// recorded divergence, reads a run's full history through its fork chain,
// walks the lineage DAG, re-executes runs to verify them and compares
// branches.
//
// It owns the invariants of the world kernel: a spec never changes after it
// is stored; every fork makes a new world id with full provenance; a child
// shares its parent's history by reference, never by copy; a simulated
// world's events are world-local and stay so; ancestry is acyclic. It
// stores through narrow interfaces and never talks to the UI.
package world
