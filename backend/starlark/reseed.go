package starlark

// Reseed restarts the world's RNG from seed (derived by [SeedPCG]) and makes
// seed the world's seed; state, clock and done flag stay. It is how a fork
// diverges by a seed change: from the same checkpoint, the child's draws
// follow a different, still reproducible stream.
func (w *World) Reseed(seed uint64) error {
	if err := w.check(); err != nil {
		return err
	}
	w.rng = *SeedPCG(seed)
	w.seed = seed
	return nil
}
