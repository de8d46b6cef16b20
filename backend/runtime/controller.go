package runtime

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/taskgraph"
)

// RunStore is what the loop needs of the world registry.
type RunStore interface {
	// CreateSpecAndRunWith stores a spec, its first run and the run's first
	// events in one transaction.
	CreateSpecAndRunWith(ctx context.Context, s backend.WorldSpec, r backend.WorldRun, events []backend.Event) ([]backend.Event, error)
	GetSpec(ctx context.Context, id string) (backend.WorldSpec, error)
	GetRun(ctx context.Context, id string) (backend.WorldRun, error)
	ListRuns(ctx context.Context, worldID string) ([]backend.WorldRun, error)
	// ListRunsOfBackend returns the runs of worlds with that backend,
	// newest first.
	ListRunsOfBackend(ctx context.Context, backendName string) ([]backend.WorldRun, error)
	// SaveRun appends events to the run's stream with the run's row, a
	// checkpoint (nil: none) and writes prepared by the same store (a
	// memory decision's rows), in one transaction.
	SaveRun(ctx context.Context, r backend.WorldRun, expect int64, events []backend.Event, cp *backend.Checkpoint, also ...backend.Prepared) ([]backend.Event, error)
	GetCheckpoint(ctx context.Context, id string) (backend.Checkpoint, error)
	// ListCheckpoints returns a run's own checkpoints in ledger order.
	ListCheckpoints(ctx context.Context, runID string) ([]backend.Checkpoint, error)
	// ForkOf returns the fork that created a world (ENOTFOUND for a root).
	ForkOf(ctx context.Context, childWorldID string) (backend.Fork, error)
	CreateFork(ctx context.Context, f backend.Fork, child backend.WorldSpec, run backend.WorldRun, events []backend.Event, cp *backend.Checkpoint) ([]backend.Event, error)
}

// Events is what the loop reads of the ledger.
type Events interface {
	Query(ctx context.Context, q backend.EventQuery) ([]backend.Event, error)
	// Head is the seq of a stream's last event (0 for none).
	Head(ctx context.Context, stream string) (int64, error)
}

// Tools is the tool catalog.
type Tools interface {
	Get(name string) (backend.Tool, error)
	List() []backend.Tool
}

// BackendTask names the world backend of task runs.
const BackendTask = "task"

// Deps are the components the loop coordinates.
type Deps struct {
	Store  RunStore
	Events Events
	Blobs  backend.BlobStore
	Tools  Tools
	// Planner plans with a model; Offline serves without one.
	Planner Planner
	Offline Planner
	Critic  Critic
	Coder   Coder
	// Models lists the models Ollama offers (nil: no Ollama configured).
	Models ModelLister
	// Sandboxed reports whether bubblewrap can sandbox steps here.
	Sandboxed func() bool
	// WorkRoot holds the runs' default workspaces.
	WorkRoot string
	// DataDir is the data directory, which no workspace may be, hold or
	// be inside ("": WorkRoot's parent).
	DataDir string
	// Tokens receives streamed model tokens (not stored).
	Tokens func(runID, stepID, token string)
	// Memories retrieves what the memory store knows about a query, as
	// context lines (nil: none).
	Memories func(ctx context.Context, query string) ([]string, error)
	// Memory receives scored step results (nil: nothing is remembered).
	Memory MemoryWriter
	// ScriptTool runs a coder script (language, source) as a sandboxed step.
	ScriptTool func(language, source string) backend.Tool
	Log        func(msg string, args ...any)
	// Installation is the installation this controller drives runs for:
	// Submit records it as the run's owner (zero: none recorded, every run
	// is this process's, as on a lone data directory).
	Installation Installation
	// Drivers lets one process at a time drive a run when other processes
	// share the database (PostgreSQL); nil when the data directory's lock
	// already makes this process the only writer (SQLite).
	Drivers DriverLocks
	// Installations says which installations have opened the shared
	// database (nil: every owner counts as on it). A fork of a run whose
	// owner never has (a run imported from elsewhere) is this one's.
	Installations Installations
	// StartGrace is how long a step safe to repeat runs before its start
	// is recorded alone; a quicker one records it in its result's commit
	// (0: 20 ms). Negative records every start before its step runs, as
	// ducklm did before (crash tests use it to kill reads mid-run).
	StartGrace time.Duration
	// SyncGrace is how long the result of a step that changes something
	// waits, committed without a sync of its own, for the run's next
	// synced commit to make it durable before it is synced alone (0:
	// 20 ms; flush.go). Negative syncs every result's own commit.
	SyncGrace time.Duration
}

