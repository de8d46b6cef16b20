package runtime

import (
	"encoding/json"

	"ducklm/backend"
)

// Event types of a task run, in the order a run usually records them.
const (
	EvTaskReceived      = "task.received"
	EvDecision          = "decision.applied"
	EvPlanProposed      = "plan.proposed"
	EvPlanInvalid       = "plan.invalid"
	EvPlanAccepted      = "plan.accepted"
	EvPlannerAnswered   = "planner.answered" // one planning model call: request options, answer, what was mended
	EvPlanRevising      = "plan.revising"    // steps failed; the planner revises the plan, keeping the finished steps
	EvReviewing         = "run.reviewing"    // the steps are done; the orchestrator reads their results to answer, add steps or give up
	EvAnswered          = "run.answered"     // the run's answer to its task, with the steps it rests on
	EvModelMessage      = "model.message"
	EvApprovalRequested = "step.approval_requested"
	EvApproved          = "step.approved"
	EvDenied            = "step.denied"
	EvStepStarted       = "step.started"
	EvStepFinished      = "step.finished"
	EvStepRetrying      = "step.retrying"
	EvStepInDoubt       = "step.in_doubt"
	EvStepSkipped       = "step.skipped"
	EvCoderScript       = "coder.script"
	EvCritique          = "critic.scored"
	EvCheckpoint        = "run.checkpoint"
	EvStatus            = "run.status"
	EvCompleted         = "run.completed"
	EvFailed            = "run.failed"
	EvCancelled         = "run.cancelled"
	EvForked            = "run.forked"
	// EvCancelRequested asks the process driving the run to cancel it
	// (written by a process that cannot take the run's lock).
	EvCancelRequested = "run.cancel_requested"
	EvWarning         = "run.warning" // something was wrong and the run went on (a damaged checkpoint skipped)
)

// ApprovalMode says which steps a run asks its user about.
type ApprovalMode string

// The approval modes.
const (
	AskEvery      ApprovalMode = "ask_every"      // every step
	AskRisky      ApprovalMode = "ask_risky"      // medium and high risk steps
	AutoSandboxed ApprovalMode = "auto_sandboxed" // only high risk or unsandboxed steps
)

// TaskRequest is what a user submits.
type TaskRequest struct {
	Task         string             `json:"task"`
	Plan         *backend.TaskGraph `json:"plan,omitempty"` // an explicit plan skips the planner
	ApprovalMode ApprovalMode       `json:"approvalMode"`
	Models       map[string]string  `json:"models,omitempty"` // role → model
	Workspace    string             `json:"workspace,omitempty"`
	// WorkspaceID is the workspace folder as it was when the run was
	// created (set by the controller; nil for runs recorded before it was
	// kept): a step refuses a folder that is no longer this one.
	WorkspaceID *backend.FolderID `json:"workspaceId,omitempty"`
	Limits      backend.Limits    `json:"limits"`
	MaxSteps    int               `json:"maxSteps"`
	// MaxPlanSteps bounds the steps of a plan (0: taskgraph.MaxNodes).
	MaxPlanSteps int `json:"maxPlanSteps,omitempty"`
	MaxReplans   int `json:"maxReplans"`
	// MaxStepReplans bounds the revised plans after failed steps (default
	// 1; -1 for none).
	MaxStepReplans int `json:"maxStepReplans,omitempty"`
	MaxRetries     int `json:"maxRetries"`
	Concurrency    int `json:"concurrency"`
	// Review asks for a review of the results when the steps are done
	// even though the plan is the user's (a model's plan always has one).
	Review bool `json:"review,omitempty"`
	// MaxReviews bounds the review rounds (default 4; -1 for none).
	MaxReviews int `json:"maxReviews,omitempty"`
	// CriticThreshold is the critic score below which a finished step of
	// a model's plan counts as failed (default DefaultCriticThreshold; -1
	// for none).
	CriticThreshold float64 `json:"criticThreshold,omitempty"`
	// AllowedHosts are hosts web steps may reach without asking (the
	// task's, and Settings' when the run began): a name, an address, or
	// *.domain for its subdomains.
	AllowedHosts []string `json:"allowedHosts,omitempty"`
	// CreateWorkspace creates a Workspace that does not exist yet (without
	// it, a missing workspace is refused: a typo must not become a folder).
	CreateWorkspace bool `json:"-"`
	// Owner is the installation that submitted the run, the only one that
	// drives it (set by Submit; nil for runs recorded before owners).
	Owner *Installation `json:"owner,omitempty"`
}

// Installation is a data directory's identity on a team's database: who
// drives the runs it submits (docs/team-server.md, "Who drives a task run").
type Installation struct {
	ID string `json:"id"`
	// Host is the machine's name when the data directory was first opened,
	// for people: "ducklm on <host>".
	Host string `json:"host,omitempty"`
}

