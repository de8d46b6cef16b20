// Package runtime is the Runtime Loop Controller: it owns the lifecycle of
// every task run and is the only component that applies decisions.
//
// A task run is a WorldRun of a world in the real domain, so its events are
// external-real facts on the ledger and its checkpoints fork like any
// world's. The run's state is a pure fold of its events (state.go): the loop
// appends an event, and the state follows; a restart folds the events again
// and resumes. The loop calls the components in order — context builder,
// router, planner, engine (tools and coder), critic — validates each
// decision they return and records it. It holds no policy (that is the
// router's), builds no prompt (the planner's), and runs no process itself
// (the tools').
package runtime
