package world

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"ducklm/backend"
)

// BranchRequest asks for one hypothesis of a deliberation: a fork of a
// checkpoint that applies a few actions and is scored at its end.
type BranchRequest struct {
	// CheckpointID is where the branch starts: the parent run's checkpoint
	// for a branch at the root of a search, the end checkpoint of another
	// branch deeper in it.
	CheckpointID string
	// Actions are applied in order (at least one). A branch whose world
	// becomes done stops there; the actions after are not applied.
	Actions []json.RawMessage
	// Seed, when set, restarts the branch's RNG from this seed before the
	// actions (recorded as the fork's seed, policy derive); nil continues
	// the RNG exactly where the checkpoint left it (policy inherit).
	Seed *int64
	// Name names the branch's world; empty derives one from the parent's.
	Name string
	// ParentTime and DeliberationIndex are the clocks of every event of the
	// branch: the parent run's world-local time when the round of
	// deliberation began, and the round.
	ParentTime        int64
	DeliberationIndex int64
	// Key, when set, makes the branch idempotent: its fork, world and run
	// ids are derived from the key, so a retry (a queue job run again after
	// its worker died) records nothing new and returns what the first
	// attempt recorded.
	Key string
}

// BranchResult is what a branch did and how good its end is.
type BranchResult struct {
	Fork backend.Fork     `json:"fork"`
	Run  backend.WorldRun `json:"run"`
	// Checkpoint is the branch's end: deeper branches fork from it.
	Checkpoint backend.Checkpoint `json:"checkpoint"`
	// Digest names the whole end state (state, RNG, clock, done): two
	// branches with equal digests continue identically.
	Digest string          `json:"digest"`
	State  json.RawMessage `json:"state"`
	// Steps is how many actions were applied (fewer than asked when the
	// world became done, or a step failed).
	Steps int  `json:"steps"`
	Done  bool `json:"done"`
	// Failed is the sentence of a program error (in a step, actions or
	// score); the branch is recorded as a failed run and has no score.
	Failed string `json:"failed,omitempty"`
	// Score is score(state) at the end; HasScore is false when the
	// program defines no score or the branch failed.
	Score    float64 `json:"score"`
	HasScore bool    `json:"hasScore"`
	// Next are actions(state) at the end (empty when the world is done,
	// failed or the program defines no actions).
	Next []json.RawMessage `json:"next,omitempty"`
}