// cancelRequest is the payload of run.cancel_requested: another process
// asks the run's driver to cancel it.
type cancelRequest struct {
	Reason string `json:"reason"`
}

// graphFromRequest is planPayload.GraphFrom for the task's own plan.
const graphFromRequest = "request"

// payloads of the events the fold reads.

type planPayload struct {
	// Graph is the plan; absent when GraphFrom names where it is.
	Graph backend.TaskGraph `json:"graph,omitzero"`
	// GraphFrom is "request" when the plan is the one the task came with
	// (task.received holds it, once); "" when Graph holds it.
	GraphFrom string `json:"graphFrom,omitempty"`
	Model     string `json:"model,omitempty"`
	Attempt   int    `json:"attempt"`
	Source    string `json:"source,omitempty"` // planner.Source*: who made the plan
	// Kept are the finished steps a revised plan keeps as they ran.
	Kept     []string `json:"kept,omitempty"`
	Revision int      `json:"revision,omitempty"` // the revision round it ends, 0 for the first plan
	Review   int      `json:"review,omitempty"`   // the review round it ends (the review added steps)
	// Search, when set, is the world_search step whose chosen line this
	// plan added (the router's plan); Kept then lists every step whose
	// record stays as it was.
	Search string `json:"search,omitempty"`
}

// Revision is an open round of revising the plan after failed steps.
type Revision struct {
	Round  int      `json:"round"`
	Failed []string `json:"failed"`
	Kept   []string `json:"kept"`
	Rule   string   `json:"rule"`
	Reason string   `json:"reason"`
}

// ReviewRound is a round of reviewing the results once the steps are done.
type ReviewRound struct {
	Round int `json:"round"`
	// Kept are the finished steps, which stay as they ran when the review
	// adds steps.
	Kept   []string `json:"kept"`
	Reason string   `json:"reason"`
}

// RunAnswer is the run's answer to its task (run.answered).
type RunAnswer struct {
	Text string `json:"text"`
	// Cites are the steps the answer rests on (none for a task answered
	// without a step).
	Cites []string `json:"cites,omitempty"`
	Model string   `json:"model,omitempty"`
	// Review is the review round that answered, 0 for a direct answer.
	Review int `json:"review,omitempty"`
	// Reason says how the answer was reached; the run completes with it.
	Reason string `json:"reason,omitempty"`
}

// PlanningAttempt is one answer of a planning model, as the run view shows
// it: what was asked (model, options), what came back, what ducklm mended
// and why the answer was refused, if it was.
type PlanningAttempt struct {
	Attempt    int            `json:"attempt"`
	Revision   int            `json:"revision,omitempty"`
	Review     int            `json:"review,omitempty"` // the review round it answered
	Model      string         `json:"model"`
	Options    map[string]any `json:"options,omitempty"`
	Answer     string         `json:"answer"`
	Normalised []string       `json:"normalised,omitempty"`
	Error      string         `json:"error,omitempty"`
	Accepted   bool           `json:"accepted,omitempty"`
	// Unstreamed says the answer's stream was cut and it came from asking
	// again without streaming.
	Unstreamed bool `json:"unstreamed,omitempty"`
}

type planInvalidPayload struct {
	Error   string `json:"error"`
	Attempt int    `json:"attempt"`
	Raw     string `json:"raw,omitempty"`
}

type approvalRequest struct {
	RequestID string          `json:"requestId"`
	Step      string          `json:"step"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Rule      string          `json:"rule"`
	Risk      string          `json:"risk"`
	Why       string          `json:"why"`
	Network   bool            `json:"network"`
	Sandboxed bool            `json:"sandboxed"`
	Limits    backend.Limits  `json:"limits"`
	InDoubt   bool            `json:"inDoubt,omitempty"`
	// Untrusted names the outside content the step was planned after.
	Untrusted []string `json:"untrusted,omitempty"`
	// MCP is the MCP server and tool the step calls, and the server's
	// readOnlyHint when it asked.
	MCP *backend.MCPTool `json:"mcp,omitempty"`
}

type approvalAnswer struct {
	RequestID      string          `json:"requestId"`
	Step           string          `json:"step"`
	IdempotencyKey string          `json:"idempotencyKey"`
	Args           json.RawMessage `json:"args,omitempty"` // edited args, when the user changed them
	Network        bool            `json:"network"`
	// AllowHost allows a web step's host for the rest of the run.
	AllowHost bool   `json:"allowHost,omitempty"`
	Reason    string `json:"reason,omitempty"`
	By        string `json:"by,omitempty"` // "ui", "cli"
}

type stepStarted struct {
	Step      string          `json:"step"`
	Attempt   int             `json:"attempt"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Sandboxed bool            `json:"sandboxed"`
	Network   bool            `json:"network"`
	// Hosts and PrivateHosts are what a web step was granted (the router's
	// WebGrant): what it may reach, recorded before it runs.
	Hosts        []string `json:"hosts,omitempty"`
	PrivateHosts []string `json:"privateHosts,omitempty"`
	// Decision is the router's decision that started the step (absent in
	// runs recorded when it was a decision.applied event of its own; a
	// coder step's decision to write its script, which starts no step, is
	// still one).
	Decision *backend.Decision `json:"decision,omitempty"`
}

