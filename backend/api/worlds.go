package api

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"ducklm/backend"
	"ducklm/backend/runtime"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// Lineage returns the fork DAG of every world and run.
func (a *API) Lineage() (world.Lineage, error) {
	if err := a.ready(); err != nil {
		return world.Lineage{}, err
	}
	l, err := a.svc.Worlds.Lineage(a.ctx())
	return l, a.fail("lineage", err)
}

// Example is a world program shipped with ducklm.
type Example struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// WorldExamples lists the shipped world programs.
func (a *API) WorldExamples() []Example {
	out := []Example{}
	for _, name := range slices.Sorted(maps.Keys(starlark.Examples())) {
		out = append(out, Example{Name: name, Source: string(starlark.Examples()[name])})
	}
	return out
}

// WorldInput creates a simulated world.
type WorldInput struct {
	Name    string `json:"name"`
	Program string `json:"program"` // Starlark source; "" with Example set uses the example
	Example string `json:"example"`
	Seed    int64  `json:"seed"`
}

// Created is a new world with its first run.
type Created struct {
	World backend.WorldSpec `json:"world"`
	Run   backend.WorldRun  `json:"run"`
}

// CreateWorld stores a new simulated world and starts its first run.
func (a *API) CreateWorld(in WorldInput) (Created, error) {
	if err := a.ready(); err != nil {
		return Created{}, err
	}
	source := []byte(in.Program)
	if strings.TrimSpace(in.Program) == "" && in.Example != "" {
		ex, ok := starlark.Examples()[in.Example]
		if !ok {
			return Created{}, a.fail("create world", backend.Errorf(backend.EINVALID, "there is no example world %q", in.Example))
		}
		source = ex
		if in.Name == "" {
			in.Name = in.Example
		}
	}
	spec, run, err := a.svc.Worlds.Create(a.ctx(), world.NewWorld{Name: in.Name, Program: source, Seed: in.Seed})
	return Created{World: spec, Run: run}, a.fail("create world", err)
}

// StepInput drives a world run.
type StepInput struct {
	RunID           string `json:"runId"`
	Action          string `json:"action"` // JSON text; "" or "null" lets the program choose
	Steps           int    `json:"steps"`
	CheckpointEvery int    `json:"checkpointEvery"`
	// OnWorkers queues the steps as one job for the team's `ducklm worker`
	// processes and waits for it; it needs the team's PostgreSQL and a
	// worker alive. Op, when set, is the id the job's progress is reported
	// under (service.Progress: done and total count steps).
	OnWorkers bool   `json:"onWorkers,omitempty"`
	Op        string `json:"op,omitempty"`
}

// RunWorld applies up to Steps steps (1 when unset), here or, with
// OnWorkers, on the team's workers.
func (a *API) RunWorld(in StepInput) (world.StepOutcome, error) {
	if err := a.ready(); err != nil {
		return world.StepOutcome{}, err
	}
	var action json.RawMessage
	if s := strings.TrimSpace(in.Action); s != "" {
		if !json.Valid([]byte(s)) {
			return world.StepOutcome{}, a.fail("run world", backend.Errorf(backend.EINVALID, "the action is not valid JSON"))
		}
		action = json.RawMessage(s)
	}
	if in.Steps <= 0 {
		in.Steps = 1
	}
	if in.OnWorkers {
		out, err := a.runWorldOnWorkers(in, action)
		return out, a.fail("run world on workers", err)
	}
	out, err := a.svc.Worlds.RunSteps(a.ctx(), in.RunID, world.RunOptions{Steps: in.Steps, Action: action, CheckpointEvery: in.CheckpointEvery})
	return out, a.fail("run world", err)
}

