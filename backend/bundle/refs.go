package bundle

import (
	"context"
	"encoding/json"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/runtime"
	"ducklm/backend/world"
)

// The add* methods check one record's own fields as it is read.

func (c *checked) addSpec(s backend.WorldSpec) error {
	switch {
	case backend.CheckID(s.ID, backend.KindWorld) != nil:
		return corrupt("specs.jsonl has a world whose id %s is not a world id", quote(s.ID))
	case c.has(c.spec, s.ID):
		return corrupt("world %s appears twice in the bundle", s.ID)
	case s.Domain != backend.DomainReal && s.Domain != backend.DomainSimulated:
		return corrupt("world %s has domain %s; it must be real or simulated", s.ID, quote(string(s.Domain)))
	case s.Backend == "":
		return corrupt("world %s names no backend", s.ID)
	case s.Program.Digest == "" && s.Backend != runtime.BackendTask:
		return corrupt("world %s has no program", s.ID)
	case s.Program.Digest != "" && blob.CheckDigest(s.Program.Digest) != nil:
		return corrupt("world %s has a program digest that is not a sha256 digest", s.ID)
	case s.InitialState != nil && blob.CheckDigest(s.InitialState.Digest) != nil:
		return corrupt("world %s has an initial state digest that is not a sha256 digest", s.ID)
	case len(s.Params) > 0 && !json.Valid(s.Params):
		return corrupt("world %s has parameters that are not valid JSON", s.ID)
	case s.Seed < 0:
		return corrupt("world %s has a negative seed", s.ID)
	case s.ParentWorldID != "" && backend.CheckID(s.ParentWorldID, backend.KindWorld) != nil:
		return corrupt("world %s names a parent %s that is not a world id", s.ID, quote(s.ParentWorldID))
	case s.ForkID != "" && backend.CheckID(s.ForkID, backend.KindFork) != nil:
		return corrupt("world %s names a fork %s that is not a fork id", s.ID, quote(s.ForkID))
	case s.CreatedAt.IsZero():
		return corrupt("world %s has no creation time", s.ID)
	}
	if len(s.Params) == 0 {
		s.Params = json.RawMessage("{}")
	}
	c.spec[s.ID] = len(c.specs)
	c.specs = append(c.specs, s)
	return nil
}

func (c *checked) addRun(r backend.WorldRun) error {
	switch {
	case backend.CheckID(r.ID, backend.KindRun) != nil:
		return corrupt("runs.jsonl has a run whose id %s is not a run id", quote(r.ID))
	case c.has(c.run, r.ID):
		return corrupt("run %s appears twice in the bundle", r.ID)
	case backend.CheckID(r.WorldID, backend.KindWorld) != nil:
		return corrupt("run %s names a world %s that is not a world id", r.ID, quote(r.WorldID))
	case !validStatus(r.Status):
		return corrupt("run %s has status %s, which ducklm does not know", r.ID, quote(string(r.Status)))
	case r.BaseRunID != "" && backend.CheckID(r.BaseRunID, backend.KindRun) != nil:
		return corrupt("run %s names a base run %s that is not a run id", r.ID, quote(r.BaseRunID))
	case r.BaseRunID == "" && r.BaseSeq != 0 || r.BaseRunID != "" && r.BaseSeq < 1:
		return corrupt("run %s shares %d events with its base run %s", r.ID, r.BaseSeq, quote(r.BaseRunID))
	case r.LatestCheckpointID != "" && backend.CheckID(r.LatestCheckpointID, backend.KindCheckpoint) != nil:
		return corrupt("run %s names a checkpoint %s that is not a checkpoint id", r.ID, quote(r.LatestCheckpointID))
	case r.WorldLocalTime < 0 || r.ParentTime < 0 || r.DeliberationIndex < 0:
		return corrupt("run %s has a negative clock", r.ID)
	case r.CreatedAt.IsZero():
		return corrupt("run %s has no creation time", r.ID)
	}
	c.run[r.ID] = len(c.runs)
	c.runs = append(c.runs, r)
	return nil
}