type stepFinished struct {
	Step         string           `json:"step"`
	Attempt      int              `json:"attempt"`
	OK           bool             `json:"ok"`
	ExitCode     int              `json:"exitCode"`
	TimedOut     bool             `json:"timedOut"`
	Truncated    bool             `json:"truncated"`
	DurationMS   int64            `json:"durationMs"`
	Stdout       *backend.BlobRef `json:"stdout,omitempty"`
	Stderr       *backend.BlobRef `json:"stderr,omitempty"`
	StdoutTail   string           `json:"stdoutTail,omitempty"`
	StderrTail   string           `json:"stderrTail,omitempty"`
	FilesChanged []string         `json:"filesChanged,omitempty"`
	Output       json.RawMessage  `json:"output,omitempty"`
	Error        string           `json:"error,omitempty"` // the tool could not run at all
	Retryable    bool             `json:"retryable,omitempty"`
	Sandboxed    bool             `json:"sandboxed"`
	// Confinement is where the step ran (the approval card's truth):
	// Sandboxed alone cannot tell ducklm's own file or web work from a
	// sandboxed command. Absent in results recorded before it was.
	Confinement backend.Confinement `json:"confinement,omitempty"`
	// Placement is where a portable step's work ran: on the team's workers
	// (how many branches on how many workers) or here and why. Absent for
	// other tools and where no worker can share the database.
	Placement *backend.Placement `json:"placement,omitempty"`
	// Critique is the critic's score of this result, recorded with it
	// (carrying the critic's decision, as critic.scored does); absent when
	// no critic scored it in time, and in runs recorded when the critique
	// was a critic.scored event of its own. The fold moves it to the step's
	// record (StepRecord.Critique).
	Critique *critiquePayload `json:"critique,omitempty"`
	// CheckpointID is the checkpoint this event ends: the checkpoint's
	// record covers the run up to and including it (runs recorded before
	// had a run.checkpoint event after the result). The fold drops it from
	// the step's record.
	CheckpointID string `json:"checkpointId,omitempty"`
	// Memory is the memory write policy's decision on this result, when
	// its verdict was ready in time (memory.FieldCarried: the memory
	// package reads it; its rows are in the same commit); else, and in
	// runs recorded before, a memory.decided event after the result. The
	// fold drops it from the step's record.
	Memory json.RawMessage `json:"memory,omitempty"`
}

type stepNote struct {
	Step    string `json:"step"`
	Attempt int    `json:"attempt,omitempty"`
	Reason  string `json:"reason,omitempty"`
	DelayMS int64  `json:"delayMs,omitempty"`
	// Decision is the router's decision a step.retrying applies.
	Decision *backend.Decision `json:"decision,omitempty"`
}

type coderScript struct {
	Step     string          `json:"step"`
	Language string          `json:"language"`
	Blob     backend.BlobRef `json:"blob"`
	Source   string          `json:"source"` // the script, shown on the approval card
	Model    string          `json:"model,omitempty"`
}

// critiquePayload is a critic.scored event's payload, and a step.finished
// event's critique (without Step, and with an Explanation that leaves out
// the fallback's note, which ModelError gives: critic.Note).
type critiquePayload struct {
	Step        string   `json:"step,omitempty"`
	Score       float64  `json:"score"`
	Explanation string   `json:"explanation"`
	Source      string   `json:"source"`
	Model       string   `json:"model,omitempty"`
	Normalised  []string `json:"normalised,omitempty"` // what ducklm mended in the model's answer
	// ModelError says why the critic model was not used, when it was wanted.
	ModelError string `json:"modelError,omitempty"`
	// Decision, when set, makes this critique the critic's decision too
	// (decisions.go); runs recorded before held it in a decision.applied
	// event before the critique.
	Decision backend.DecisionType `json:"decision,omitempty"`
}

type statusPayload struct {
	Status backend.RunStatus `json:"status"`
	Reason string            `json:"reason,omitempty"`
	// NeedsModel marks a pause that waits for a model to plan with (a
	// natural-language task and no Ollama): Resume cannot help until one
	// answers.
	NeedsModel bool `json:"needsModel,omitempty"`
}

type endPayload struct {
	Reason   string `json:"reason,omitempty"`
	Response string `json:"response,omitempty"`
}