// Controller is the Runtime Loop Controller.
type Controller struct {
	d   Deps
	now func() time.Time

	mu      sync.Mutex
	drivers map[string]*driver
	// stalls counts the driver stops that left a run moving (afterDrive).
	stalls map[string]int
	closed bool
	wg     sync.WaitGroup

	// summaries keeps each run's list summary with the seq it was folded
	// to: a run whose stream has not moved is not loaded again.
	summaryMu sync.Mutex
	summaries map[string]cachedSummary

	// memos keeps each run's head and base (checkpoint.go).
	memoMu sync.Mutex
	memos  map[string]*runMemo
	// clocks keeps each run's fork clocks (parent time, deliberation
	// index), read once from its row: every event of a forked run carries them.
	clocks sync.Map // run id → runClocks
	// adopted are runs without an owner that a person's action here (an
	// answer, Resume) lets this process drive on a shared database.
	adopted sync.Map // run id → true
	// present are the installations known to have opened the shared
	// database (a row there is never taken back).
	present sync.Map // installation id → true
	// life ends when Close begins: work the controller starts on its own
	// (a cancel another process requested) stops with it.
	life    context.Context
	endLife context.CancelFunc
}

// runClocks are the clocks a run's events carry from its fork.
type runClocks struct{ parentTime, deliberationIndex int64 }

// clocksOf returns a run's fork clocks (zero for a root run).
func (c *Controller) clocksOf(ctx context.Context, runID string) (runClocks, error) {
	if v, ok := c.clocks.Load(runID); ok {
		return v.(runClocks), nil
	}
	run, err := c.d.Store.GetRun(ctx, runID)
	if err != nil {
		return runClocks{}, err
	}
	rc := runClocks{run.ParentTime, run.DeliberationIndex}
	c.clocks.Store(runID, rc)
	return rc, nil
}

// driver is the goroutine that moves one run forward.
type driver struct {
	cancel context.CancelFunc
	wake   chan struct{}
	done   chan struct{}
}

// New returns a controller.
func New(d Deps) *Controller {
	if d.Log == nil {
		d.Log = func(string, ...any) {}
	}
	if d.Sandboxed == nil {
		d.Sandboxed = func() bool { return false }
	}
	c := &Controller{d: d, now: time.Now, drivers: map[string]*driver{}, stalls: map[string]int{}, summaries: map[string]cachedSummary{},
		memos: map[string]*runMemo{}}
	c.life, c.endLife = context.WithCancel(context.Background())
	if o, ok := d.Events.(commitObserver); ok {
		o.OnCommit(c.committed)
	}
	return c
}

// Submit validates a task, records it as a new run of a new real-domain
// world, and starts driving it. It returns the run.
func (c *Controller) Submit(ctx context.Context, req TaskRequest) (backend.WorldRun, error) {
	req, err := c.check(req)
	if err != nil {
		return backend.WorldRun{}, err
	}
	req, err = c.normalise(req)
	if err != nil {
		return backend.WorldRun{}, err
	}
	if req.Workspace != "" {
		abs, exists, err := checkWorkspace(req.Workspace, c.dataDir())
		if err != nil {
			return backend.WorldRun{}, err
		}
		if !exists && !req.CreateWorkspace {
			return backend.WorldRun{}, backend.Wrap(ErrWorkspaceMissing, backend.EINVALID, "the workspace folder %s does not exist", abs)
		}
		req.Workspace = abs
	}
	req.WorkspaceID = nil // only the controller says which folder it is
	if c.d.Installation.ID != "" {
		owner := c.d.Installation
		req.Owner = &owner
	} else {
		req.Owner = nil // only the controller says who owns a run
	}
	runID := backend.NewID(backend.KindRun)
	if req.Workspace == "" {
		req.Workspace = filepath.Join(c.d.WorkRoot, runID)
	}
	if err := c.makeWorkspace(&req); err != nil {
		return backend.WorldRun{}, err
	}
	// The request is said once, in the run's first event, which is stored
	// with the spec and the run in one transaction: no run is ever without
	// it, and the spec names no program (runs recorded before this kept the
	// request in a program blob too; recordTask reads it).
	now := c.now().UTC()
	spec := backend.WorldSpec{
		ID: backend.NewID(backend.KindWorld), Name: taskName(req), Domain: backend.DomainReal, Backend: BackendTask,
		Params: json.RawMessage("{}"), CreatedAt: now,
	}
	run := backend.WorldRun{ID: runID, WorldID: spec.ID, Status: backend.RunPending, CreatedAt: now, UpdatedAt: now}
	if err := c.create(ctx, spec, run, event(EvTaskReceived, req, 0)); err != nil {
		return backend.WorldRun{}, err
	}
	c.Start(run.ID)
	return c.d.Store.GetRun(ctx, run.ID)
}

