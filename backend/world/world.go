package world

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/starlark"
)

// Store is what the world service needs of the registry.
type Store interface {
	CreateSpecAndRun(ctx context.Context, s backend.WorldSpec, r backend.WorldRun) error
	GetSpec(ctx context.Context, id string) (backend.WorldSpec, error)
	ListSpecs(ctx context.Context) ([]backend.WorldSpec, error)
	GetRun(ctx context.Context, id string) (backend.WorldRun, error)
	ListRuns(ctx context.Context, worldID string) ([]backend.WorldRun, error)
	CreateRun(ctx context.Context, r backend.WorldRun) error
	SaveRun(ctx context.Context, r backend.WorldRun, expect int64, events []backend.Event, cp *backend.Checkpoint, also ...backend.Prepared) ([]backend.Event, error)
	GetCheckpoint(ctx context.Context, id string) (backend.Checkpoint, error)
	ListCheckpoints(ctx context.Context, runID string) ([]backend.Checkpoint, error)
	CreateFork(ctx context.Context, f backend.Fork, child backend.WorldSpec, run backend.WorldRun, events []backend.Event, cp *backend.Checkpoint) ([]backend.Event, error)
	ListForks(ctx context.Context) ([]backend.Fork, error)
	// ForkTimes maps each fork id to its checkpoint's world-local time.
	ForkTimes(ctx context.Context) (map[string]int64, error)
	ForkOf(ctx context.Context, childWorldID string) (backend.Fork, error)
	// ListWorlds returns a page of worlds, newest first, with their latest
	// run and fork.
	ListWorlds(ctx context.Context, q backend.WorldQuery) (backend.WorldPage, error)
}

// Events is what the world service reads of the ledger.
type Events interface {
	Query(ctx context.Context, q backend.EventQuery) ([]backend.Event, error)
	// Search is Query keeping only the events whose line t matches.
	Search(ctx context.Context, q backend.EventQuery, t backend.EventText) ([]backend.Event, error)
	Head(ctx context.Context, stream string) (int64, error)
	// TypeCounts counts the events of stream up to toSeq by type.
	TypeCounts(ctx context.Context, stream string, toSeq int64) (map[string]int64, error)
}

// Event types a world run records.
const (
	EventInitialized = "world.initialized"
	EventStep        = "world.step"
	EventEmitted     = "world.event"
	EventCheckpoint  = "world.checkpoint"
	EventForked      = "world.forked"
	EventCompleted   = "world.completed"
	EventFailed      = "world.failed"
)

// BackendStarlark names the deterministic Starlark state world.
const BackendStarlark = "starlark"

// Service runs worlds.
type Service struct {
	store  Store
	events Events
	blobs  backend.BlobStore
	runner starlark.Runner // where programs run; nil: in this process, unbounded
	now    func() time.Time

	// search is how SearchHistory slices its work (history_search.go).
	search searchSlicing

	// stateOf reads the state of runs of other backends (task runs), for
	// branch comparison; see SetStateReader.
	stateOf map[string]func(ctx context.Context, runID string) (json.RawMessage, error)

	mu       sync.Mutex
	limits   starlark.Limits
	programs map[string]*starlark.Program // by program digest
	specs    map[string]backend.WorldSpec // immutable specs read before (specOf)
	starts   map[string]branchStartEntry  // checkpoints branches started from (branchStart)
	live     map[string]*instance         // open runs, by run id
	runLocks map[string]*sync.Mutex
	// stepping counts the batches of steps being computed for a run in
	// this process (RunSteps, or a job this process waits for on the
	// team's workers): a run whose status is running but that no batch
	// moves is idle, waiting for its next action.
	stepping map[string]int
}

// instance is an open run: its world in memory and the stream head it
// reflects, so a step appends exactly after what it has seen.
type instance struct {
	spec  backend.WorldSpec
	run   backend.WorldRun
	world *starlark.World
	head  int64
}

// New returns the world service. Its programs run through runner (a
// worldproc.Pool bounds their memory); a nil runner runs them in this
// process, where nothing bounds what they allocate.
func New(store Store, events Events, blobs backend.BlobStore, limits starlark.Limits, runner starlark.Runner) *Service {
	return &Service{
		store: store, events: events, blobs: blobs, limits: limits, runner: runner, now: time.Now, search: defaultSearchSlicing,
		programs: map[string]*starlark.Program{}, specs: map[string]backend.WorldSpec{}, live: map[string]*instance{}, runLocks: map[string]*sync.Mutex{},
		stepping: map[string]int{},
		stateOf:  map[string]func(context.Context, string) (json.RawMessage, error){},
	}
}

