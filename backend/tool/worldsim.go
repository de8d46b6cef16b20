package tool

import (
	"context"
	"encoding/json"
	"time"

	"ducklm/backend"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// WorldSim runs a simulated world for a task: a Starlark program (or a
// shipped example) from a seed for some steps, or a run the task already has
// (the router's steps that take a search's chosen line). A new world started
// by a task is forked from the task's world, in the task's lineage. What it finds is world-local:
// the step's output names the world and marks the result a hypothesis, and
// the simulation's own events stay in the world's world-local stream.
type WorldSim struct {
	Worlds *world.Service
}

var _ backend.Tool = (*WorldSim)(nil)

const worldSimSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "world_sim arguments",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "run": {"type": "string", "pattern": "^run_[0-9a-f]{32}$", "description": "A simulated world's run to continue from its current state."},
    "example": {"type": "string", "enum": ["branching_grid"], "description": "A world shipped with ducklm."},
    "program": {"type": "string", "minLength": 1, "description": "Starlark source defining init(seed), step(state, action, rng) and observe(state, role)."},
    "seed": {"type": "integer", "minimum": 0, "description": "The world's seed; the same seed and actions give the same result."},
    "steps": {"type": "integer", "minimum": 1, "maximum": 10000, "description": "How many steps to run (fewer if the world ends)."},
    "action": {"description": "The action given at every step; null lets the program choose."}
  },
  "oneOf": [{"required": ["run"]}, {"required": ["example"]}, {"required": ["program"]}]
}`

// maxSimState bounds the state a step's output carries inline.
const maxSimState = 8 << 10

// Name implements backend.Tool.
func (*WorldSim) Name() string { return "world_sim" }

// Confinement: the world's program runs in a world worker.
func (*WorldSim) Confinement() backend.Confinement { return backend.ConfinedWorld }

// Description implements backend.Tool.
func (*WorldSim) Description() string {
	return "Runs a deterministic simulated world (a Starlark program, or the shipped example " +
		"branching_grid) from a seed for a number of steps, or continues a run it started before " +
		"(run), and returns its final state. Use it to " +
		"try out a course of action before acting: the result is a hypothesis about a simulation, " +
		"never a fact about this machine. It has no side effects."
}

// ArgsSchema implements backend.Tool.
func (*WorldSim) ArgsSchema() json.RawMessage { return json.RawMessage(worldSimSchema) }

type worldSimOutput struct {
	Hypothesis bool            `json:"hypothesis"`
	Note       string          `json:"note"`
	World      string          `json:"world"`
	Run        string          `json:"run"`
	Steps      int64           `json:"steps"`
	Done       bool            `json:"done"`
	State      json.RawMessage `json:"state,omitempty"`
	StateBytes int             `json:"stateBytes"`
}

// Run implements backend.Tool.
func (t *WorldSim) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	var args struct {
		Run     string          `json:"run"`
		Example string          `json:"example"`
		Program string          `json:"program"`
		Seed    int64           `json:"seed"`
		Steps   int             `json:"steps"`
		Action  json.RawMessage `json:"action"`
	}
	if err := decodeArgs(t.Name(), call.Args, &args); err != nil {
		return backend.ToolResult{}, err
	}
	given := 0
	for _, s := range []string{args.Run, args.Example, args.Program} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "world_sim takes one of run, example or program")
	}
	source := []byte(args.Program)
	name := "simulation"
	if args.Example != "" {
		ex, ok := starlark.Examples()[args.Example]
		if !ok {
			return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "world_sim has no example %q", args.Example)
		}
		source, name = ex, args.Example
	}
	if args.Steps <= 0 {
		args.Steps = 1
	}
	if lim := limits(call); lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.Timeout)
		defer cancel()
	}
	start := time.Now()
	var run backend.WorldRun
	var err error
	if args.Run != "" {
		run, err = t.Worlds.Run(ctx, args.Run)
	} else {
		run, err = taskSimulation(ctx, t.Worlds, call, name, source, args.Seed, false)
	}
	if err != nil {
		return backend.ToolResult{}, err
	}
	out, err := t.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: args.Steps, Action: args.Action})
	res := backend.ToolResult{Duration: time.Since(start), Sandboxed: true}
	if err != nil {
		res.ExitCode = 1
		res.Stderr = []byte(backend.ErrorMessage(err) + "\n")
		res.TimedOut = ctx.Err() != nil
	}
	o := worldSimOutput{Hypothesis: true, World: run.WorldID, Run: run.ID, Steps: out.Run.WorldLocalTime, Done: out.Done,
		StateBytes: len(out.State),
		Note:       "world-local result of a simulation: a hypothesis, not a fact about this machine"}
	if len(out.State) <= maxSimState {
		o.State = out.State
	}
	res.Output = mustJSON(o)
	res.Stdout = append(mustJSON(o), '\n')
	return res, nil
}