// create stores a new root run with its spec and its first events in one
// transaction, and keeps what it stored in the run's memo as appendAt does.
func (c *Controller) create(ctx context.Context, spec backend.WorldSpec, run backend.WorldRun, events ...backend.Event) error {
	m := c.memo(run.ID)
	m.mu.Lock()
	defer m.mu.Unlock()
	next := NewRunState(run.ID, spec.ID)
	for _, e := range events {
		next.Apply(e)
		if statusEvents[e.Type] {
			run.Status, run.Error = next.Status, next.Error
		}
	}
	run.WorldLocalTime = next.Ticks
	stored, err := c.d.Store.CreateSpecAndRunWith(ctx, spec, run, events)
	if err != nil {
		return err
	}
	c.clocks.Store(run.ID, runClocks{}) // a root run
	if len(stored) > 0 {
		next.Seq = stored[len(stored)-1].Seq
		m.head = next.light()
		m.remember(stored)
	}
	return nil
}

// recordTask records the first event of a run that has none: ducklm
// stopped inside Submit, between the run's row and its task.received, when
// they were two commits (runs created since are one commit with it). The
// spec of such a run holds the request as its program.
func (c *Controller) recordTask(ctx context.Context, st *RunState) error {
	spec, err := c.d.Store.GetSpec(ctx, st.WorldID)
	if err != nil {
		return err
	}
	if spec.Program.Digest == "" {
		return backend.Errorf(backend.ECORRUPT, "run %s has no task: neither its first event nor its world records one", st.RunID)
	}
	data, err := c.d.Blobs.Get(ctx, spec.Program)
	if err != nil {
		return err
	}
	var req TaskRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return backend.Errorf(backend.ECORRUPT, "the task of run %s is unreadable", st.RunID)
	}
	if req.Workspace == "" {
		req.Workspace = filepath.Join(c.d.WorkRoot, st.RunID)
		req.WorkspaceID = nil
	}
	if req.WorkspaceID == nil {
		if err := c.makeWorkspace(&req); err != nil {
			return err
		}
	}
	if err := c.appendAt(ctx, st, 0, nil, event(EvTaskReceived, req, 0)); err != nil && backend.ErrorCode(err) != backend.ECONFLICT {
		return err
	}
	return c.catchUp(ctx, st)
}

func taskName(req TaskRequest) string {
	name := strings.TrimSpace(req.Task)
	if name == "" && req.Plan != nil {
		name = "explicit plan"
	}
	if r := []rune(name); len(r) > 80 {
		name = string(r[:79]) + "…"
	}
	return name
}