// WorldDetail is what the worlds screen shows of one run.
type WorldDetail struct {
	World       backend.WorldSpec    `json:"world"`
	Run         backend.WorldRun     `json:"run"`
	Runs        []backend.WorldRun   `json:"runs"`
	Fork        *backend.Fork        `json:"fork,omitempty"`
	Checkpoints []backend.Checkpoint `json:"checkpoints"`
	State       json.RawMessage      `json:"state,omitempty"`
	Program     string               `json:"program,omitempty"`
	// Limits are what every call of a simulated world's program runs under
	// (its memory limit is the setting worldMemoryMiB).
	Limits *starlark.Limits `json:"limits,omitempty"`
	// Stepping is set while a batch of steps is being computed for the
	// run: a running simulated run without it is idle, waiting for its
	// next action.
	Stepping bool `json:"stepping,omitempty"`
}

// WorldDetail returns a run of a world with its spec, checkpoints, fork
// provenance and (for simulated worlds) current state and program.
func (a *API) WorldDetail(runID string) (WorldDetail, error) {
	if err := a.ready(); err != nil {
		return WorldDetail{}, err
	}
	ctx := a.ctx()
	var d WorldDetail
	var err error
	if d.Run, err = a.svc.Worlds.Run(ctx, runID); err != nil {
		return d, a.fail("world detail", err)
	}
	if d.World, err = a.svc.Worlds.Spec(ctx, d.Run.WorldID); err != nil {
		return d, a.fail("world detail", err)
	}
	if d.Runs, err = a.svc.Worlds.Runs(ctx, d.World.ID); err != nil {
		return d, a.fail("world detail", err)
	}
	if d.Checkpoints, err = a.svc.Worlds.Checkpoints(ctx, runID); err != nil {
		return d, a.fail("world detail", err)
	}
	if f, err := a.svc.Worlds.ForkOf(ctx, d.World.ID); err == nil {
		d.Fork = &f
	}
	if d.World.Domain == backend.DomainSimulated {
		d.Stepping = d.Run.Status == backend.RunRunning && a.svc.Worlds.Stepping(runID)
		if d.State, err = a.svc.Worlds.State(ctx, runID); err != nil {
			return d, a.fail("world detail", err)
		}
		if src, err := a.svc.Blobs.Get(ctx, d.World.Program); err == nil {
			d.Program = string(src)
		}
		l := a.svc.Worlds.Limits()
		d.Limits = &l
	}
	return d, nil
}

// CheckpointWorld takes an exact checkpoint of a simulated world run.
func (a *API) CheckpointWorld(runID string) (backend.Checkpoint, error) {
	if err := a.ready(); err != nil {
		return backend.Checkpoint{}, err
	}
	cp, err := a.svc.Worlds.Checkpoint(a.ctx(), runID)
	return cp, a.fail("checkpoint", err)
}

// ForkInput is the delta editor's form.
type ForkInput struct {
	CheckpointID      string `json:"checkpointId"`
	ParentRunID       string `json:"parentRunId"`
	Divergence        string `json:"divergence"`
	Delta             string `json:"delta"` // JSON text
	SeedPolicy        string `json:"seedPolicy"`
	Name              string `json:"name"`
	DeliberationIndex int64  `json:"deliberationIndex"`
}

// Forked is a new child world.
type Forked struct {
	Fork  backend.Fork      `json:"fork"`
	World backend.WorldSpec `json:"world"`
	Run   backend.WorldRun  `json:"run"`
}

// Fork creates a child world from a checkpoint.
func (a *API) Fork(in ForkInput) (Forked, error) {
	if err := a.ready(); err != nil {
		return Forked{}, err
	}
	delta := json.RawMessage(strings.TrimSpace(in.Delta))
	if len(delta) == 0 {
		delta = json.RawMessage("{}")
	}
	if !json.Valid(delta) {
		return Forked{}, a.fail("fork", backend.Errorf(backend.EINVALID, "the delta is not valid JSON"))
	}
	if a.isTaskCheckpoint(in.CheckpointID) {
		f, spec, run, err := a.svc.Runtime.Fork(a.ctx(), runtime.ForkRequest{CheckpointID: in.CheckpointID,
			Divergence: backend.DivergenceType(in.Divergence), Delta: delta, Name: in.Name, DeliberationIndex: in.DeliberationIndex})
		return Forked{Fork: f, World: spec, Run: run}, a.fail("fork", err)
	}
	f, spec, run, err := a.svc.Worlds.Fork(a.ctx(), world.ForkRequest{CheckpointID: in.CheckpointID, ParentRunID: in.ParentRunID,
		Divergence: backend.DivergenceType(in.Divergence), Delta: delta, SeedPolicy: backend.SeedPolicy(in.SeedPolicy),
		Name: in.Name, DeliberationIndex: in.DeliberationIndex})
	return Forked{Fork: f, World: spec, Run: run}, a.fail("fork", err)
}

