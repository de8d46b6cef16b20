package service

// WithSandboxProbe returns opts with probe in place of the bubblewrap probe.
func WithSandboxProbe(opts Options, probe func() bool) Options {
	opts.probeSandbox = probe
	return opts
}