// normalise fills defaults and refuses a request that cannot run.
func (c *Controller) normalise(req TaskRequest) (TaskRequest, error) {
	req.Task = strings.TrimSpace(req.Task)
	if req.Task == "" && req.Plan == nil {
		return req, backend.Errorf(backend.EINVALID, "a task needs text or an explicit plan")
	}
	switch req.ApprovalMode {
	case "":
		req.ApprovalMode = AskRisky
	case AskEvery, AskRisky, AutoSandboxed:
	default:
		return req, backend.Errorf(backend.EINVALID, "approval mode %q is not ask_every, ask_risky or auto_sandboxed", req.ApprovalMode)
	}
	def := backend.DefaultLimits()
	if req.Limits.Timeout <= 0 {
		req.Limits.Timeout = def.Timeout
	}
	if req.Limits.MemoryBytes <= 0 {
		req.Limits.MemoryBytes = def.MemoryBytes
	}
	if req.Limits.CPUSeconds <= 0 {
		req.Limits.CPUSeconds = def.CPUSeconds
	}
	if req.Limits.FileBytes <= 0 {
		req.Limits.FileBytes = def.FileBytes
	}
	if req.Limits.OutputBytes <= 0 {
		req.Limits.OutputBytes = def.OutputBytes
	}
	if req.Limits.Processes <= 0 {
		req.Limits.Processes = def.Processes
	}
	if req.MaxSteps <= 0 {
		req.MaxSteps = defaultMaxSteps
	}
	if req.MaxPlanSteps <= 0 {
		req.MaxPlanSteps = taskgraph.MaxNodes
	}
	if req.MaxReplans <= 0 {
		req.MaxReplans = 2
	}
	switch {
	case req.MaxStepReplans == 0:
		req.MaxStepReplans = 1
	case req.MaxStepReplans < 0:
		req.MaxStepReplans = -1 // none; kept apart from "unset"
	}
	if req.MaxRetries < 0 {
		req.MaxRetries = 0
	} else if req.MaxRetries == 0 {
		req.MaxRetries = 1
	}
	if req.Concurrency <= 0 {
		req.Concurrency = 2
	}
	switch {
	case req.MaxReviews == 0:
		req.MaxReviews = DefaultMaxReviews
	case req.MaxReviews < 0:
		req.MaxReviews = -1 // none; kept apart from "unset"
	}
	switch {
	case req.CriticThreshold == 0:
		req.CriticThreshold = DefaultCriticThreshold
	case req.CriticThreshold < 0:
		req.CriticThreshold = -1
	case req.CriticThreshold > 1:
		return req, backend.Errorf(backend.EINVALID, "the critic threshold is a score from 0 to 1, not %v", req.CriticThreshold)
	}
	if req.Workspace != "" {
		abs, err := filepath.Abs(req.Workspace)
		if err != nil {
			return req, backend.Errorf(backend.EINVALID, "workspace %q is not a usable path", req.Workspace)
		}
		req.Workspace = abs
	}
	return req, nil
}

// Load folds a run's events into its state: from its latest checkpoint when
// it has one, then the events after it.
func (c *Controller) Load(ctx context.Context, runID string) (*RunState, backend.WorldRun, error) {
	run, err := c.d.Store.GetRun(ctx, runID)
	if err != nil {
		return nil, run, err
	}
	spec, err := c.d.Store.GetSpec(ctx, run.WorldID)
	if err != nil {
		return nil, run, err
	}
	if spec.Backend != BackendTask {
		return nil, run, backend.Errorf(backend.EINVALID, "run %s is a simulated world run, not a task run", runID)
	}
	st, cp, baseSeq, err := c.newestReadable(ctx, run)
	if err != nil {
		return nil, run, err
	}
	if err := c.catchUp(ctx, st); err != nil {
		return nil, run, err
	}
	c.noteLoaded(st, cp, baseSeq)
	return st, run, nil
}

// catchUp folds the run's events after st.Seq.
func (c *Controller) catchUp(ctx context.Context, st *RunState) error {
	if c.shared() {
		// Other processes write the run too: the ledger, from st on, is
		// the only exact answer (one indexed read, which finds the head).
		events, err := c.d.Events.Query(ctx, backend.EventQuery{Stream: st.RunID, FromSeq: st.Seq + 1})
		if err != nil {
			return err
		}
		for _, e := range events {
			st.Apply(e)
		}
		return nil
	}
	// The run's memo knows its head when this process wrote it last (every
	// writer of a run in this process appends through it, and the data
	// directory has one writing process): nothing to read when st is there,
	// and no head lookup to bound the read otherwise.
	m := c.memo(st.RunID)
	if events, ok := m.tail.after(st.Seq); ok {
		for _, e := range events {
			st.Apply(e)
		}
		return nil
	}
	q := backend.EventQuery{Stream: st.RunID, FromSeq: st.Seq + 1}
	m.mu.Lock()
	if m.head != nil && m.head.Seq >= st.Seq {
		q.ToSeq = m.head.Seq
	}
	// The events this process appended last are the ledger's own (seqs,
	// positions, compacted payloads, times): when they reach back to st,
	// they are the read.
	var events []backend.Event
	if n := len(m.recent); q.ToSeq > st.Seq && n > 0 && m.recent[0].Seq <= st.Seq+1 && m.recent[n-1].Seq == q.ToSeq {
		events = m.recent[st.Seq+1-m.recent[0].Seq:]
	}
	m.mu.Unlock()
	if q.ToSeq == st.Seq && q.ToSeq != 0 {
		return nil
	}
	if events == nil {
		var err error
		if events, err = c.d.Events.Query(ctx, q); err != nil {
			return err
		}
	}
	for _, e := range events {
		st.Apply(e)
	}
	return nil
}

