package world

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"slices"

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
	p, err := s.computeBranch(ctx, req)
	if err != nil {
		return BranchResult{}, err
	}
	if _, err := s.blobs.Put(ctx, p.data, "application/json"); err != nil {
		return BranchResult{}, err
	}
	return s.recordBranch(ctx, p)
}

// BranchStore records the branches of a batch in one commit (the SQL
// store does), running within last inside that commit; without it Branches
// records them one at a time.
type BranchStore interface {
	CreateBranches(ctx context.Context, recs []backend.BranchRecord, within func(tx *sql.Tx) error) error
}

// BranchesCommit runs inside the commit that records a batch of branches,
// with their results: a queue completes the job that asked for them there,
// so the branches and the job's end are one transaction. Its error rolls
// the branches back and is Branches' error.
type BranchesCommit func(tx *sql.Tx, out []BranchResult) error

// BlobBatcher stores and reads several blobs in one statement each (the
// database's blob store does).
type BlobBatcher interface {
	PutMany(ctx context.Context, data [][]byte, mediaType string) error
	GetMany(ctx context.Context, digests []string) (map[string][]byte, error)
}

// StartReader reads where a batch of branches starts, checkpoints with
// their worlds' specs, in one query (the SQL store does).
type StartReader interface {
	BranchStarts(ctx context.Context, ids []string) ([]backend.Checkpoint, []backend.WorldSpec, error)
}

// prefetchStarts reads the starts of reqs this service does not hold yet
// (checkpoints another worker recorded) in two queries, instead of three
// reads a branch. Whatever it cannot read is read again, and reported, by
// the branch that needs it.
func (s *Service) prefetchStarts(ctx context.Context, reqs []BranchRequest) {
	sr, ok := s.store.(StartReader)
	bb, ok2 := s.blobs.(BlobBatcher)
	if !ok || !ok2 {
		return
	}
	var ids []string
	s.mu.Lock()
	for _, r := range reqs {
		if _, held := s.starts[r.CheckpointID]; !held && !slices.Contains(ids, r.CheckpointID) {
			ids = append(ids, r.CheckpointID)
		}
	}
	s.mu.Unlock()
	if len(ids) < 2 {
		return // one read path is as cheap
	}
	cps, specs, err := sr.BranchStarts(ctx, ids)
	if err != nil || len(cps) == 0 {
		return
	}
	digests := make([]string, len(cps))
	for i, cp := range cps {
		digests[i] = cp.Blob.Digest
	}
	data, err := bb.GetMany(ctx, digests)
	if err != nil {
		return
	}
	for i, cp := range cps {
		if d, ok := data[cp.Blob.Digest]; ok {
			s.keepSpec(specs[i])
			s.keepStart(cp, d)
		}
	}
}

// Branches runs a batch of branches (a queue job's) and records them all in
// ONE commit when the store can (BranchStore): the database's lock and
// commit are paid once for the batch, not once a branch, and within (when
// set) runs inside that commit; committed says it did. Each branch is what
// Branch would record, and a batch is recorded whole or not at all. When
// that commit fails for the store (a retry of a batch whose branches were
// recorded, or one recorded by a worker thought dead), the branches are
// recorded one at a time, so those already recorded return what was
// recorded; within is then not run (committed is false).
func (s *Service) Branches(ctx context.Context, reqs []BranchRequest, within BranchesCommit) (out []BranchResult, committed bool, err error) {
	s.prefetchStarts(ctx, reqs)
	ps := make([]*pendingBranch, len(reqs))
	for i, req := range reqs {
		p, err := s.computeBranch(ctx, req)
		if err != nil {
			return nil, false, err
		}
		ps[i] = p
	}
	if bb, ok := s.blobs.(BlobBatcher); ok {
		data := make([][]byte, len(ps))
		for i, p := range ps {
			data[i] = p.data
		}
		if err := bb.PutMany(ctx, data, "application/json"); err != nil {
			return nil, false, err
		}
	} else {
		for _, p := range ps {
			if _, err := s.blobs.Put(ctx, p.data, "application/json"); err != nil {
				return nil, false, err
			}
		}
	}
	out = make([]BranchResult, len(ps))
	if bs, ok := s.store.(BranchStore); ok {
		recs := make([]backend.BranchRecord, len(ps))
		for i, p := range ps {
			recs[i] = p.rec
			out[i] = p.result()
		}
		var hook func(*sql.Tx) error
		var hookErr error
		if within != nil {
			hook = func(tx *sql.Tx) error {
				hookErr = within(tx, out)
				return hookErr
			}
		}
		err := bs.CreateBranches(ctx, recs, hook)
		switch {
		case err == nil:
			for _, p := range ps {
				s.keepRecorded(p)
			}
			return out, true, nil
		case hookErr != nil:
			return nil, false, hookErr
		case ctx.Err() != nil:
			return nil, false, err
		}
	}
	for i, p := range ps {
		res, err := s.recordBranch(ctx, p)
		if err != nil {
			return nil, false, err
		}
		out[i] = res
	}
	return out, false, nil
}