func (c *checked) addFork(f backend.Fork) error {
	switch {
	case backend.CheckID(f.ID, backend.KindFork) != nil:
		return corrupt("forks.jsonl has a fork whose id %s is not a fork id", quote(f.ID))
	case c.has(c.fork, f.ID):
		return corrupt("fork %s appears twice in the bundle", f.ID)
	case backend.CheckID(f.ParentWorldID, backend.KindWorld) != nil || backend.CheckID(f.ChildWorldID, backend.KindWorld) != nil:
		return corrupt("fork %s names a parent or child that is not a world id", f.ID)
	case backend.CheckID(f.ParentRunID, backend.KindRun) != nil:
		return corrupt("fork %s names a parent run that is not a run id", f.ID)
	case backend.CheckID(f.CheckpointID, backend.KindCheckpoint) != nil:
		return corrupt("fork %s names a checkpoint that is not a checkpoint id", f.ID)
	case !validDivergence(f.Divergence):
		return corrupt("fork %s has divergence %s, which ducklm does not know", f.ID, quote(string(f.Divergence)))
	case f.SeedPolicy != backend.SeedInherit && f.SeedPolicy != backend.SeedDerive && f.SeedPolicy != backend.SeedFresh:
		return corrupt("fork %s has seed policy %s, which ducklm does not know", f.ID, quote(string(f.SeedPolicy)))
	case len(f.Delta) == 0 || !json.Valid(f.Delta):
		return corrupt("fork %s has a delta that is not valid JSON", f.ID)
	}
	c.fork[f.ID] = len(c.forks)
	c.forkByChild[f.ChildWorldID] = len(c.forks)
	c.forks = append(c.forks, f)
	return nil
}

func (c *checked) addCheckpoint(cp backend.Checkpoint) error {
	switch {
	case backend.CheckID(cp.ID, backend.KindCheckpoint) != nil:
		return corrupt("checkpoints.jsonl has a checkpoint whose id %s is not a checkpoint id", quote(cp.ID))
	case c.has(c.cp, cp.ID):
		return corrupt("checkpoint %s appears twice in the bundle", cp.ID)
	case backend.CheckID(cp.WorldID, backend.KindWorld) != nil || backend.CheckID(cp.RunID, backend.KindRun) != nil:
		return corrupt("checkpoint %s names a world or run with a malformed id", cp.ID)
	case cp.LedgerSeq < 1 || cp.WorldLocalTime < 0:
		return corrupt("checkpoint %s has ledger seq %d and time %d", cp.ID, cp.LedgerSeq, cp.WorldLocalTime)
	case blob.CheckDigest(cp.Blob.Digest) != nil || cp.Blob.Size < 0:
		return corrupt("checkpoint %s has a blob digest that is not a sha256 digest", cp.ID)
	}
	c.cp[cp.ID] = len(c.cps)
	c.cps = append(c.cps, cp)
	return nil
}

func (c *checked) has(index map[string]int, id string) bool {
	_, ok := index[id]
	return ok
}

// checkRefs checks what records say about one another once everything is
// read: every reference resolves in the bundle or here, the pieces agree,
// and the lineage stays acyclic once merged with the local worlds.
func (c *checked) checkRefs(ctx context.Context) error {
	merged := map[string]backend.WorldSpec{}
	if c.local.Store != nil {
		local, err := c.local.Store.ListSpecs(ctx)
		if err != nil {
			return err
		}
		for _, s := range local {
			merged[s.ID] = s
		}
	}
	for _, s := range c.specs {
		merged[s.ID] = s
	}
	all := make([]backend.WorldSpec, 0, len(merged))
	for _, s := range merged {
		all = append(all, s)
	}
	if err := world.CheckAcyclic(all); err != nil {
		return err
	}
	for _, s := range c.specs {
		if err := c.checkSpec(ctx, s); err != nil {
			return err
		}
	}
	for _, r := range c.runs {
		if err := c.checkRun(ctx, r); err != nil {
			return err
		}
	}
	for _, f := range c.forks {
		if err := c.checkFork(ctx, f); err != nil {
			return err
		}
	}
	for _, cp := range c.cps {
		if err := c.checkCheckpoint(ctx, cp); err != nil {
			return err
		}
	}
	for _, id := range c.report.Manifest.Roots {
		if !c.has(c.spec, id) && !c.has(c.run, id) {
			return corrupt("the bundle's root %s is not in it", id)
		}
	}
	n := &c.report.Counts
	n.Worlds, n.Runs, n.Forks, n.Checkpoints = int64(len(c.specs)), int64(len(c.runs)), int64(len(c.forks)), int64(len(c.cps))
	n.Streams, n.Blobs = int64(len(c.heads)), int64(len(c.blobs))
	if *n != c.report.Manifest.Counts {
		return corrupt("the bundle holds %s, but its manifest counts %s", *n, c.report.Manifest.Counts)
	}
	return nil
}