// isTaskCheckpoint reports whether a checkpoint was taken of a task run.
func (a *API) isTaskCheckpoint(id string) bool {
	cp, err := a.svc.Worlds.GetCheckpoint(a.ctx(), id)
	if err != nil {
		return false
	}
	run, err := a.svc.Worlds.Run(a.ctx(), cp.RunID)
	if err != nil {
		return false
	}
	spec, err := a.svc.Worlds.Spec(a.ctx(), run.WorldID)
	return err == nil && spec.Backend == runtime.BackendTask
}

// History returns a page of a run's full history (inherited prefix first).
func (a *API) History(runID string, offset int64, limit int) (world.HistoryPage, error) {
	if err := a.ready(); err != nil {
		return world.HistoryPage{}, err
	}
	p, err := a.svc.Worlds.HistoryPage(a.ctx(), runID, offset, limit)
	return p, a.fail("history", err)
}

// LineageOutline returns every world and fork with only what a drawing of
// the lineage needs.
func (a *API) LineageOutline() (world.Outline, error) {
	if err := a.ready(); err != nil {
		return world.Outline{}, err
	}
	o, err := a.svc.Worlds.LineageOutline(a.ctx())
	return o, a.fail("lineage", err)
}

// ListWorlds returns a page of worlds, newest first, each with its latest
// run and how it was forked: the Worlds list and a world's forks, without
// reading the whole lineage.
func (a *API) ListWorlds(q backend.WorldQuery) (backend.WorldPage, error) {
	if err := a.ready(); err != nil {
		return backend.WorldPage{}, err
	}
	p, err := a.svc.Worlds.ListWorlds(a.ctx(), q)
	return p, a.fail("list worlds", err)
}

// SearchHistory finds events of a run's full history that pass a filter,
// from a position on; the caller goes on from the answer's Next.
func (a *API) SearchHistory(runID string, filter world.HistoryFilter, from int64, limit int) (world.HistoryMatches, error) {
	if err := a.ready(); err != nil {
		return world.HistoryMatches{}, err
	}
	m, err := a.svc.Worlds.SearchHistory(a.ctx(), runID, filter, from, limit)
	return m, a.fail("search the history", err)
}

// HistoryTypes counts a run's full history by event type.
func (a *API) HistoryTypes(runID string) ([]world.TypeCount, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	t, err := a.svc.Worlds.HistoryTypes(a.ctx(), runID)
	return t, a.fail("count the history", err)
}

// Diff compares two runs after their shared history.
func (a *API) Diff(runA, runB string) (world.BranchDiff, error) {
	if err := a.ready(); err != nil {
		return world.BranchDiff{}, err
	}
	d, err := a.svc.Worlds.Diff(a.ctx(), runA, runB)
	return d, a.fail("diff", err)
}

// StatesAt returns two simulated runs' states at one world-local time, so
// Compare can set two branches side by side at a common moment.
func (a *API) StatesAt(runA, runB string, at int64) (world.StatesAt, error) {
	if err := a.ready(); err != nil {
		return world.StatesAt{}, err
	}
	s, err := a.svc.Worlds.StatesAt(a.ctx(), runA, runB, at)
	if s.Changes == nil {
		s.Changes = []world.Change{}
	}
	return s, a.fail("states at a time", err)
}

// Verify re-executes a simulated run and compares it with its record.
func (a *API) Verify(runID string) (world.VerifyReport, error) {
	if err := a.ready(); err != nil {
		return world.VerifyReport{}, err
	}
	r, err := a.svc.Worlds.Verify(a.ctx(), runID)
	return r, a.fail("verify", err)
}