// pendingBranch is a branch computed and not yet recorded: what its commit
// writes, the bytes of its end state and the result it will return.
type pendingBranch struct {
	req  BranchRequest
	rec  backend.BranchRecord
	data []byte
	out  BranchResult
}

// computeBranch runs a branch in memory: fork, actions, actions and score
// at the end, the end checkpoint's bytes. It writes nothing.
func (s *Service) computeBranch(ctx context.Context, req BranchRequest) (*pendingBranch, error) {
	var out BranchResult
	if len(req.Actions) == 0 {
		return nil, backend.Errorf(backend.EINVALID, "a branch applies at least one action")
	}
	if req.Seed != nil && *req.Seed < 0 {
		return nil, backend.Errorf(backend.EINVALID, "a seed is a whole number from 0 to 2^63-1, not %d", *req.Seed)
	}
	cp, data, err := s.branchStart(ctx, req.CheckpointID)
	if err != nil {
		return nil, err
	}
	// A checkpoint names its run and that run's world: no run to read.
	parent, err := s.specOf(ctx, cp.WorldID)
	if err != nil {
		return nil, err
	}
	prog, err := s.program(ctx, parent)
	if err != nil {
		return nil, err
	}
	w := prog.New()
	if err := w.RestoreBytes(data); err != nil {
		return nil, err
	}
	if w.Done() {
		return nil, backend.Errorf(backend.EINVALID, "checkpoint %s is of a world that is done; there is nothing to branch from", cp.ID)
	}

	actions := make([]json.RawMessage, len(req.Actions))
	for i, a := range req.Actions {
		a = actionOrNull(a)
		if !json.Valid(a) {
			return nil, backend.Errorf(backend.EINVALID, "action %d of the branch is not valid JSON", i+1)
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
			return nil, err
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
	// The whole branch in one exchange with the program's runner when it
	// all goes well; else (a call failing, a branch too long for one) the
	// calls one by one below, from the world as it was, fail exactly where
	// and as they do.
	probed, err := w.Probe(ctx, actions, prog.HasActions(), prog.HasScore())
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	oneByOne := err != nil
	if !oneByOne {
		for i, res := range probed.Steps {
			out.Steps++
			events = append(events, s.stepEvents(inst, actions[i], res)...)
		}
		out.Next = probed.Next
		out.Score, out.HasScore = probed.Score, probed.Judged
		actions = nil // all taken
	}
	for _, a := range actions {
		if w.Done() {
			break
		}
		res, err := w.Step(ctx, a)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err // cancelled: nothing of the branch is recorded
			}
			fail(err)
			break
		}
		out.Steps++
		events = append(events, s.stepEvents(inst, a, res)...)
	}
	if oneByOne && out.Failed == "" && !w.Done() {
		if prog.HasActions() {
			next, err := w.Actions(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				fail(err)
			}
			out.Next = next
		}
	}
	if oneByOne && out.Failed == "" && prog.HasScore() {
		score, err := w.Score(ctx)
		switch {
		case err == nil:
			out.Score, out.HasScore = score, true
		case ctx.Err() != nil:
			return nil, err
		default:
			fail(err)
			out.Next = nil
		}
	}

	end, err := w.CheckpointBytes()
	if err != nil {
		return nil, err
	}
	cpRec, cpEvent := s.checkpointRecord(inst, end)
	events = append(events, cpEvent)
	cpRec.LedgerSeq = int64(len(events)) // the branch's stream is new: its events are seqs 1..n
	inst.run.LatestCheckpointID = cpRec.ID
	inst.run.WorldLocalTime = w.Time()
	out.State, out.Done = w.State(), w.Done()
	return &pendingBranch{req: req, data: end, out: out,
		rec: backend.BranchRecord{Fork: f, Child: child, Run: inst.run, Events: events, Checkpoint: cpRec}}, nil
}