func (c *checked) checkSpec(ctx context.Context, s backend.WorldSpec) error {
	if s.ParentWorldID != "" {
		parent, err := c.specOf(ctx, s.ParentWorldID)
		if err != nil {
			return err
		}
		if parent == nil {
			return corrupt("world %s is forked from world %s, which is neither in the bundle nor here", s.ID, s.ParentWorldID)
		}
		// A task may start a simulation (world.NewWorld.From): a simulated
		// child of a real world. A real world never comes from a simulation.
		if parent.Domain != s.Domain && (s.Domain != backend.DomainSimulated || parent.Domain != backend.DomainReal) {
			return corrupt("world %s is %s, but it was forked from the %s world %s", s.ID, s.Domain, parent.Domain, parent.ID)
		}
	}
	if (s.ParentWorldID == "") != (s.ForkID == "") {
		return corrupt("world %s names a parent world or a fork, but not both", s.ID)
	}
	if s.ForkID != "" {
		f, err := c.forkOf(ctx, s.ID)
		if err != nil {
			return err
		}
		if f == nil || f.ID != s.ForkID {
			return corrupt("world %s names fork %s, which is neither in the bundle nor here", s.ID, s.ForkID)
		}
	}
	// A task world recorded since its request is said once has no program:
	// the request is its run's first event (task.received).
	if s.Program.Digest != "" {
		if err := c.needBlob(ctx, s.Program.Digest, "the program of world "+s.ID); err != nil {
			return err
		}
	}
	if s.InitialState != nil {
		return c.needBlob(ctx, s.InitialState.Digest, "the initial state of world "+s.ID)
	}
	return nil
}

func (c *checked) checkRun(ctx context.Context, r backend.WorldRun) error {
	spec, err := c.specOf(ctx, r.WorldID)
	if err != nil {
		return err
	}
	if spec == nil {
		return corrupt("run %s belongs to world %s, which is neither in the bundle nor here", r.ID, r.WorldID)
	}
	if err := finishedTask(*spec, r); err != nil {
		return err
	}
	seen := map[string]bool{r.ID: true}
	for cur := r; cur.BaseRunID != ""; {
		base, err := c.runOf(ctx, cur.BaseRunID)
		if err != nil {
			return err
		}
		if base == nil {
			return corrupt("run %s continues run %s, which is neither in the bundle nor here (export it with --ancestry)", cur.ID, cur.BaseRunID)
		}
		if seen[base.ID] {
			return corrupt("the fork chain of run %s loops back to run %s; a run can never be its own ancestor", r.ID, base.ID)
		}
		seen[base.ID] = true
		cur = *base
	}
	if r.BaseRunID != "" {
		base, _ := c.runOf(ctx, r.BaseRunID)
		if base.WorldID != spec.ParentWorldID {
			return corrupt("run %s continues run %s, which is not a run of its world's parent", r.ID, base.ID)
		}
		head, err := c.headOf(ctx, base.ID)
		if err != nil {
			return err
		}
		if r.BaseSeq > head {
			return corrupt("run %s shares %d events of run %s, which has only %d", r.ID, r.BaseSeq, base.ID, head)
		}
	}
	if r.LatestCheckpointID != "" {
		cp, err := c.checkpointOf(ctx, r.LatestCheckpointID)
		if err != nil {
			return err
		}
		if cp == nil {
			return corrupt("run %s names checkpoint %s, which is neither in the bundle nor here", r.ID, r.LatestCheckpointID)
		}
	}
	return nil
}