// Branch forks a checkpoint, applies the actions, checkpoints the end and
// scores it, and records all of it in ONE commit: the fork record, the child
// spec and run, every step's events and the end checkpoint. A branch is a
// hypothesis, so nothing of it is durable before the whole is: a crash
// leaves a branch either complete or absent, and a branch costs one
// transaction however many steps it takes (the blob of its end checkpoint
// is written before that commit; a crash between the two leaves at most an
// unreferenced blob). Program errors are not Go errors here: the branch is
// recorded as a failed run and the result says why.
func (s *Service) Branch(ctx context.Context, req BranchRequest) (BranchResult, error) {
	var out BranchResult
	if len(req.Actions) == 0 {
		return out, backend.Errorf(backend.EINVALID, "a branch applies at least one action")
	}
	if req.Seed != nil && *req.Seed < 0 {
		return out, backend.Errorf(backend.EINVALID, "a seed is a whole number from 0 to 2^63-1, not %d", *req.Seed)
	}
	cp, err := s.store.GetCheckpoint(ctx, req.CheckpointID)
	if err != nil {
		return out, err
	}
	// A checkpoint names its run and that run's world: no run to read.
	parent, err := s.specOf(ctx, cp.WorldID)
	if err != nil {
		return out, err
	}
	prog, err := s.program(ctx, parent)
	if err != nil {
		return out, err
	}
	data, err := s.blobs.Get(ctx, cp.Blob)
	if err != nil {
		return out, err
	}
	w := prog.New()
	if err := w.RestoreBytes(data); err != nil {
		return out, err
	}
	if w.Done() {
		return out, backend.Errorf(backend.EINVALID, "checkpoint %s is of a world that is done; there is nothing to branch from", cp.ID)
	}

	actions := make([]json.RawMessage, len(req.Actions))
	for i, a := range req.Actions {
		a = actionOrNull(a)
		if !json.Valid(a) {
			return out, backend.Errorf(backend.EINVALID, "action %d of the branch is not valid JSON", i+1)
		}
		actions[i] = compactJSON(a)
	}
	deltaDoc := map[string]any{"actions": actions}
	f := backend.Fork{
		ID: branchID(backend.KindFork, req.Key), ParentWorldID: parent.ID, ParentRunID: cp.RunID,
		CheckpointID: cp.ID, Divergence: backend.DivergeActionOverride, SeedPolicy: backend.SeedInherit,
		CreatedAt: s.now().UTC(),
	}
	seed := parent.Seed
	if req.Seed != nil {
		seed = *req.Seed
		deltaDoc["seed"] = seed
		f.SeedPolicy = backend.SeedDerive
		if err := w.Reseed(uint64(seed)); err != nil {
			return out, err
		}
	}
	f.Delta, _ = json.Marshal(deltaDoc)
	child := backend.WorldSpec{
		ID: branchID(backend.KindWorld, req.Key), Name: req.Name, Domain: parent.Domain, Backend: parent.Backend,
		Program: parent.Program, Params: parent.Params, Seed: seed, ParentWorldID: parent.ID, ForkID: f.ID,
		CreatedAt: f.CreatedAt,
	}
	if child.Name == "" {
		child.Name = parent.Name + " / branch"
	}
	f.ChildWorldID = child.ID
	inst := &instance{spec: child, world: w, run: backend.WorldRun{
		ID: branchID(backend.KindRun, req.Key), WorldID: child.ID, Status: backend.RunRunning,
		WorldLocalTime: cp.WorldLocalTime, ParentTime: req.ParentTime, DeliberationIndex: req.DeliberationIndex,
		BaseRunID: cp.RunID, BaseSeq: cp.LedgerSeq, CreatedAt: f.CreatedAt, UpdatedAt: f.CreatedAt,
	}}
	events := []backend.Event{s.event(inst, EventForked, map[string]any{
		"forkId": f.ID, "parentWorldId": parent.ID, "parentRunId": cp.RunID, "checkpointId": cp.ID,
		"divergence": f.Divergence, "delta": json.RawMessage(f.Delta), "seedPolicy": f.SeedPolicy, "seed": seed,
		"stateDigest": digest(w.State()),
	})}

	fail := func(cause error) {
		out.Failed = backend.ErrorMessage(cause)
		inst.run.Status, inst.run.Error = backend.RunFailed, out.Failed
		events = append(events, s.event(inst, EventFailed, map[string]any{"error": out.Failed, "code": backend.ErrorCode(cause)}))
	}
	for _, a := range actions {
		if w.Done() {
			break
		}
		res, err := w.Step(ctx, a)
		if err != nil {
			if ctx.Err() != nil {
				return BranchResult{}, err // cancelled: nothing of the branch is recorded
			}
			fail(err)
			break
		}
		out.Steps++
		events = append(events, s.stepEvents(inst, a, res)...)
	}
	if out.Failed == "" && !w.Done() {
		if prog.HasActions() {
			next, err := w.Actions(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return BranchResult{}, err
				}
				fail(err)
			}
			out.Next = next
		}
	}
	if out.Failed == "" && prog.HasScore() {
		score, err := w.Score(ctx)
		switch {
		case err == nil:
			out.Score, out.HasScore = score, true
		case ctx.Err() != nil:
			return BranchResult{}, err
		default:
			fail(err)
			out.Next = nil
		}
	}

	end, cpEvent, err := s.snapshot(ctx, inst)
	if err != nil {
		return BranchResult{}, err
	}
	inst.run.LatestCheckpointID = end.ID
	inst.run.WorldLocalTime = w.Time()
	stored, err := s.store.CreateFork(ctx, f, child, inst.run, append(events, cpEvent), &end)
	if err != nil && req.Key != "" {
		if rec, ok := s.recordedBranch(ctx, inst.run.ID); ok {
			// A retry of a branch already recorded: the same computation,
			// so the same end; what is stored is returned.
			out.Fork, out.Run, out.Checkpoint = rec.Fork, rec.Run, rec.Checkpoint
			out.Digest, out.State, out.Done = rec.Checkpoint.Blob.Digest, w.State(), w.Done()
			return out, nil
		}
	}
	if err != nil {
		return BranchResult{}, err
	}
	end.LedgerSeq = stored[len(stored)-1].Seq
	out.Fork, out.Run, out.Checkpoint = f, inst.run, end
	out.Digest, out.State, out.Done = end.Blob.Digest, w.State(), w.Done()
	return out, nil
}

