package world

import (
	"context"
	"encoding/json"

	"ducklm/backend"
)

// simulationFork is the fork record, spec and run of a simulated world that
// a task run starts: a child of the task's world at the task's latest
// checkpoint, so what the task tried in simulation stands in the lineage
// of what it did. The divergence is program_change (the child runs a world
// program instead of the task); the child's state starts from its own seed,
// not from the task's, so its run shares no history with the task's
// (BaseRunID stays empty) and re-executes from its own initialization.
func (s *Service) simulationFork(ctx context.Context, fromRunID string, spec *backend.WorldSpec, run *backend.WorldRun, source []byte) (*backend.Fork, error) {
	parentRun, err := s.store.GetRun(ctx, fromRunID)
	if err != nil {
		return nil, err
	}
	parent, err := s.store.GetSpec(ctx, parentRun.WorldID)
	if err != nil {
		return nil, err
	}
	if parent.Domain != backend.DomainReal {
		return nil, backend.Errorf(backend.EINVALID,
			"run %s is a simulated world's run; a new simulation starts from a task run (fork a simulated world to explore it)", fromRunID)
	}
	if parentRun.LatestCheckpointID == "" {
		return nil, backend.Errorf(backend.EINVALID, "task run %s has no checkpoint yet to start a simulation from", fromRunID)
	}
	cp, err := s.store.GetCheckpoint(ctx, parentRun.LatestCheckpointID)
	if err != nil {
		return nil, err
	}
	if _, err := s.Ancestors(ctx, parent.ID); err != nil {
		return nil, err // a damaged lineage is refused before it grows
	}
	delta, err := json.Marshal(map[string]string{"program": string(source)})
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot record the simulation's program")
	}
	f := &backend.Fork{
		ID: backend.NewID(backend.KindFork), ParentWorldID: parent.ID, ParentRunID: parentRun.ID, CheckpointID: cp.ID,
		ChildWorldID: spec.ID, Divergence: backend.DivergeProgramChange, Delta: delta,
		// The child's seed is its own (the spec holds it), not the task's.
		SeedPolicy: backend.SeedFresh, CreatedAt: spec.CreatedAt,
	}
	spec.ParentWorldID, spec.ForkID = parent.ID, f.ID
	run.ParentTime = cp.WorldLocalTime
	return f, nil
}

// Simulation returns the latest run of the newest simulated world that task
// run runID started (NewWorld.From) with this program source and seed, and
// false when it started none.
func (s *Service) Simulation(ctx context.Context, runID string, source []byte, seed int64) (backend.WorldRun, bool, error) {
	run, err := s.store.GetRun(ctx, runID)
	if err != nil {
		return backend.WorldRun{}, false, err
	}
	want := digest(source)
	var page backend.WorldPage
	for first := true; first || page.Next != ""; first = false {
		if page, err = s.store.ListWorlds(ctx, backend.WorldQuery{Parent: run.WorldID, Domain: backend.DomainSimulated,
			After: page.Next, Limit: 500}); err != nil {
			return backend.WorldRun{}, false, err
		}
		for _, w := range page.Worlds { // newest first
			if w.LatestRun == nil {
				continue
			}
			spec, err := s.store.GetSpec(ctx, w.ID)
			if err != nil {
				return backend.WorldRun{}, false, err
			}
			if spec.Program.Digest != want || spec.Seed != seed {
				continue
			}
			latest, err := s.store.GetRun(ctx, w.LatestRun.ID)
			return latest, err == nil, err
		}
	}
	return backend.WorldRun{}, false, nil
}