func (c *checked) checkFork(ctx context.Context, f backend.Fork) error {
	parent, err := c.specOf(ctx, f.ParentWorldID)
	if err != nil {
		return err
	}
	child, err := c.specOf(ctx, f.ChildWorldID)
	if err != nil {
		return err
	}
	run, err := c.runOf(ctx, f.ParentRunID)
	if err != nil {
		return err
	}
	cp, err := c.checkpointOf(ctx, f.CheckpointID)
	if err != nil {
		return err
	}
	switch {
	case parent == nil || child == nil || run == nil || cp == nil:
		return corrupt("fork %s names a world, run or checkpoint that is neither in the bundle nor here", f.ID)
	case run.WorldID != f.ParentWorldID || cp.RunID != f.ParentRunID:
		return corrupt("fork %s starts from checkpoint %s of run %s, which are not of world %s", f.ID, cp.ID, run.ID, f.ParentWorldID)
	case child.ParentWorldID != f.ParentWorldID || child.ForkID != f.ID:
		return corrupt("fork %s and its child world %s disagree about where the child came from", f.ID, child.ID)
	}
	return nil
}

func (c *checked) checkCheckpoint(ctx context.Context, cp backend.Checkpoint) error {
	run, err := c.runOf(ctx, cp.RunID)
	if err != nil {
		return err
	}
	if run == nil {
		return corrupt("checkpoint %s belongs to run %s, which is neither in the bundle nor here", cp.ID, cp.RunID)
	}
	if run.WorldID != cp.WorldID {
		return corrupt("checkpoint %s names world %s, but its run %s belongs to %s", cp.ID, cp.WorldID, run.ID, run.WorldID)
	}
	head, err := c.headOf(ctx, cp.RunID)
	if err != nil {
		return err
	}
	if cp.LedgerSeq > head {
		return corrupt("checkpoint %s covers seq %d of run %s, which has only %d events", cp.ID, cp.LedgerSeq, cp.RunID, head)
	}
	return c.needBlob(ctx, cp.Blob.Digest, "the state of checkpoint "+cp.ID)
}

func (c *checked) needBlob(ctx context.Context, digest, what string) error {
	if c.blobs[digest] {
		return nil
	}
	ok, err := c.hasLocalBlob(ctx, digest)
	if err != nil {
		return err
	}
	if !ok {
		return corrupt("%s (blob %s) is neither in the bundle nor here", what, digest)
	}
	return nil
}

// realityOf returns the reality of the events of world id's runs.
func (c *checked) realityOf(ctx context.Context, worldID string) (backend.Reality, error) {
	s, err := c.specOf(ctx, worldID)
	if err != nil {
		return "", err
	}
	if s == nil {
		return "", corrupt("world %s is neither in the bundle nor here", worldID)
	}
	if s.Domain != backend.DomainReal && s.Domain != backend.DomainSimulated {
		return "", corrupt("world %s has domain %s", worldID, quote(string(s.Domain)))
	}
	return s.Domain.Reality(), nil
}

func validStatus(s backend.RunStatus) bool {
	switch s {
	case backend.RunPending, backend.RunRunning, backend.RunPaused, backend.RunAwaitingApproval,
		backend.RunCompleted, backend.RunFailed, backend.RunTerminated:
		return true
	}
	return false
}

func validDivergence(d backend.DivergenceType) bool {
	switch d {
	case backend.DivergeStatePatch, backend.DivergeActionOverride, backend.DivergeSeedChange,
		backend.DivergeProgramChange, backend.DivergeParameterChange, backend.DivergePlanEdit:
		return true
	}
	return false
}

// finishedTask refuses a task run that has not ended. Its facts happened
// on the machine it ran on; if it arrived still moving, this installation
// would resume it at start and run its steps here.
func finishedTask(spec backend.WorldSpec, r backend.WorldRun) error {
	if spec.Domain != backend.DomainReal || r.Status.Terminal() {
		return nil
	}
	return backend.Errorf(backend.ECONFLICT, "run %s is a task run that is still %s; only finished task runs travel in bundles (a moving one would go on running elsewhere): let it finish or cancel it, then export it",
		r.ID, r.Status)
}
