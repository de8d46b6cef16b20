package world

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"

	"ducklm/backend"
	"ducklm/backend/starlark"
)

// ForkRequest asks for a child of a run's checkpoint.
type ForkRequest struct {
	// CheckpointID is where the child starts. The parent run is the run
	// that took it.
	CheckpointID string
	// ParentRunID, when set, must be the checkpoint's run or a run whose
	// history contains it (a checkpoint seen in a child's inherited prefix).
	ParentRunID       string
	Divergence        backend.DivergenceType
	Delta             json.RawMessage
	SeedPolicy        backend.SeedPolicy
	Name              string
	DeliberationIndex int64
}

// maxSeed bounds seeds to what the database and JSON keep exactly.
const maxSeed = 1<<63 - 1

// Fork creates a new world from a checkpoint: a new world id and spec, a fork
// record (parent world and run, checkpoint, divergence and delta, seed
// policy), and a child run that shares the parent's history up to the
// checkpoint by reference. Its cost does not depend on the parent's history.
func (s *Service) Fork(ctx context.Context, req ForkRequest) (backend.Fork, backend.WorldSpec, backend.WorldRun, error) {
	var zf backend.Fork
	var zs backend.WorldSpec
	var zr backend.WorldRun
	cp, err := s.store.GetCheckpoint(ctx, req.CheckpointID)
	if err != nil {
		return zf, zs, zr, err
	}
	if req.ParentRunID != "" && req.ParentRunID != cp.RunID {
		if err := s.requireInHistory(ctx, req.ParentRunID, cp); err != nil {
			return zf, zs, zr, err
		}
	}
	parentRun, err := s.store.GetRun(ctx, cp.RunID)
	if err != nil {
		return zf, zs, zr, err
	}
	parent, err := s.store.GetSpec(ctx, parentRun.WorldID)
	if err != nil {
		return zf, zs, zr, err
	}
	if _, err := s.Ancestors(ctx, parent.ID); err != nil {
		return zf, zs, zr, err // a damaged lineage is refused before it grows
	}
	if req.SeedPolicy == "" {
		req.SeedPolicy = backend.SeedInherit
	}
	if len(req.Delta) == 0 {
		req.Delta = json.RawMessage("{}")
	}
	delta, err := parseDelta(req.Divergence, req.Delta, parent.Domain)
	if err != nil {
		return zf, zs, zr, err
	}
	if req.Divergence == backend.DivergeSeedChange && req.SeedPolicy == backend.SeedInherit && delta.Seed == nil {
		return zf, zs, zr, backend.Errorf(backend.EINVALID, `a seed_change needs the seed policy derive or fresh, or an explicit {"seed": N}`)
	}

	f := backend.Fork{
		ID: backend.NewID(backend.KindFork), ParentWorldID: parent.ID, ParentRunID: parentRun.ID,
		CheckpointID: cp.ID, Divergence: req.Divergence, Delta: compactJSON(req.Delta),
		SeedPolicy: req.SeedPolicy, CreatedAt: s.now().UTC(),
	}
	seed, err := childSeed(parent.Seed, f.ID, req.SeedPolicy, delta)
	if err != nil {
		return zf, zs, zr, err
	}
	child := backend.WorldSpec{
		ID: backend.NewID(backend.KindWorld), Name: req.Name, Domain: parent.Domain, Backend: parent.Backend,
		Program: parent.Program, Params: parent.Params, Seed: seed, ParentWorldID: parent.ID, ForkID: f.ID,
		CreatedAt: f.CreatedAt,
	}
	if child.Name == "" {
		child.Name = parent.Name + " / " + string(req.Divergence)
	}
	f.ChildWorldID = child.ID

	var prog *starlark.Program
	if delta.Program != nil {
		if prog, err = s.compileProgram(ctx, child.Name, []byte(*delta.Program)); err != nil {
			return zf, zs, zr, err
		}
	} else if prog, err = s.program(ctx, parent); err != nil {
		return zf, zs, zr, err
	}
	data, err := s.blobs.Get(ctx, cp.Blob)
	if err != nil {
		return zf, zs, zr, err
	}
	w := prog.New()
	if err := w.RestoreBytes(data); err != nil {
		return zf, zs, zr, err
	}
	if err := diverge(w, f, child, delta); err != nil {
		return zf, zs, zr, err
	}
	if delta.Program != nil {
		// Stored only now: a fork refused above leaves no blob behind.
		if child.Program, err = s.blobs.Put(ctx, []byte(*delta.Program), programMediaType); err != nil {
			return zf, zs, zr, err
		}
	}

	run := backend.WorldRun{
		ID: backend.NewID(backend.KindRun), WorldID: child.ID, Status: backend.RunRunning,
		WorldLocalTime: cp.WorldLocalTime, ParentTime: cp.WorldLocalTime, DeliberationIndex: req.DeliberationIndex,
		BaseRunID: parentRun.ID, BaseSeq: cp.LedgerSeq, CreatedAt: f.CreatedAt, UpdatedAt: f.CreatedAt,
	}
	inst := &instance{spec: child, run: run, world: w}
	forked := s.event(inst, EventForked, map[string]any{
		"forkId": f.ID, "parentWorldId": parent.ID, "parentRunId": parentRun.ID, "checkpointId": cp.ID,
		"divergence": f.Divergence, "delta": f.Delta, "seedPolicy": f.SeedPolicy, "seed": seed,
		"stateDigest": digest(w.State()),
	})
	startCp, cpEvent, err := s.snapshot(ctx, inst)
	if err != nil {
		return zf, zs, zr, err
	}
	inst.run.LatestCheckpointID = startCp.ID
	stored, err := s.store.CreateFork(ctx, f, child, inst.run, []backend.Event{forked, cpEvent}, &startCp)
	if err != nil {
		return zf, zs, zr, err
	}
	inst.head = stored[len(stored)-1].Seq
	s.keep(inst)

	if len(delta.Actions) > 0 {
		unlock := s.lockRun(run.ID)
		for _, a := range delta.Actions {
			if _, err := s.step(ctx, inst, a); err != nil {
				unlock()
				return f, child, inst.run, err
			}
		}
		unlock()
	}
	return f, child, inst.run, nil
}