// branchID is a fresh id, or with a key the id of that kind the key names.
func branchID(kind backend.IDKind, key string) string {
	if key == "" {
		return backend.NewID(kind)
	}
	sum := sha256.Sum256([]byte(string(kind) + "\x00" + key))
	return string(kind) + "_" + hex.EncodeToString(sum[:16])
}

// recordedBranch reads a branch run recorded before, with its fork and end
// checkpoint (a branch is one commit: its run exists only whole).
func (s *Service) recordedBranch(ctx context.Context, runID string) (BranchResult, bool) {
	var out BranchResult
	run, err := s.store.GetRun(ctx, runID)
	if err != nil {
		return out, false
	}
	f, err := s.store.ForkOf(ctx, run.WorldID)
	if err != nil {
		return out, false
	}
	cp, err := s.store.GetCheckpoint(ctx, run.LatestCheckpointID)
	if err != nil {
		return out, false
	}
	out.Fork, out.Run, out.Checkpoint = f, run, cp
	return out, true
}

// Assessment is what a world program says of a checkpoint's state: the
// actions it offers and its score.
type Assessment struct {
	Checkpoint backend.Checkpoint `json:"checkpoint"`
	Digest     string             `json:"digest"`
	State      json.RawMessage    `json:"state"`
	Done       bool               `json:"done"`
	// HasActions and HasScore say whether the program defines actions(state)
	// and score(state); Actions and Score are their answers.
	HasActions bool              `json:"hasActions"`
	HasScore   bool              `json:"hasScore"`
	Actions    []json.RawMessage `json:"actions,omitempty"`
	Score      float64           `json:"score"`
}

// Assess restores a checkpoint of a simulated world and asks its program for
// the actions and score of that state. It records nothing; a program error
// is returned as the error.
func (s *Service) Assess(ctx context.Context, checkpointID string) (Assessment, error) {
	var out Assessment
	cp, err := s.store.GetCheckpoint(ctx, checkpointID)
	if err != nil {
		return out, err
	}
	spec, err := s.store.GetSpec(ctx, cp.WorldID)
	if err != nil {
		return out, err
	}
	prog, err := s.program(ctx, spec)
	if err != nil {
		return out, err
	}
	data, err := s.blobs.Get(ctx, cp.Blob)
	if err != nil {
		return out, err
	}
	w := prog.New()
	if err := w.RestoreBytes(data); err != nil {
		return out, err
	}
	out = Assessment{Checkpoint: cp, Digest: cp.Blob.Digest, State: w.State(), Done: w.Done(),
		HasActions: prog.HasActions(), HasScore: prog.HasScore()}
	if out.HasActions && !out.Done {
		if out.Actions, err = w.Actions(ctx); err != nil {
			return out, err
		}
	}
	if out.HasScore {
		if out.Score, err = w.Score(ctx); err != nil {
			return out, err
		}
	}
	return out, nil
}

// specCacheSize bounds the specs specOf keeps; past it the cache starts over.
const specCacheSize = 4096

// specOf returns a spec, from memory when it was read before: a spec never
// changes once stored, and a deliberation forks the same few worlds many
// times.
func (s *Service) specOf(ctx context.Context, worldID string) (backend.WorldSpec, error) {
	s.mu.Lock()
	spec, ok := s.specs[worldID]
	s.mu.Unlock()
	if ok {
		return spec, nil
	}
	spec, err := s.store.GetSpec(ctx, worldID)
	if err != nil {
		return spec, err
	}
	s.mu.Lock()
	if len(s.specs) >= specCacheSize {
		s.specs = map[string]backend.WorldSpec{}
	}
	s.specs[worldID] = spec
	s.mu.Unlock()
	return spec, nil
}
