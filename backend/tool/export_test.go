package tool

// SetWalkFallback makes path resolution use the Lstat walk instead of
// openat2, as on kernels before 5.6, until the returned func is called.
func SetWalkFallback() (restore func()) {
	forceWalk.Store(true)
	return func() { forceWalk.Store(false) }
}

// SetSandboxUnavailable makes Shell see a machine without bubblewrap until
// the returned func is called. Tests using it must not run in parallel.
func SetSandboxUnavailable() (restore func()) {
	saved := sandboxAvailable
	sandboxAvailable = func() (string, bool, string) { return "", false, "bubblewrap (bwrap) is not installed" }
	return func() { sandboxAvailable = saved }
}