// append records one event on the run. Every append also writes the run's
// registry row (status, clock, error) in the same transaction, so the row
// never disagrees with the ledger. It does not fold: the driver folds the
// ledger in seq order (catchUp), because step workers append concurrently.
func (c *Controller) append(ctx context.Context, st *RunState, typ string, payload any) error {
	return c.appendWith(ctx, st, nil, event(typ, payload, st.Ticks))
}

func event(typ string, payload any, tick int64) backend.Event {
	data, err := json.Marshal(payload)
	if err != nil {
		data = []byte("{}")
	}
	return backend.Event{Type: typ, Payload: data, Reality: backend.ExternalReal, WorldLocalTime: tick}
}

// statusEvents change a run's status; only they write it to the run's row.
var statusEvents = map[string]bool{EvTaskReceived: true, EvStatus: true, EvCompleted: true, EvFailed: true, EvCancelled: true}

// appendWith appends events (with an optional checkpoint record).
func (c *Controller) appendWith(ctx context.Context, st *RunState, cp *backend.Checkpoint, events ...backend.Event) error {
	return c.appendAt(ctx, st, backend.ExpectAny, cp, events...)
}

// appendAt is appendWith expecting the run's stream at seq expect
// (backend.ExpectAny: wherever it is); a mismatch is an ECONFLICT error and
// writes nothing.
func (c *Controller) appendAt(ctx context.Context, st *RunState, expect int64, cp *backend.Checkpoint, events ...backend.Event) error {
	return c.appendAlso(ctx, st, expect, cp, nil, events...)
}

// appendAlso is appendAt with a write another component prepared for the
// same transaction (a memory decision's rows; nil: none).
func (c *Controller) appendAlso(ctx context.Context, st *RunState, expect int64, cp *backend.Checkpoint, also backend.Prepared, events ...backend.Event) error {
	// The row needs the status, error and clock the events lead to, which
	// depend on nothing else in the state: a fold of a light copy gives them
	// without copying every step. The run's memo holds that light fold at
	// the run's head when this process wrote or read it last, which st (a
	// worker's view) may trail; appends of a run take turns on its memo.
	m := c.memo(st.RunID)
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := st.light()
	if m.head != nil && m.head.Seq >= prev.Seq {
		prev = m.head.light()
	}
	// Another writer's events since (a memory decision) are in the tail;
	// on a shared database, other processes' are in the ledger only.
	if c.shared() {
		later, err := c.d.Events.Query(context.WithoutCancel(ctx), backend.EventQuery{Stream: st.RunID, FromSeq: prev.Seq + 1})
		if err != nil {
			return err
		}
		for _, e := range later {
			prev.Apply(e)
		}
	} else if later, ok := m.tail.after(prev.Seq); ok {
		for _, e := range later {
			prev.Apply(e)
		}
	}
	next := prev.light()
	run := backend.WorldRun{ID: st.RunID, UpdatedAt: c.now().UTC()}
	for _, e := range events {
		next.Apply(e)
		if statusEvents[e.Type] {
			run.Status, run.Error = next.Status, next.Error
		}
	}
	if next.Ticks > prev.Ticks {
		run.WorldLocalTime = next.Ticks
	}
	if cp != nil {
		run.LatestCheckpointID = cp.ID
		cp.WorldLocalTime = next.Ticks
	}
	// A cancelled caller still records what happened (a step that ran, a
	// cancellation): losing the fact would be worse than finishing the write.
	ctx = context.WithoutCancel(ctx)
	clocks, err := c.clocksOf(ctx, st.RunID)
	if err != nil {
		return err
	}
	for i := range events {
		events[i].ParentTime, events[i].DeliberationIndex = clocks.parentTime, clocks.deliberationIndex
	}
	stored, err := c.d.Store.SaveRun(ctx, run, expect, events, cp, also)
	if err != nil && backend.ErrorCode(err) != backend.ECONFLICT {
		types := make([]string, len(events))
		for i, e := range events {
			types[i] = e.Type
		}
		c.d.Log("append", "run", st.RunID, "events", types, "err", err)
	}
	if err == nil && len(stored) > 0 {
		if stored[0].Seq == prev.Seq+1 {
			next.Seq = stored[len(stored)-1].Seq
			m.head = next
			m.remember(stored)
			if next.Status.Terminal() {
				m.recent = nil // no driver folds an ended run's events any more
			}
		} else {
			m.head, m.recent = nil, nil // another writer moved the run: the next load knows
		}
	}
	return err
}
