package runtime

import (
	"context"
	"encoding/json"
	"path/filepath"

	"ducklm/backend"
	"ducklm/backend/taskgraph"
)

// ForkRequest asks for a child of a task run's checkpoint.
type ForkRequest struct {
	CheckpointID string
	// Divergence must be plan_edit: a task run diverges by its plan.
	Divergence backend.DivergenceType
	// Delta is the edited plan ({"nodes": [...]}); {} keeps the plan.
	Delta             json.RawMessage
	Name              string
	DeliberationIndex int64
}

// Fork creates a new task world from a checkpoint of a task run and drives
// its run. The child starts from the checkpoint's exact state: the steps
// done there stay done (their effects happened and are not repeated); the
// plan is the edited one, where a step whose definition changed, and every
// step not done, runs again under the run's approval mode. The child shares
// the parent's workspace, because that is where the done steps' effects
// are, and so its owner — but for a run whose owner never opened this
// shared database (takeOver); its history shares the parent's events up to
// the checkpoint by reference.
func (c *Controller) Fork(ctx context.Context, req ForkRequest) (backend.Fork, backend.WorldSpec, backend.WorldRun, error) {
	var zf backend.Fork
	var zs backend.WorldSpec
	var zr backend.WorldRun
	if req.Divergence == "" {
		req.Divergence = backend.DivergePlanEdit
	}
	if req.Divergence != backend.DivergePlanEdit {
		return zf, zs, zr, backend.Errorf(backend.EINVALID, "a task run forks with plan_edit (an edited plan), not %s", req.Divergence)
	}
	at, err := c.taskCheckpoint(ctx, req.CheckpointID)
	if err != nil {
		return zf, zs, zr, err
	}
	cp, parentRun, parent, base := at.cp, at.run, at.world, at.state
	delta := req.Delta
	if len(delta) == 0 {
		delta = json.RawMessage("{}")
	}
	graph := base.Graph
	var edited struct {
		Nodes []backend.TaskNode `json:"nodes"`
	}
	if err := json.Unmarshal(delta, &edited); err != nil {
		return zf, zs, zr, backend.Errorf(backend.EINVALID, `a plan_edit delta is {} or an edited plan {"nodes": [...]}`)
	}
	if len(edited.Nodes) > 0 {
		g, err := taskgraph.ValidateMax(backend.TaskGraph{Nodes: edited.Nodes}, c.catalogForValidation(), base.Request.MaxPlanSteps)
		if err != nil {
			return zf, zs, zr, err
		}
		tg := g.TaskGraph()
		graph = &tg
	}

	now := c.now().UTC()
	f := backend.Fork{ID: backend.NewID(backend.KindFork), ParentWorldID: parent.ID, ParentRunID: parentRun.ID,
		CheckpointID: cp.ID, Divergence: req.Divergence, Delta: compact(delta), SeedPolicy: backend.SeedInherit, CreatedAt: now}
	child := backend.WorldSpec{ID: backend.NewID(backend.KindWorld), Name: req.Name, Domain: parent.Domain, Backend: BackendTask,
		Program: parent.Program, Params: parent.Params, ParentWorldID: parent.ID, ForkID: f.ID, CreatedAt: now}
	if child.Name == "" {
		child.Name = parent.Name + " / fork"
	}
	f.ChildWorldID = child.ID
	run := backend.WorldRun{ID: backend.NewID(backend.KindRun), WorldID: child.ID, Status: backend.RunRunning,
		WorldLocalTime: cp.WorldLocalTime, ParentTime: cp.WorldLocalTime, DeliberationIndex: req.DeliberationIndex,
		BaseRunID: parentRun.ID, BaseSeq: cp.LedgerSeq, CreatedAt: now, UpdatedAt: now}

	st := forkState(base, graph, run.ID, child.ID)
	st.Seq = 1 // the snapshot covers the child's first event, run.forked
	taken, err := c.takeOver(ctx, st)
	if err != nil {
		return zf, zs, zr, err
	}
	snap, _ := json.Marshal(st)
	ref, err := c.d.Blobs.Put(ctx, snap, "application/json")
	if err != nil {
		return zf, zs, zr, err
	}
	forked := map[string]any{"forkId": f.ID, "parentWorldId": parent.ID, "parentRunId": parentRun.ID,
		"checkpointId": cp.ID, "divergence": f.Divergence, "delta": f.Delta}
	if taken != nil {
		// Who would have driven it, and where this one's steps run.
		forked["ownerTakenFrom"], forked["workspace"] = taken, st.Request.Workspace
	}
	start := backend.Checkpoint{ID: backend.NewID(backend.KindCheckpoint), WorldID: child.ID, RunID: run.ID,
		WorldLocalTime: st.Ticks, Blob: ref, CreatedAt: now}
	run.LatestCheckpointID = start.ID
	events := []backend.Event{
		event(EvForked, forked, st.Ticks),
		event(EvCheckpoint, map[string]any{"checkpointId": start.ID, "digest": ref.Digest, "size": ref.Size, "seq": 1}, st.Ticks),
	}
	for i := range events {
		events[i].ParentTime = cp.WorldLocalTime
		events[i].DeliberationIndex = req.DeliberationIndex
	}
	if _, err := c.d.Store.CreateFork(ctx, f, child, run, events, &start); err != nil {
		return zf, zs, zr, err
	}
	c.clocks.Store(run.ID, runClocks{run.ParentTime, run.DeliberationIndex})
	c.Start(run.ID)
	return f, child, run, nil
}