// requireInHistory checks that cp lies in the inherited history of runID.
func (s *Service) requireInHistory(ctx context.Context, runID string, cp backend.Checkpoint) error {
	segs, err := s.Segments(ctx, runID)
	if err != nil {
		return err
	}
	for _, seg := range segs {
		if seg.Stream == cp.RunID && cp.LedgerSeq <= seg.ToSeq {
			return nil
		}
	}
	return backend.Errorf(backend.EINVALID, "checkpoint %s is not in the history of run %s", cp.ID, runID)
}

// delta is a parsed divergence.
type delta struct {
	Patch   json.RawMessage   // state_patch, parameter_change
	Actions []json.RawMessage // action_override
	Program *string           // program_change
	Seed    *int64            // seed_change with an explicit seed
}

func parseDelta(kind backend.DivergenceType, raw json.RawMessage, domain backend.Domain) (delta, error) {
	var d delta
	if !json.Valid(raw) {
		return d, backend.Errorf(backend.EINVALID, "the fork delta is not valid JSON")
	}
	var obj map[string]json.RawMessage
	isObject := json.Unmarshal(raw, &obj) == nil && obj != nil
	switch kind {
	case backend.DivergeStatePatch, backend.DivergeParameterChange:
		if !isObject {
			return d, backend.Errorf(backend.EINVALID, "a %s delta is a JSON object (a merge patch of the state)", kind)
		}
		d.Patch = raw
	case backend.DivergeActionOverride:
		// An optional seed restarts the child's RNG before the actions: a
		// deliberation's branches share seeds (common random numbers).
		var v struct {
			Actions []json.RawMessage `json:"actions"`
			Seed    *int64            `json:"seed"`
		}
		if !isObject || json.Unmarshal(raw, &v) != nil || len(v.Actions) == 0 {
			return d, backend.Errorf(backend.EINVALID, `an action_override delta is {"actions": [...]} with at least one action (and optionally "seed": N)`)
		}
		if v.Seed != nil && *v.Seed < 0 {
			return d, backend.Errorf(backend.EINVALID, "a seed is a whole number from 0 to 2^63-1, not %d", *v.Seed)
		}
		d.Actions, d.Seed = v.Actions, v.Seed
	case backend.DivergeProgramChange:
		var v struct {
			Program *string `json:"program"`
		}
		if !isObject || json.Unmarshal(raw, &v) != nil || v.Program == nil || *v.Program == "" {
			return d, backend.Errorf(backend.EINVALID, `a program_change delta is {"program": "<Starlark source>"}`)
		}
		d.Program = v.Program
	case backend.DivergeSeedChange:
		var v struct {
			Seed *int64 `json:"seed"`
		}
		if isObject && json.Unmarshal(raw, &v) != nil {
			return d, backend.Errorf(backend.EINVALID, `a seed_change delta is {} or {"seed": N} with 0 ≤ N < 2^63`)
		}
		if v.Seed != nil && *v.Seed < 0 {
			return d, backend.Errorf(backend.EINVALID, "a seed is a whole number from 0 to 2^63-1, not %d", *v.Seed)
		}
		d.Seed = v.Seed
	case backend.DivergePlanEdit:
		if domain != backend.DomainReal {
			return d, backend.Errorf(backend.EINVALID, "plan_edit forks task runs; a simulated world diverges by state_patch, action_override, seed_change, program_change or parameter_change")
		}
		d.Patch = raw
	default:
		return d, backend.Errorf(backend.EINVALID, "unknown divergence %q (use state_patch, action_override, seed_change, program_change, parameter_change or plan_edit)", kind)
	}
	return d, nil
}

func childSeed(parent int64, forkID string, policy backend.SeedPolicy, d delta) (int64, error) {
	if d.Seed != nil {
		return *d.Seed, nil
	}
	switch policy {
	case backend.SeedInherit:
		return parent, nil
	case backend.SeedDerive:
		h := fnv.New64a()
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(parent))
		h.Write(b[:])
		h.Write([]byte(forkID))
		return int64(h.Sum64() & maxSeed), nil
	case backend.SeedFresh:
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, backend.Wrap(err, backend.EINTERNAL, "cannot draw a fresh seed")
		}
		return int64(binary.BigEndian.Uint64(b[:]) & maxSeed), nil
	}
	return 0, backend.Errorf(backend.EINVALID, "unknown seed policy %q (use inherit, derive or fresh)", policy)
}

// diverge applies a fork's divergence to the restored world. Replay
// verification calls it too, so a child re-executes exactly.
func diverge(w *starlark.World, f backend.Fork, child backend.WorldSpec, d delta) error {
	// Inherit continues the parent's RNG exactly where the checkpoint left it;
	// any other seed restarts the RNG from the child's seed.
	if f.SeedPolicy != backend.SeedInherit || d.Seed != nil {
		if err := w.Reseed(uint64(child.Seed)); err != nil {
			return err
		}
	}
	switch f.Divergence {
	case backend.DivergeStatePatch:
		patched, err := mergePatch(w.State(), d.Patch)
		if err != nil {
			return err
		}
		return w.ReplaceState(patched)
	case backend.DivergeParameterChange:
		patched, err := patchParameters(w.State(), d.Patch)
		if err != nil {
			return err
		}
		return w.ReplaceState(patched)
	}
	return nil
}
