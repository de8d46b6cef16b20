package router

import "ducklm/backend"

// Phase is where a run stands in its lifecycle.
type Phase string

// The phases of a run.
const (
	PhaseNew              Phase = "new"
	PhasePlanned          Phase = "planned"
	PhaseExecuting        Phase = "executing"
	PhaseAwaitingApproval Phase = "awaiting_approval"
	PhaseFinished         Phase = "finished"
)

// ApprovalMode is how much the user wants to be asked before a step runs.
type ApprovalMode string

// The approval modes.
const (
	// AskEvery asks before every step.
	AskEvery ApprovalMode = "ask_every"
	// AskRisky asks before medium- and high-risk steps.
	AskRisky ApprovalMode = "ask_risky"
	// AutoSandboxed asks only before high-risk steps, and before every step
	// when there is no sandbox.
	AutoSandboxed ApprovalMode = "auto_sandboxed"
)

// Role is what a model is used for.
type Role string

// The model roles.
const (
	RolePlanner  Role = "planner"
	RoleCoder    Role = "coder"
	RoleCritic   Role = "critic"
	RoleEmbedder Role = "embedder"
)

// State is what the router knows of a run. The runtime loop builds it from
// the run's ledger; the router never changes it.
type State struct {
	RunID string
	Task  string
	Phase Phase
	// HasGraph is true once a plan has been validated into a task graph.
	HasGraph bool
	// Ready holds the steps that may start now, in topological order
	// (taskgraph.Graph.Ready).
	Ready []ReadyStep
	// Running is the number of steps running now.
	Running int
	// Failed holds the ids of the steps that failed, in any order.
	Failed []string
	// Errors says why each failed step failed ("exited with code 1").
	Errors map[string]string
	// Denied holds the failed steps the user denied, in any order.
	Denied []string
	// UserPlan is true when the graph is the user's (an explicit plan or a
	// shell one-liner), not a model's: ducklm does not rewrite it.
	UserPlan bool
	// StepReplans is how many revised plans the run has asked for after
	// failed steps; MaxStepReplans bounds them (0: none).
	StepReplans    int
	MaxStepReplans int
	// Revising is true while a revision round is open: it was asked for
	// and no revised plan has been accepted yet (ducklm may have stopped
	// in between).
	Revising bool
	// Replans is how many replans of invalid plans the current planning
	// round has had (the first plan, or one revision); MaxReplans bounds
	// them.
	Replans    int
	MaxReplans int
	// ValidationError is the message of the last plan's validation failure,
	// "" when the last plan was valid or there is none yet.
	ValidationError string
	ApprovalMode    ApprovalMode
	// Sandboxed is true when bubblewrap is usable.
	Sandboxed bool
	// StepsRun is how many steps have started; MaxSteps bounds them (0: no
	// bound).
	StepsRun  int
	MaxSteps  int
	Cancelled bool
	// Searches are the finished world_search steps whose chosen line the
	// task takes, in plan order.
	Searches []Search
	// AllowedHosts are the hosts web steps may reach without asking: the
	// run's (from Settings when it began, from the task, and from approvals
	// that allowed a host for the rest of the run).
	AllowedHosts []string
	// MCP describes the ready steps' tools that MCP servers serve, by tool
	// name: what the user said of each (safe, network).
	MCP map[string]backend.MCPTool

	// Review is true when the run ends with a review of its results: its
	// plan is a model's, or its user asked for one. Reviews counts the
	// review rounds begun; MaxReviews bounds them (0: the run is not
	// reviewed). Reviewing is true while a round is open (asked for, and
	// no answer or plan accepted yet).
	Review     bool
	Reviews    int
	MaxReviews int
	Reviewing  bool
	// Done holds the finished steps in plan order, with their titles.
	Done []DoneStep
	// Retryable holds the failed steps whose result says they may run
	// again (a timeout the plan marks safe to repeat, a tool that was
	// unavailable), with how many times each has started; MaxRetries
	// bounds the retries of each.
	Retryable  map[string]int
	MaxRetries int
	// CriticThreshold is the critic score below which a finished step of a
	// model's plan counts as failed (0: none does).
	CriticThreshold float64
	// Answered is true once the run has its answer (run.answered);
	// AnswerReason says how it was reached.
	Answered     bool
	AnswerReason string
}

// DoneStep is a finished step as the router sees it.
type DoneStep struct {
	ID    string
	Title string
	// Score is the critic's score, HasScore false while it has none.
	Score    float64
	HasScore bool
}

// ReadyStep is a step that may start now.
type ReadyStep struct {
	Node backend.TaskNode
	// Approved is true when the user has approved this step. For an
	// in-doubt step only an approval given after it went in doubt counts.
	Approved bool
	// InDoubt is true when the step was running when the process stopped,
	// so it may already have had its effect.
	InDoubt bool
	// Untrusted names the content from outside (a web page, a browser
	// page) the run had read when this step was planned: a step planned
	// after it is rated one risk level higher.
	Untrusted []string
}

// Context is the assembled context the router decides with.
type Context struct {
	// AvailableModels are the models Ollama lists; empty when Ollama is
	// unreachable.
	AvailableModels []string
	Settings        Settings
}

// Settings are the user's choices the router honours.
type Settings struct {
	// Models is the user's model per role; a missing or unavailable one
	// falls back to PickModel's preference.
	Models map[Role]string
}
