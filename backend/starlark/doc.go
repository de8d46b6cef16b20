// Package starlark is ducklm's reference world backend: a deterministic state
// world whose transition function is a Starlark program (go.starlark.net).
//
// A world program defines three functions:
//
//	def init(seed):                 # or init(seed, rng)
//	    return {...}                # the initial state (a state is always a dict)
//	def step(state, action, rng):
//	    return new_state            # or (new_state, events) or (new_state, events, done)
//	def observe(state, role):
//	    return {...}                # what role sees of state
//
// and may define two more, for a search that deliberates over forks:
//
//	def actions(state):             # the legal actions, a list of JSON values
//	def score(state):               # a number, higher is better
//
// The package owns compiling such programs once ([Compile]), running them one
// call at a time under an execution-step limit ([Program.New], [World]), the
// canonical JSON form of every value that crosses the boundary ([ToJSON],
// [FromJSON], [CanonicalJSON]), the host-seeded RNG whose exact state is part
// of every checkpoint, the divergences a fork applies to a restored world
// ([World.ReplaceState], [World.Reseed]), the shipped example programs
// ([Examples]), and the seam through which a [Runner] evaluates a program's
// calls in another process, where a memory limit can hold: a call is plain
// data ([Call], [Reply]); [CompileWith] compiles through a runner and
// [Program.Eval] answers a call in this process (in the runner's worker).
//
// Its promise is exact reproducibility: the same program source, seed and
// actions give byte-identical states, emitted payloads and checkpoint bytes,
// and restoring a checkpoint then stepping gives exactly the tail the original
// world produced. To keep that promise the package must never:
//   - give a program I/O, a clock, the environment, load(), or any
//     predeclared name beyond the Starlark universe (the rng is an argument);
//   - keep global mutable state: a compiled program's globals are frozen and
//     shared read-only by every world made from it;
//   - draw randomness from anywhere but the world's own PCG, or let a failed
//     call change the world (a failed step leaves state, RNG and clock as
//     they were).
//
// It stores nothing and records no events: the caller persists checkpoint
// bytes and emitted payloads in the blob store and the ledger.
package starlark
