package mcp

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
	"ducklm/backend/starlark"
)

// The tools' names.
const (
	ToolSubmitTask   = "submit_task"
	ToolRunStatus    = "run_status"
	ToolRunEvents    = "run_events"
	ToolRunAnswer    = "run_answer"
	ToolListRuns     = "list_runs"
	ToolCreateWorld  = "create_world"
	ToolRunWorld     = "run_world"
	ToolForkWorld    = "fork_world"
	ToolDiffRuns     = "diff_runs"
	ToolWorldDetail  = "world_detail"
	ToolListWorlds   = "list_worlds"
	ToolDeliberate   = "deliberate"
	ToolExportBundle = "export_bundle"
)

func ptr[T any](v T) *T { return &v }

// reading marks a tool that changes nothing.
var reading = &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}

// writing marks a tool that adds to ducklm's record but never destroys.
var writing = &sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}

func (s *Server) addTools() {
	examples := strings.Join(slices.Sorted(maps.Keys(starlark.Examples())), ", ")
	add(s, &sdk.Tool{Name: ToolSubmitTask, Title: "Submit a task",
		Description: "Start a ducklm task run and return its id at once: a model plans the task (or give an explicit plan, or a '$ ' shell one-liner), " +
			"and each step runs sandboxed, recorded and, by the person's approval mode, approved. The run goes on after the call; follow it with " +
			"run_status, run_events and run_answer. " + noApprovals,
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}}, s.submitTask)
	add(s, &sdk.Tool{Name: ToolRunStatus, Title: "A run's status",
		Description: "A task run's status, steps done, answer (once it has one) and the steps waiting for the person's approval. " + noApprovals,
		Annotations: reading}, s.runStatus)
	add(s, &sdk.Tool{Name: ToolRunEvents, Title: "A run's events",
		Description: "A page of a run's recorded events, oldest first (a fork's inherited history first): pass the answer's next as offset to go on.",
		Annotations: reading}, s.runEvents)
	add(s, &sdk.Tool{Name: ToolRunAnswer, Title: "A run's answer",
		Description: "A task run's answer to its task, with the steps it cites, or why it has none yet.",
		Annotations: reading}, s.runAnswer)
	add(s, &sdk.Tool{Name: ToolListRuns, Title: "List runs",
		Description: "Task runs, those waiting for the person's approval first, then newest first.",
		Annotations: reading}, s.listRuns)
	add(s, &sdk.Tool{Name: ToolCreateWorld, Title: "Create a simulated world",
		Description: "Create a simulated world from a Starlark program (or a shipped example: " + examples + ") and start its first run.",
		Annotations: writing}, s.createWorld)
	add(s, &sdk.Tool{Name: ToolRunWorld, Title: "Run a simulated world",
		Description: "Apply steps to a simulated world's run: a given action at each step, or the program's choice. Answers the state after.",
		Annotations: writing}, s.runWorld)
	add(s, &sdk.Tool{Name: ToolForkWorld, Title: "Fork a simulated world",
		Description: "Fork a new child world from a run's current state (or a checkpoint), with a divergence: a state patch, an action override, a seed, program or parameter change. The parent is untouched.",
		Annotations: writing}, s.forkWorld)
	add(s, &sdk.Tool{Name: ToolDiffRuns, Title: "Compare two runs",
		Description: "Compare two runs after their shared history: the fork point, both states and what differs, the events after it.",
		Annotations: reading}, s.diffRuns)
	add(s, &sdk.Tool{Name: ToolWorldDetail, Title: "A world's detail",
		Description: "A simulated world's spec, runs, checkpoints, current state and program, and fork provenance, by world or run id.",
		Annotations: reading}, s.worldDetail)
	add(s, &sdk.Tool{Name: ToolListWorlds, Title: "List simulated worlds",
		Description: "Simulated worlds, newest first, each with its latest run (deliberation branches left out).",
		Annotations: reading}, s.listWorlds)
	add(s, &sdk.Tool{Name: ToolDeliberate, Title: "Deliberate",
		Description: "Search forks of a simulated world's run and rank its next actions (beam search or MCTS over the program's actions and score); " +
			"with apply, take the best. Sends progress notifications when the call has a progress token; cancelling the call stops the search, " +
			"and the answer keeps the rounds it finished.",
		Annotations: writing}, s.deliberate)
	add(s, &sdk.Tool{Name: ToolExportBundle, Title: "Export a bundle",
		Description: "Write a run or world (with its ancestry or descendants, by scope) to one signed .ducklm bundle file at a full path.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}}, s.exportBundle)
}

// add registers a typed tool whose errors reach the client as the sentence
// a person would read in the window, translated here, once.
func add[In, Out any](s *Server, t *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	sdk.AddTool(s.sdk, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		res, out, err := h(ctx, req, in)
		if err != nil {
			var zero Out
			return nil, zero, errors.New(message(err))
		}
		return res, out, nil
	})
}

// message is the sentence of err: a coded error says its message (never
// its cause); the facade's errors are sentences already.
func message(err error) string {
	var be *backend.Error
	if errors.As(err, &be) {
		return backend.ErrorMessage(err)
	}
	return err.Error()
}
