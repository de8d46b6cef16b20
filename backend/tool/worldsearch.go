package tool

import (
	"context"
	"encoding/json"
	"time"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// WorldSearch deliberates for a task: it searches forks of a simulated
// world (a run the task already has, or the task's own world of a program or
// the shipped example) and returns the next actions ranked by what their
// branches reached, with the chosen line. The task's own world is forked
// from the task's world, so the search is in the task's lineage; the router
// turns the chosen line into steps that take it (unless act is false). The
// result is a hypothesis about a simulation.
//
// A search is portable: on a team's database its branches run on the team's
// workers when Team lends them, with the very result an in-process search
// gives (the search is the same; only where each branch is stepped moves).
type WorldSearch struct {
	Worlds       *world.Service
	Deliberation *deliberation.Service
	// Team, when set, lends a search the team's workers (nil: every search
	// runs in this process, as on a machine's own SQLite database).
	Team Team
}

var (
	_ backend.Tool     = (*WorldSearch)(nil)
	_ backend.Portable = (*WorldSearch)(nil)
)

// Team lends a portable step the team's workers.
type Team interface {
	// Branches returns the team's workers as a deliberation's evaluator,
	// or a sentence saying why the step's branches run in this process
	// instead (no worker alive, the settings keep task steps here).
	Branches(ctx context.Context) (*TeamBranches, string)
}

// TeamBranches are the team's workers lent to one step.
type TeamBranches struct {
	// Eval runs each branch as a job for the workers.
	Eval deliberation.Evaluator
	// Queued is how many branches to keep asked for at once.
	Queued int
	// Ran says how many branches the workers ran for the step, and on how
	// many distinct worker processes.
	Ran func() (branches, workers int)
	// Close releases what Eval holds.
	Close func()
}

const worldSearchSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "world_search arguments",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "run": {"type": "string", "pattern": "^run_[0-9a-f]{32}$", "description": "A simulated world's run to search from (its current state)."},
    "example": {"type": "string", "enum": ["branching_grid"], "description": "A world shipped with ducklm, created afresh."},
    "program": {"type": "string", "minLength": 1, "description": "Starlark source defining init, step, observe, actions(state) and score(state)."},
    "seed": {"type": "integer", "minimum": 0, "description": "The new world's seed."},
    "strategy": {"type": "string", "enum": ["beam", "mcts"], "description": "Beam search or Monte-Carlo tree search (default beam)."},
    "width": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Beam width (default 4)."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 200, "description": "How many actions ahead to look (default 10)."},
    "budget": {"type": "integer", "minimum": 1, "maximum": 100000, "description": "Most branches to try (default 200)."},
    "seeds": {"type": "integer", "minimum": 1, "maximum": 64, "description": "Seeds per candidate; more than 1 gives an expected score in noisy worlds."},
    "act": {"type": "boolean", "description": "Take the chosen line in the world afterwards, one step per action (default true)."}
  },
  "oneOf": [{"required": ["run"]}, {"required": ["example"]}, {"required": ["program"]}]
}`

// maxCandidates bounds the candidates a result carries.
const maxCandidates = 10

// Name implements backend.Tool.
func (*WorldSearch) Name() string { return "world_search" }

// Confinement: the world's program runs in world workers.
func (*WorldSearch) Confinement() backend.Confinement { return backend.ConfinedWorld }

// Portable: a search reads and writes only the shared database's worlds and
// is deterministic, so the team's workers may run its branches.
func (*WorldSearch) Portable() bool { return true }

// Description implements backend.Tool.
func (*WorldSearch) Description() string {
	return "Thinks before acting in a simulated world: searches forks of the world (beam search or " +
		"Monte-Carlo tree search within a budget) and returns its next actions ranked by the score " +
		"their branches reached, with the best line of each. The world program must define " +
		"actions(state) and score(state) (the example branching_grid does). The result is a " +
		"hypothesis about a simulation, never a fact about this machine. It has no side effects."
}

// ArgsSchema implements backend.Tool.
func (*WorldSearch) ArgsSchema() json.RawMessage { return json.RawMessage(worldSearchSchema) }

type worldSearchOutput struct {
	Hypothesis        bool                     `json:"hypothesis"`
	Note              string                   `json:"note"`
	World             string                   `json:"world"`
	Run               string                   `json:"run"`
	DeliberationIndex int64                    `json:"deliberationIndex"`
	Strategy          deliberation.Strategy    `json:"strategy"`
	Chosen            json.RawMessage          `json:"chosen"`
	Candidates        []deliberation.Candidate `json:"candidates"`
	Budget            deliberation.Budget      `json:"budget"`
	// Line is the chosen candidate's best line, the chosen action first;
	// Act says whether the task takes it (the router reads both).
	Line []json.RawMessage `json:"line"`
	Act  bool              `json:"act"`
	// Done is true when the world was already done: there is nothing to
	// choose.
	Done bool `json:"done,omitempty"`
}

// Run implements backend.Tool.
func (t *WorldSearch) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	var args struct {
		Run      string `json:"run"`
		Example  string `json:"example"`
		Program  string `json:"program"`
		Seed     int64  `json:"seed"`
		Strategy string `json:"strategy"`
		Width    int    `json:"width"`
		Depth    int    `json:"depth"`
		Budget   int    `json:"budget"`
		Seeds    int    `json:"seeds"`
		Act      *bool  `json:"act"`
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
		return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "world_search takes one of run, example or program")
	}
	opt := deliberation.Options{Strategy: deliberation.Strategy(args.Strategy), Width: args.Width, Depth: args.Depth,
		Budget: args.Budget, Seeds: args.Seeds}
	if err := opt.Normalize(); err != nil {
		return backend.ToolResult{}, err
	}
	if lim := limits(call); lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lim.Timeout)
		defer cancel()
	}
	start := time.Now()
	opt.RunID = args.Run
	if args.Run == "" {
		source, name := []byte(args.Program), "search"
		if args.Example != "" {
			ex, ok := starlark.Examples()[args.Example]
			if !ok {
				return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "world_search has no example %q", args.Example)
			}
			source, name = ex, args.Example
		}
		run, err := taskSimulation(ctx, t.Worlds, call, name, source, args.Seed, true)
		if err != nil {
			return backend.ToolResult{}, err
		}
		opt.RunID = run.ID
	}
	delib, team, placement := t.Deliberation, (*TeamBranches)(nil), (*backend.Placement)(nil)
	if t.Team != nil {
		var why string
		if team, why = t.Team.Branches(ctx); team != nil {
			defer team.Close()
			delib, opt.Workers = delib.WithEvaluator(team.Eval), team.Queued
		} else {
			placement = &backend.Placement{Here: why}
		}
	}
	res, err := delib.Deliberate(ctx, opt)
	if team != nil {
		placement = &backend.Placement{}
		placement.Branches, placement.Workers = team.Ran()
	}
	out := backend.ToolResult{Duration: time.Since(start), Sandboxed: true, Placement: placement}
	if err != nil {
		out.ExitCode = 1
		out.Stderr = []byte(backend.ErrorMessage(err) + "\n")
		out.TimedOut = ctx.Err() != nil
		return out, nil
	}
	r := res.Rounds[0]
	o := worldSearchOutput{Hypothesis: true, World: r.ParentWorldID, Run: r.ParentRunID, DeliberationIndex: r.DeliberationIndex,
		Strategy: r.Strategy, Chosen: r.Chosen, Budget: r.Budget,
		Candidates: r.Candidates[:min(len(r.Candidates), maxCandidates)],
		Note:       "world-local result of a search over a simulation: a hypothesis, not a fact about this machine"}
	o.Act = args.Act == nil || *args.Act
	o.Line = []json.RawMessage{}
	for i := range o.Candidates {
		o.Candidates[i].State = nil // the best line says how to get there; states can be large
	}
	for _, c := range r.Candidates {
		if len(c.Line) > 0 && sameAction(c.Action, r.Chosen) {
			o.Line = c.Line
			break
		}
	}
	out.Output = mustJSON(o)
	out.Stdout = append(mustJSON(o), '\n')
	return out, nil
}
