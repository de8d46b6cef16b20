package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/service"
)

// CreateWorldInput is create_world's arguments.
type CreateWorldInput struct {
	Name    string `json:"name,omitempty" jsonschema:"the world's name"`
	Program string `json:"program,omitempty" jsonschema:"the world's Starlark program (init, step, and for deliberation actions and score)"`
	Example string `json:"example,omitempty" jsonschema:"a shipped example world to use instead of a program"`
	Seed    int64  `json:"seed,omitempty" jsonschema:"the world's random seed"`
}

// WorldRef is a world and one of its runs.
type WorldRef struct {
	WorldID string `json:"worldId"`
	RunID   string `json:"runId"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	// Time is the run's world-local time (steps applied).
	Time int64 `json:"time"`
}

func (s *Server) createWorld(_ context.Context, _ *sdk.CallToolRequest, in CreateWorldInput) (*sdk.CallToolResult, WorldRef, error) {
	c, err := s.api.CreateWorld(api.WorldInput{Name: in.Name, Program: in.Program, Example: in.Example, Seed: in.Seed})
	if err != nil {
		return nil, WorldRef{}, err
	}
	return nil, WorldRef{WorldID: c.World.ID, RunID: c.Run.ID, Name: c.World.Name, Status: string(c.Run.Status), Time: c.Run.WorldLocalTime}, nil
}

// RunWorldInput is run_world's arguments.
type RunWorldInput struct {
	RunID           string `json:"runId" jsonschema:"the simulated world's run (run_…)"`
	Steps           int    `json:"steps,omitempty" jsonschema:"how many steps to apply (default 1); the run stops early when the world is done"`
	Action          any    `json:"action,omitempty" jsonschema:"the action to apply at each step (any JSON); leave it out to let the program choose"`
	CheckpointEvery int    `json:"checkpointEvery,omitempty" jsonschema:"take a checkpoint every N steps (0: the default)"`
}

// Stepped is run_world's answer.
type Stepped struct {
	RunID   string `json:"runId"`
	WorldID string `json:"worldId"`
	Status  string `json:"status"`
	Time    int64  `json:"time"`
	Done    bool   `json:"done"`
	State   any    `json:"state" jsonschema:"the world's state after the steps"`
	Emitted []any  `json:"emitted" jsonschema:"what the program emitted during the steps"`
	// CheckpointID is the run's latest checkpoint, where a fork may start.
	CheckpointID string `json:"checkpointId,omitempty"`
}

// maxStepsPerCall bounds one run_world call: the call cannot be cancelled
// halfway, so a long run is many calls.
const maxStepsPerCall = 10_000

func (s *Server) runWorld(_ context.Context, _ *sdk.CallToolRequest, in RunWorldInput) (*sdk.CallToolResult, Stepped, error) {
	if in.Steps > maxStepsPerCall {
		return nil, Stepped{}, backend.Errorf(backend.EINVALID, "one call applies at most %d steps, not %d; call again to go on", maxStepsPerCall, in.Steps)
	}
	action := ""
	if in.Action != nil {
		b, err := json.Marshal(in.Action)
		if err != nil {
			return nil, Stepped{}, backend.Errorf(backend.EINVALID, "the action is not JSON")
		}
		action = string(b)
	}
	out, err := s.api.RunWorld(api.StepInput{RunID: in.RunID, Action: action, Steps: in.Steps, CheckpointEvery: in.CheckpointEvery})
	if err != nil {
		return nil, Stepped{}, err
	}
	st := Stepped{RunID: out.Run.ID, WorldID: out.Run.WorldID, Status: string(out.Run.Status), Time: out.Run.WorldLocalTime,
		Done: out.Done, State: jsonValue(out.State), Emitted: []any{}, CheckpointID: out.Run.LatestCheckpointID}
	for _, e := range out.Emitted {
		st.Emitted = append(st.Emitted, jsonValue(e))
	}
	return nil, st, nil
}

// ForkInput is fork_world's arguments.
type ForkInput struct {
	RunID        string `json:"runId,omitempty" jsonschema:"the run to fork from its current state (a checkpoint is taken); or give checkpointId"`
	CheckpointID string `json:"checkpointId,omitempty" jsonschema:"the checkpoint to fork from (ckp_…)"`
	Divergence   string `json:"divergence" jsonschema:"how the child differs: state_patch, action_override, seed_change, program_change or parameter_change"`
	Delta        any    `json:"delta,omitempty" jsonschema:"the divergence's content, e.g. a JSON merge patch of the state for state_patch"`
	SeedPolicy   string `json:"seedPolicy,omitempty" jsonschema:"inherit, derive or fresh"`
	Name         string `json:"name,omitempty" jsonschema:"the child world's name"`
}

// Forked is fork_world's answer.
type Forked struct {
	ForkID       string `json:"forkId"`
	CheckpointID string `json:"checkpointId"`
	ParentRunID  string `json:"parentRunId"`
	WorldID      string `json:"worldId"`
	RunID        string `json:"runId"`
	Name         string `json:"name"`
}

func (s *Server) forkWorld(_ context.Context, _ *sdk.CallToolRequest, in ForkInput) (*sdk.CallToolResult, Forked, error) {
	if in.CheckpointID == "" {
		if in.RunID == "" {
			return nil, Forked{}, backend.Errorf(backend.EINVALID, "name the run to fork (runId) or a checkpoint of it (checkpointId)")
		}
		cp, err := s.api.CheckpointWorld(in.RunID)
		if err != nil {
			return nil, Forked{}, err
		}
		in.CheckpointID = cp.ID
	}
	delta := ""
	if in.Delta != nil {
		b, err := json.Marshal(in.Delta)
		if err != nil {
			return nil, Forked{}, backend.Errorf(backend.EINVALID, "the delta is not JSON")
		}
		delta = string(b)
	}
	f, err := s.api.Fork(api.ForkInput{CheckpointID: in.CheckpointID, ParentRunID: in.RunID, Divergence: in.Divergence,
		Delta: delta, SeedPolicy: in.SeedPolicy, Name: in.Name})
	if err != nil {
		return nil, Forked{}, err
	}
	return nil, Forked{ForkID: f.Fork.ID, CheckpointID: in.CheckpointID, ParentRunID: f.Fork.ParentRunID, WorldID: f.World.ID, RunID: f.Run.ID, Name: f.World.Name}, nil
}

// DiffInput names two runs.
type DiffInput struct {
	RunA string `json:"runA" jsonschema:"a run (run_…)"`
	RunB string `json:"runB" jsonschema:"another run, often a fork of the first's world"`
}

// Diff is diff_runs' answer.
type Diff struct {
	RunA string `json:"runA"`
	RunB string `json:"runB"`
	// Diff is the comparison as the window's Compare reads it: the shared
	// events, the states and how they differ, the events after the fork.
	Diff any `json:"diff" jsonschema:"the comparison: sharedEvents, forkPoint, stateA, stateB, stateChanges, eventsA, eventsB"`
}

func (s *Server) diffRuns(_ context.Context, _ *sdk.CallToolRequest, in DiffInput) (*sdk.CallToolResult, Diff, error) {
	d, err := s.api.Diff(in.RunA, in.RunB)
	if err != nil {
		return nil, Diff{}, err
	}
	return nil, Diff{RunA: in.RunA, RunB: in.RunB, Diff: asValue(d)}, nil
}

// WorldInput names a world or one of its runs.
type WorldInput struct {
	ID string `json:"id" jsonschema:"a world (wld_…) or one of its runs (run_…)"`
}

// WorldDetail is world_detail's answer.
type WorldDetail struct {
	WorldID string `json:"worldId"`
	RunID   string `json:"runId"`
	// Detail is what the window's world view shows: the world's spec and
	// runs, the run's checkpoints, state and program, its fork provenance.
	Detail any `json:"detail" jsonschema:"the world view: world, run, runs, fork, checkpoints, state, program, limits"`
}

func (s *Server) worldDetail(_ context.Context, _ *sdk.CallToolRequest, in WorldInput) (*sdk.CallToolResult, WorldDetail, error) {
	d, err := s.detail(in.ID)
	if err != nil {
		return nil, WorldDetail{}, err
	}
	return nil, WorldDetail{WorldID: d.World.ID, RunID: d.Run.ID, Detail: asValue(d)}, nil
}

// detail is the world view of a run, or of a world's latest run.
func (s *Server) detail(id string) (api.WorldDetail, error) {
	kind, err := backend.KindOf(id)
	if err != nil {
		return api.WorldDetail{}, err
	}
	switch kind {
	case backend.KindRun:
		return s.api.WorldDetail(id)
	case backend.KindWorld:
		page, err := s.api.ListWorlds(backend.WorldQuery{Text: id, Limit: 1})
		if err != nil {
			return api.WorldDetail{}, err
		}
		if len(page.Worlds) == 0 || page.Worlds[0].ID != id {
			return api.WorldDetail{}, backend.Errorf(backend.ENOTFOUND, "there is no world %s", id)
		}
		if page.Worlds[0].LatestRun == nil {
			return api.WorldDetail{}, backend.Errorf(backend.ENOTFOUND, "world %s has no run", id)
		}
		return s.api.WorldDetail(page.Worlds[0].LatestRun.ID)
	}
	return api.WorldDetail{}, backend.Errorf(backend.EINVALID, "%s is a %s id; give a world (wld_…) or a run (run_…)", id, kind)
}

// ListWorldsInput bounds list_worlds.
type ListWorldsInput struct {
	Text  string `json:"text,omitempty" jsonschema:"keep worlds whose name contains this, or whose id starts with it"`
	Limit int    `json:"limit,omitempty" jsonschema:"the most worlds to return (default 50)"`
}

// WorldList is list_worlds' answer.
type WorldList struct {
	Worlds []WorldRef `json:"worlds"`
	Total  int        `json:"total"`
}

func (s *Server) listWorlds(_ context.Context, _ *sdk.CallToolRequest, in ListWorldsInput) (*sdk.CallToolResult, WorldList, error) {
	if in.Limit <= 0 {
		in.Limit = 50
	}
	page, err := s.api.ListWorlds(backend.WorldQuery{Domain: backend.DomainSimulated, Text: in.Text, WithoutBranches: true, Limit: min(in.Limit, 500)})
	if err != nil {
		return nil, WorldList{}, err
	}
	out := WorldList{Worlds: []WorldRef{}, Total: page.Total}
	for _, w := range page.Worlds {
		ref := WorldRef{WorldID: w.ID, Name: w.Name}
		if w.LatestRun != nil {
			ref.RunID, ref.Status, ref.Time = w.LatestRun.ID, string(w.LatestRun.Status), w.LatestRun.WorldLocalTime
		}
		out.Worlds = append(out.Worlds, ref)
	}
	return nil, out, nil
}

// DeliberateInput is deliberate's arguments.
type DeliberateInput struct {
	RunID        string `json:"runId" jsonschema:"the simulated world's run to deliberate for (run_…)"`
	CheckpointID string `json:"checkpointId,omitempty" jsonschema:"where the first round starts (default: the run's current state)"`
	Strategy     string `json:"strategy,omitempty" jsonschema:"beam (default) or mcts"`
	Width        int    `json:"width,omitempty" jsonschema:"beam width"`
	Depth        int    `json:"depth,omitempty" jsonschema:"how many steps ahead each branch looks"`
	Budget       int    `json:"budget,omitempty" jsonschema:"the most branches a round runs"`
	Seeds        int    `json:"seeds,omitempty" jsonschema:"random seeds each candidate is tried under"`
	Rounds       int    `json:"rounds,omitempty" jsonschema:"rounds to deliberate (default 1); each applies its choice before the next"`
	UntilDone    bool   `json:"untilDone,omitempty" jsonschema:"deliberate round after round until the world is done"`
	Apply        bool   `json:"apply,omitempty" jsonschema:"apply the best action to the run"`
	TimeLimitMs  int64  `json:"timeLimitMs,omitempty" jsonschema:"a round's time limit in milliseconds"`
}

// Deliberated is deliberate's answer.
type Deliberated struct {
	RunID string `json:"runId"`
	// Chosen are the rounds' chosen actions, in order.
	Chosen []any `json:"chosen" jsonschema:"each round's chosen action"`
	Done   bool  `json:"done"`
	// Cancelled says the client cancelled and what was kept.
	Cancelled string `json:"cancelled,omitempty"`
	// Result is the whole result: every round's candidates, scores and
	// branches, the run and its state.
	Result any `json:"result" jsonschema:"the rounds (candidates, scores, branches), the run, done and its state"`
}

// deliberations numbers the ops deliberations run under.
var deliberations struct {
	sync.Mutex
	n int
}

func (s *Server) deliberate(ctx context.Context, req *sdk.CallToolRequest, in DeliberateInput) (*sdk.CallToolResult, Deliberated, error) {
	deliberations.Lock()
	deliberations.n++
	op := fmt.Sprintf("mcp-deliberate-%s-%d", s.stream, deliberations.n)
	deliberations.Unlock()

	// Progress goes out from one goroutine, latest first: the hub's
	// subscribers must not block, and a slow client must not slow the search.
	if token := req.Params.GetProgressToken(); token != nil {
		latest := make(chan service.Progress, 1)
		unsubscribe := s.svc.Progress.Subscribe(func(p service.Progress) {
			if p.Op != op {
				return
			}
			select {
			case <-latest:
			default:
			}
			latest <- p
		})
		stop, finished := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(finished)
			var n float64
			for {
				select {
				case <-stop:
					return
				case p := <-latest:
					// Progress must increase, and branches restart each
					// round: it counts reports; the message says how far.
					n++
					msg := fmt.Sprintf("%s: %d of %d %s", p.Phase, p.Done, p.Total, p.Unit)
					if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg}); err != nil {
						s.log.Debug("progress not sent", "op", op, "err", err)
					}
				}
			}
		}()
		defer func() {
			unsubscribe()
			close(stop)
			<-finished
		}()
	}
	// The client's cancel (notifications/cancelled, or a dropped
	// connection) stops the deliberation as the window's Stop does.
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		// A cancel may come before the deliberation is registered under op.
		for {
			if stopped, _ := s.api.CancelDeliberation(op); stopped {
				return
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	res, err := s.api.Deliberate(api.DeliberateInput{RunID: in.RunID, CheckpointID: in.CheckpointID, Strategy: in.Strategy, Width: in.Width,
		Depth: in.Depth, Budget: in.Budget, Seeds: in.Seeds, Rounds: in.Rounds, UntilDone: in.UntilDone, Apply: in.Apply,
		TimeLimitMs: in.TimeLimitMs, Op: op})
	if err != nil {
		return nil, Deliberated{}, err
	}
	out := Deliberated{RunID: in.RunID, Chosen: []any{}, Done: res.Done, Cancelled: res.Cancelled, Result: asValue(res)}
	for _, r := range res.Rounds {
		out.Chosen = append(out.Chosen, jsonValue(r.Chosen))
	}
	return nil, out, nil
}

// ExportInput is export_bundle's arguments.
type ExportInput struct {
	Root    string `json:"root" jsonschema:"the run (run_…) or world (wld_…) to export"`
	Path    string `json:"path" jsonschema:"the bundle file to write, a full path (a .ducklm file)"`
	Scope   string `json:"scope,omitempty" jsonschema:"alone (default), ancestry, descendants or all"`
	Replace bool   `json:"replace,omitempty" jsonschema:"replace the file if it exists"`
}

// Exported is export_bundle's answer.
type Exported struct {
	Root   string `json:"root"`
	File   string `json:"file"`
	Bytes  int64  `json:"bytes"`
	Signer string `json:"signer"`
	Scope  string `json:"scope"`
	Counts any    `json:"counts" jsonschema:"how many worlds, runs, events, checkpoints and blobs the bundle holds"`
}

func (s *Server) exportBundle(_ context.Context, _ *sdk.CallToolRequest, in ExportInput) (*sdk.CallToolResult, Exported, error) {
	if strings.TrimSpace(in.Path) == "" {
		return nil, Exported{}, backend.Errorf(backend.EINVALID, "give the path of the bundle file to write")
	}
	ex, err := s.api.ExportBundle(api.ExportInput{Root: in.Root, Scope: in.Scope, Path: in.Path, Replace: in.Replace})
	if err != nil {
		return nil, Exported{}, err
	}
	return nil, Exported{Root: ex.Root, File: ex.File, Bytes: ex.Bytes, Signer: ex.Signer, Scope: ex.Scope, Counts: asValue(ex.Counts)}, nil
}
