// Package worldproc runs world programs in worker processes whose memory the
// kernel bounds: a [starlark.Runner] that ducklm's world service compiles
// every program through, so that a program that allocates without end (one
// Starlark operation can ask for a gigabyte; top-level code runs when a
// program is compiled) fails its run with a sentence naming the limit
// instead of taking ducklm down.
//
// A worker is this same executable started again (/proc/self/exe, argv[0]
// ducklm-world-worker) with DUCKLM_WORLD_WORKER set; the package's init
// sees the variable and serves instead of returning to main, so the desktop
// binary and every test binary that links this package can be a worker.
// The worker sets RLIMIT_DATA to the program's MaxMemoryBytes before it
// reads anything, and serves calls one at a time over two pipes: the
// program's source once (kept by digest), then each call as a snapshot in
// (the state, the action, the RNG) and what changed out — it keeps no world
// state between calls, so a worker that dies loses nothing a world holds.
//
// The pool keeps at most as many workers as there are cores, reuses them
// across calls and programs, stops one that idles for a minute, and kills
// one whose call is cancelled. A worker dies with its parent (a parent-death
// signal, and the end of its request pipe).
//
// The package owns the processes and the wire; it must never decide what a
// call means (package starlark does, on both sides of the pipe), hold a
// world's state, or let a worker outlive ducklm.
package worldproc