// Limits returns the limits every world program runs under, defaults
// filled in.
func (s *Service) Limits() starlark.Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits.Filled()
}

// SetLimits changes the limits of every later call of a world program (a
// setting changed): programs compiled under the old limits are forgotten,
// and open runs are read again from their checkpoints when next used.
func (s *Service) SetLimits(l starlark.Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = l
	clear(s.programs)
	clear(s.live)
}

// Runner returns where the service's world programs run (nil: in this
// process).
func (s *Service) Runner() starlark.Runner { return s.runner }

// compile compiles a program under the service's limits, where its calls
// will run.
func (s *Service) compile(ctx context.Context, name string, source []byte) (*starlark.Program, error) {
	return starlark.CompileWith(ctx, s.runner, name, source, s.Limits())
}

// SetStateReader lets Diff and State read the state of runs of another
// backend (the runtime registers task runs). Call it before use.
func (s *Service) SetStateReader(backendName string, fn func(ctx context.Context, runID string) (json.RawMessage, error)) {
	s.stateOf[backendName] = fn
}

// lockRun serialises operations on one run.
func (s *Service) lockRun(runID string) func() {
	s.mu.Lock()
	m, ok := s.runLocks[runID]
	if !ok {
		m = &sync.Mutex{}
		s.runLocks[runID] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// MarkStepping records that a batch of steps is being computed for runID
// until the returned func is called: Stepping and ListWorlds report it.
func (s *Service) MarkStepping(runID string) func() {
	s.mu.Lock()
	s.stepping[runID]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.stepping[runID]--; s.stepping[runID] <= 0 {
			delete(s.stepping, runID)
		}
	}
}

// Stepping reports whether a batch of steps is being computed for runID in
// this process (another process's batches are not seen).
func (s *Service) Stepping(runID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stepping[runID] > 0
}

// NewWorld describes a simulated world to create.
type NewWorld struct {
	Name    string
	Program []byte // Starlark source
	Seed    int64  // 0 ≤ seed < 2^63
	// From, when set, is the task run that starts this simulation: the new
	// world is its world's child in the lineage, forked at the run's latest
	// checkpoint (divergence program_change), with parent_time that
	// checkpoint's time. Empty makes a root world.
	From string
}

// Create stores a new simulated world spec and its first run, initialized
// from the seed with a checkpoint at time 0 (so it can be forked from the
// start).
func (s *Service) Create(ctx context.Context, nw NewWorld) (backend.WorldSpec, backend.WorldRun, error) {
	if nw.Seed < 0 {
		return backend.WorldSpec{}, backend.WorldRun{}, backend.Errorf(backend.EINVALID, "a seed is a whole number from 0 to 2^63-1, not %d", nw.Seed)
	}
	if nw.Name == "" {
		nw.Name = "world"
	}
	// Compile and initialize before anything is stored: a program that
	// cannot start (a mistake, a limit) leaves the data directory as it was.
	prog, err := s.compileProgram(ctx, nw.Name, nw.Program)
	if err != nil {
		return backend.WorldSpec{}, backend.WorldRun{}, err
	}
	w := prog.New()
	if _, err := w.Initialize(ctx, uint64(nw.Seed)); err != nil {
		return backend.WorldSpec{}, backend.WorldRun{}, err
	}
	now := s.now().UTC()
	spec := backend.WorldSpec{
		ID: backend.NewID(backend.KindWorld), Name: nw.Name, Domain: backend.DomainSimulated, Backend: BackendStarlark,
		Params: json.RawMessage("{}"), Seed: nw.Seed, CreatedAt: now,
	}
	run := backend.WorldRun{ID: backend.NewID(backend.KindRun), WorldID: spec.ID, Status: backend.RunRunning, CreatedAt: now, UpdatedAt: now}
	var fork *backend.Fork
	if nw.From != "" {
		if fork, err = s.simulationFork(ctx, nw.From, &spec, &run, nw.Program); err != nil {
			return backend.WorldSpec{}, backend.WorldRun{}, err
		}
	}
	ref, err := s.blobs.Put(ctx, nw.Program, programMediaType)
	if err != nil {
		return backend.WorldSpec{}, backend.WorldRun{}, err
	}
	spec.Program = ref
	if fork == nil {
		if err := s.store.CreateSpecAndRun(ctx, spec, run); err != nil {
			return backend.WorldSpec{}, backend.WorldRun{}, err
		}
	}
	inst := &instance{spec: spec, run: run, world: w}
	events := []backend.Event{s.event(inst, EventInitialized, map[string]any{
		"seed": nw.Seed, "program": ref.Digest, "stateDigest": digest(w.State()),
	})}
	cp, cpEvent, err := s.snapshot(ctx, inst)
	if err != nil {
		return backend.WorldSpec{}, backend.WorldRun{}, err
	}
	inst.run.LatestCheckpointID = cp.ID
	if fork != nil {
		// The world, its fork record, its run and its first events in one
		// commit: a simulation is in the task's lineage whole or not at all.
		stored, err := s.store.CreateFork(ctx, *fork, spec, inst.run, append(events, cpEvent), &cp)
		if err != nil {
			return backend.WorldSpec{}, backend.WorldRun{}, err
		}
		inst.head = stored[len(stored)-1].Seq
	} else if err := s.save(ctx, inst, append(events, cpEvent), &cp); err != nil {
		return backend.WorldSpec{}, backend.WorldRun{}, err
	}
	s.keep(inst)
	return spec, inst.run, nil
}

// programMediaType is the media type of a program's blob.
const programMediaType = "text/x-starlark"

// compileProgram compiles source (its top-level code runs where every call
// of it will) and keeps it by digest; the caller stores the source as a blob
// once nothing else can fail before its record is written.
func (s *Service) compileProgram(ctx context.Context, name string, source []byte) (*starlark.Program, error) {
	prog, err := s.compile(ctx, name, source)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.programs[prog.Digest()] = prog
	s.mu.Unlock()
	return prog, nil
}

// program returns the compiled program of a spec.
func (s *Service) program(ctx context.Context, spec backend.WorldSpec) (*starlark.Program, error) {
	if spec.Backend != BackendStarlark {
		return nil, backend.Errorf(backend.EINVALID, "world %s is a %s world; only simulated worlds can be stepped here", spec.ID, spec.Backend)
	}
	s.mu.Lock()
	prog, ok := s.programs[spec.Program.Digest]
	s.mu.Unlock()
	if ok {
		return prog, nil
	}
	source, err := s.blobs.Get(ctx, spec.Program)
	if err != nil {
		return nil, err
	}
	if prog, err = s.compile(ctx, spec.Name, source); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.programs[spec.Program.Digest] = prog
	s.mu.Unlock()
	return prog, nil
}

// open returns the live instance of a run, loading it when needed: restore
// the latest checkpoint, then re-apply the steps recorded after it. The
// caller holds the run's lock.
func (s *Service) open(ctx context.Context, runID string) (*instance, error) {
	run, err := s.store.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	head, err := s.events.Head(ctx, runID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	inst, ok := s.live[runID]
	s.mu.Unlock()
	if ok && inst.head == head {
		inst.run = run
		return inst, nil
	}
	spec, err := s.store.GetSpec(ctx, run.WorldID)
	if err != nil {
		return nil, err
	}
	prog, err := s.program(ctx, spec)
	if err != nil {
		return nil, err
	}
	if run.LatestCheckpointID == "" {
		return nil, backend.Errorf(backend.ECORRUPT, "run %s has no checkpoint to start from", runID)
	}
	cp, err := s.store.GetCheckpoint(ctx, run.LatestCheckpointID)
	if err != nil {
		return nil, err
	}
	data, err := s.blobs.Get(ctx, cp.Blob)
	if err != nil {
		return nil, err
	}
	w := prog.New()
	if err := w.RestoreBytes(data); err != nil {
		return nil, err
	}
	inst = &instance{spec: spec, run: run, world: w, head: cp.LedgerSeq}
	if cp.RunID == runID && head > cp.LedgerSeq {
		after, err := s.events.Query(ctx, backend.EventQuery{Stream: runID, FromSeq: cp.LedgerSeq + 1, Types: []string{EventStep}})
		if err != nil {
			return nil, err
		}
		for _, e := range after {
			if err := replayStep(ctx, w, e); err != nil {
				return nil, err
			}
		}
	}
	inst.head = head
	s.keep(inst)
	return inst, nil
}

func (s *Service) keep(inst *instance) {
	s.mu.Lock()
	s.live[inst.run.ID] = inst
	s.mu.Unlock()
}

func (s *Service) forget(runID string) {
	s.mu.Lock()
	delete(s.live, runID)
	s.mu.Unlock()
}

// stepPayload is the payload of a world.step event.
type stepPayload struct {
	Action      json.RawMessage `json:"action"`
	StateDigest string          `json:"stateDigest"`
	Emitted     int             `json:"emitted"`
	Done        bool            `json:"done"`
}

// replayStep re-applies a recorded step and checks it lands on the recorded state.
func replayStep(ctx context.Context, w *starlark.World, e backend.Event) error {
	var p stepPayload
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		return backend.Errorf(backend.ECORRUPT, "event %s (seq %d) is not a readable world step", e.ID, e.Seq)
	}
	res, err := w.Step(ctx, actionOrNull(p.Action))
	if err != nil {
		return err
	}
	if got := digest(res.State); got != p.StateDigest {
		return backend.Errorf(backend.ECORRUPT, "replaying step at seq %d of %s gave state %s, but %s was recorded", e.Seq, e.Stream, got, p.StateDigest)
	}
	return nil
}

func actionOrNull(a json.RawMessage) json.RawMessage {
	if len(a) == 0 {
		return json.RawMessage("null")
	}
	return a
}

// event builds an event of inst's run with its clocks.
func (s *Service) event(inst *instance, typ string, payload any) backend.Event {
	data, err := json.Marshal(payload)
	if err != nil {
		data = []byte(`{}`)
	}
	return backend.Event{
		Type: typ, Payload: data, Reality: inst.spec.Domain.Reality(),
		ParentTime: inst.run.ParentTime, DeliberationIndex: inst.run.DeliberationIndex, WorldLocalTime: inst.world.Time(),
	}
}

// snapshot stores the world's exact checkpoint bytes and returns the record
// and the event that marks it; the caller appends both together.
func (s *Service) snapshot(ctx context.Context, inst *instance) (backend.Checkpoint, backend.Event, error) {
	data, err := inst.world.CheckpointBytes()
	if err != nil {
		return backend.Checkpoint{}, backend.Event{}, err
	}
	if _, err := s.blobs.Put(ctx, data, "application/json"); err != nil {
		return backend.Checkpoint{}, backend.Event{}, err
	}
	cp, e := s.checkpointRecord(inst, data)
	return cp, e, nil
}

// checkpointRecord returns the record and event of a checkpoint of inst
// whose state is data; the caller stores data as a blob before the record.
func (s *Service) checkpointRecord(inst *instance, data []byte) (backend.Checkpoint, backend.Event) {
	ref := backend.BlobRef{Digest: digest(data), Size: int64(len(data)), MediaType: "application/json"}
	cp := backend.Checkpoint{
		ID: backend.NewID(backend.KindCheckpoint), WorldID: inst.spec.ID, RunID: inst.run.ID,
		WorldLocalTime: inst.world.Time(), Blob: ref, CreatedAt: s.now().UTC(),
	}
	e := s.event(inst, EventCheckpoint, map[string]any{"checkpointId": cp.ID, "digest": ref.Digest, "size": ref.Size})
	return cp, e
}

// save appends events for inst's run and writes its record in one
// transaction, expecting the head inst has seen.
func (s *Service) save(ctx context.Context, inst *instance, events []backend.Event, cp *backend.Checkpoint) error {
	inst.run.WorldLocalTime = inst.world.Time()
	inst.run.UpdatedAt = s.now().UTC()
	stored, err := s.store.SaveRun(ctx, inst.run, inst.head, events, cp)
	if err != nil {
		s.forget(inst.run.ID) // the in-memory world may be ahead of what is stored
		return err
	}
	if len(stored) > 0 {
		inst.head = stored[len(stored)-1].Seq
	}
	return nil
}

// digest names canonical bytes.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Spec returns a world's spec.
func (s *Service) Spec(ctx context.Context, worldID string) (backend.WorldSpec, error) {
	return s.store.GetSpec(ctx, worldID)
}

// Specs returns every world's spec, oldest first.
func (s *Service) Specs(ctx context.Context) ([]backend.WorldSpec, error) {
	return s.store.ListSpecs(ctx)
}

// Run returns a run.
func (s *Service) Run(ctx context.Context, runID string) (backend.WorldRun, error) {
	return s.store.GetRun(ctx, runID)
}

// Runs returns the runs of a world (all runs for ""), newest first.
func (s *Service) Runs(ctx context.Context, worldID string) ([]backend.WorldRun, error) {
	return s.store.ListRuns(ctx, worldID)
}

// GetCheckpoint returns a checkpoint record.
func (s *Service) GetCheckpoint(ctx context.Context, id string) (backend.Checkpoint, error) {
	return s.store.GetCheckpoint(ctx, id)
}

// Checkpoints returns a run's own checkpoints in ledger order.
func (s *Service) Checkpoints(ctx context.Context, runID string) ([]backend.Checkpoint, error) {
	return s.store.ListCheckpoints(ctx, runID)
}

// ForkOf returns the fork that created a world (ENOTFOUND for a root).
func (s *Service) ForkOf(ctx context.Context, worldID string) (backend.Fork, error) {
	return s.store.ForkOf(ctx, worldID)
}