// forkState is the child's starting state: the checkpoint's, with the new
// plan, done steps kept where their definition is unchanged, and nothing
// pending approval or running (a new run asks again), nor a cancel another
// process asked of the parent.
func forkState(base *RunState, graph *backend.TaskGraph, runID, worldID string) *RunState {
	st := base.Clone()
	st.RunID, st.WorldID = runID, worldID
	st.Status, st.StatusReason, st.Error, st.Response, st.NeedsModel = backend.RunRunning, "", "", "", false
	st.InvalidPlan = ""
	st.CancelRequested = "" // the parent's request, not the fork's
	// The parent's answer is the parent's, and an open review round read
	// the parent's plan: the fork reviews its own results when its steps
	// are done.
	st.Answer, st.Review = nil, nil
	st.Graph = graph
	st.Steps = map[string]*StepRecord{}
	if graph == nil {
		return st
	}
	for _, n := range graph.Nodes {
		rec := &StepRecord{Node: n, State: StepPending}
		if old, ok := base.Steps[n.ID]; ok && old.State == StepDone && sameNode(old.Node, n) {
			kept := *old
			rec = &kept
		}
		st.Steps[n.ID] = rec
	}
	return st
}

func sameNode(a, b backend.TaskNode) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// takeOver makes the fork whose state is st this installation's when the
// parent's owner never opened this shared database (the parent came in a
// bundle made on a machine not on it): that owner would never drive it, so
// the installation that forks it does, in a new, empty workspace of its own
// (the parent's folder is on the other machine; the done steps stay done,
// their effects are there). It returns the owner it took the fork from
// (nil: the fork keeps its parent's owner).
func (c *Controller) takeOver(ctx context.Context, st *RunState) (*Installation, error) {
	o := st.Request.Owner
	if !c.shared() || c.d.Installation.ID == "" || o == nil || o.ID == c.d.Installation.ID {
		return nil, nil
	}
	on, err := c.onDatabase(ctx, o.ID)
	if err != nil || on {
		return nil, err
	}
	from, me := *o, c.d.Installation
	st.Request.Owner = &me
	st.Request.Workspace = filepath.Join(c.d.WorkRoot, st.RunID)
	if err := c.makeWorkspace(&st.Request); err != nil {
		return nil, err
	}
	return &from, nil
}
