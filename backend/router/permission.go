package router

// NeedsPermission reports whether a step with assessment a must wait for the
// user's approval under mode. sandboxed is true when bubblewrap is usable.
//
//	ask_every       every step
//	ask_risky       medium and high
//	auto_sandboxed  high, and every step when there is no sandbox
//
// Whatever the mode, a step that runs a process (a shell command or a
// generated script) needs approval when there is no sandbox, and an unknown
// mode asks.
func NeedsPermission(mode ApprovalMode, a Assessment, sandboxed bool) bool {
	if a.Shell && !sandboxed {
		return true
	}
	level := a.Level.normal()
	switch mode {
	case AskEvery:
		return true
	case AskRisky:
		return level >= Medium
	case AutoSandboxed:
		return level >= High || !sandboxed
	}
	return true
}