// recordBranch records one computed branch in its own commit. A retry of a
// branch already recorded (its key names the same run) returns what is
// stored: the same computation, so the same end.
func (s *Service) recordBranch(ctx context.Context, p *pendingBranch) (BranchResult, error) {
	r := p.rec
	end := r.Checkpoint
	stored, err := s.store.CreateFork(ctx, r.Fork, r.Child, r.Run, r.Events, &end)
	if err != nil && p.req.Key != "" {
		if rec, ok := s.recordedBranch(ctx, r.Run.ID); ok {
			out := p.out
			out.Fork, out.Run, out.Checkpoint, out.Digest = rec.Fork, rec.Run, rec.Checkpoint, rec.Checkpoint.Blob.Digest
			return out, nil
		}
	}
	if err != nil {
		return BranchResult{}, err
	}
	p.rec.Checkpoint.LedgerSeq = stored[len(stored)-1].Seq
	s.keepRecorded(p)
	return p.result(), nil
}

// result is what the branch returns once recorded as computed.
func (p *pendingBranch) result() BranchResult {
	out := p.out
	out.Fork, out.Run, out.Checkpoint, out.Digest = p.rec.Fork, p.rec.Run, p.rec.Checkpoint, p.rec.Checkpoint.Blob.Digest
	return out
}

// keepRecorded keeps a recorded branch's end and world in memory: deeper
// branches of the search start there, often on this worker.
func (s *Service) keepRecorded(p *pendingBranch) {
	s.keepStart(p.rec.Checkpoint, p.data)
	s.keepSpec(p.rec.Child)
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

// startCacheSize bounds the branch starts branchStart keeps, and
// startCacheBytes the size of a state it keeps; past the count the cache
// starts over.
const (
	startCacheSize  = 1024
	startCacheBytes = 256 << 10
)

type branchStartEntry struct {
	cp   backend.Checkpoint
	data []byte
}

// branchStart reads the checkpoint a branch starts from and its state's
// bytes. Both are immutable once stored, and a deliberation's branches
// start from a few checkpoints each (siblings, seeds), so they are kept:
// a worker running a batch of branches reads each start once, not once per
// branch. Callers never modify the bytes (RestoreBytes copies them).
func (s *Service) branchStart(ctx context.Context, id string) (backend.Checkpoint, []byte, error) {
	s.mu.Lock()
	e, ok := s.starts[id]
	s.mu.Unlock()
	if ok {
		return e.cp, e.data, nil
	}
	cp, err := s.store.GetCheckpoint(ctx, id)
	if err != nil {
		return cp, nil, err
	}
	data, err := s.blobs.Get(ctx, cp.Blob)
	if err != nil {
		return cp, nil, err
	}
	s.keepStart(cp, data)
	return cp, data, nil
}

// keepStart keeps a checkpoint and its state's bytes for branches that
// start there.
func (s *Service) keepStart(cp backend.Checkpoint, data []byte) {
	if len(data) > startCacheBytes {
		return
	}
	s.mu.Lock()
	if s.starts == nil || len(s.starts) >= startCacheSize {
		s.starts = map[string]branchStartEntry{}
	}
	s.starts[cp.ID] = branchStartEntry{cp: cp, data: data}
	s.mu.Unlock()
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
	s.keepSpec(spec)
	return spec, nil
}

// keepSpec keeps a stored spec in memory.
func (s *Service) keepSpec(spec backend.WorldSpec) {
	s.mu.Lock()
	if len(s.specs) >= specCacheSize {
		s.specs = map[string]backend.WorldSpec{}
	}
	s.specs[spec.ID] = spec
	s.mu.Unlock()
}
