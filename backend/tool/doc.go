// Package tool holds the adapters through which a step acts on the world:
// shell_exec (a shell command run under bubblewrap through backend/bwrap),
// file_read and file_write (confined to the run's workspace), web_fetch (a
// page fetched and read in a web worker through backend/webproc), browser
// (Chromium under bubblewrap), world_sim and world_search, and the
// Registry that catalogues them for planners: name, description and the
// JSON Schema of each tool's args.
//
// An adapter runs exactly the call it is given, within the call's workspace
// and limits, and reports what happened. It makes no policy decisions: which
// steps may run, which need approval, whether a step may use the network or
// run without a sandbox, and how risky a call is all belong to the router
// and the runtime, which say so through the call (ToolCall.Network,
// ToolCall.Limits) and the adapter's configuration (Shell.Sandbox,
// WebFetch.Sandbox). An
// adapter never reaches outside the call's workspace on its own, never
// retries, and never widens a limit.
package tool
