// Package taskgraph turns a plan into an executable task graph and does the
// ready-step maths over it.
//
// It owns the JSON Schema of a plan, the validation of a plan into a DAG
// (schema, duplicate ids, unknown tools, args against each tool's schema,
// missing and self dependencies, cycles) and the questions the runtime asks
// of a graph while it runs: which steps are ready, which can never run, is it
// finished. A validation failure is one *backend.Error with code EINVALID
// whose message lists every problem found, step by step, because the message
// is fed back to the planning model for a replan.
//
// The package is pure: no I/O (tool schemas never load remote or file
// references), no clocks, no randomness, no mutable package state. It never
// executes a step and never decides policy (that is the router's job).
package taskgraph
