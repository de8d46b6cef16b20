// Package webproc fetches a web page and reads its text (web_fetch's work)
// in a worker process, so that a hostile page — one that makes the HTML
// parser allocate without end or run for minutes — meets the worker's
// limits and never the process that holds the ledger.
//
// A worker is this same executable started again, through a descriptor of
// /proc/self/exe (so an upgrade on disk cannot swap it), with
// DUCKLM_WEB_WORKER set; the package's init sees the variable and serves
// instead of returning to main, so the desktop binary and every test binary
// that links this package can be one. One worker serves one fetch and
// exits: no page's leftovers meet the next page.
//
// The worker runs under bubblewrap when it works here (package bwrap: a
// read-only system, a private /tmp, a fresh empty folder as its only
// writable place, no data directory, no network namespace but its own
// empty one), under the step's time, CPU and memory limits (the worker
// sets RLIMIT_DATA itself; a memory cgroup holds it too where one can be
// made). Its only way out is a unix socket in that folder on which ducklm
// serves the guard's tunnels (web.ServeTunnels) for the step's grant:
// ducklm resolves each name, checks the host grant and the private
// addresses exactly as for any fetch, and dials; the worker resolves
// nothing and reaches nothing else. Without bubblewrap the worker is the
// same process under the same limits but not isolated: it could read what
// the user can and open its own connections. Page.Sandboxed says which,
// and the runtime runs such a fetch only after a person approved it.
//
// The worker answers on a pipe: the response, the body, then the text, in
// frames whose sizes ducklm bounds, so a worker that dies reading the text
// still leaves the status and the raw body.
//
// The package owns the worker and its wire; it never decides what a step
// may reach (the router's grant, which the guard enforces) or whether it
// may run unsandboxed (the runtime's approval).
package webproc
