package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// TaskNode is one step of a task graph.
type TaskNode struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"` // "tool" or "coder"
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	DependsOn []string        `json:"depends_on"`
	Title     string          `json:"title,omitempty"`
	// RetryOnTimeout says the step is safe to run again after it timed
	// out (it changes nothing, or changes it the same way twice). Without
	// it a timed-out step fails: its limit is its limit.
	RetryOnTimeout bool `json:"retry_on_timeout,omitempty"`
}

// TaskGraph is a plan as the runtime executes it: a DAG of steps.
type TaskGraph struct {
	Nodes []TaskNode `json:"nodes"`
}

// Step kinds.
const (
	KindToolStep  = "tool"
	KindCoderStep = "coder"
)

// Limits bound one sandboxed step.
type Limits struct {
	Timeout     time.Duration `json:"timeout"`
	MemoryBytes int64         `json:"memoryBytes"`
	CPUSeconds  int64         `json:"cpuSeconds"`
	FileBytes   int64         `json:"fileBytes"`   // largest file a step may write
	OutputBytes int64         `json:"outputBytes"` // stdout and stderr each are cut past this
	Processes   int64         `json:"processes"`
}

// DefaultLimits are the limits of a step nobody configured.
func DefaultLimits() Limits {
	return Limits{
		Timeout:     2 * time.Minute,
		MemoryBytes: 1 << 30,
		CPUSeconds:  120,
		FileBytes:   256 << 20,
		OutputBytes: 1 << 20,
		Processes:   256,
	}
}

// ToolCall is one invocation of a tool by the engine.
type ToolCall struct {
	RunID     string          `json:"runId"`
	StepID    string          `json:"stepId"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Workspace string          `json:"workspace"` // the run's folder; file tools are confined to it
	// WorkspaceID is the folder the run was given, as it was when the run
	// was created: a step refuses a workspace that is no longer that folder
	// (nil: a run recorded before it was kept).
	WorkspaceID *FolderID `json:"workspaceId,omitempty"`
	Network     bool      `json:"network"` // approved with network access
	Limits      Limits    `json:"limits"`
	// Hosts are the hosts a web step may reach (the router's grant: the
	// run's allowed hosts, and its URL's host once approved); PrivateHosts
	// those among them whose private or loopback addresses were approved.
	Hosts        []string `json:"hosts,omitempty"`
	PrivateHosts []string `json:"privateHosts,omitempty"`
}

// FolderID names one folder for good: its path with every link resolved,
// and its device and inode. A folder swapped for another (or for a link)
// under the same name has another identity.
type FolderID struct {
	Path  string `json:"path"`
	Dev   uint64 `json:"dev"`
	Inode uint64 `json:"inode"`
}

// ToolResult is the structured outcome of a tool call.
type ToolResult struct {
	ExitCode     int             `json:"exitCode"`
	Stdout       []byte          `json:"-"`
	Stderr       []byte          `json:"-"`
	Truncated    bool            `json:"truncated"` // stdout or stderr was cut at the output limit
	TimedOut     bool            `json:"timedOut"`
	Duration     time.Duration   `json:"duration"`
	FilesChanged []string        `json:"filesChanged,omitempty"` // relative to the workspace
	Output       json.RawMessage `json:"output,omitempty"`       // a tool's structured result (file content, world ids)
	Sandboxed    bool            `json:"sandboxed"`
	// Placement says where a portable tool's work ran (nil for the others,
	// and on a database no worker can share).
	Placement *Placement `json:"placement,omitempty"`
}

// Placement is where a portable step's work ran: on the team's workers
// (Branches of its work on Workers distinct worker processes), or in this
// process, Here saying why (no worker alive, the settings keep it here).
type Placement struct {
	Workers  int    `json:"workers,omitempty"`
	Branches int    `json:"branches,omitempty"`
	Here     string `json:"here,omitempty"`
}

// String says where the work ran, as the step panel does.
func (p Placement) String() string {
	if p.Workers > 0 {
		return fmt.Sprintf("on the team's workers: %s on %s", plural(p.Branches, "branch", "branches"), plural(p.Workers, "worker", "workers"))
	}
	return strings.TrimSpace("here, in this process. " + p.Here)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Tool is something a step can run.
type Tool interface {
	Name() string
	// Description tells a planning model what the tool does.
	Description() string
	// ArgsSchema is the JSON Schema of the tool's args.
	ArgsSchema() json.RawMessage
	// Run executes one call. A failure of the thing run (non-zero exit,
	// timeout) is a result, not an error; an error means the tool could not
	// run at all (bad args, sandbox unavailable, cancelled).
	Run(ctx context.Context, call ToolCall) (ToolResult, error)
}

// Confinement says where a tool's calls run, for the person who approves
// one: what holds the step in, and so which limits apply to it.
type Confinement string

// The places a tool call runs.
const (
	// ConfinedSandbox: a bubblewrap sandbox (when bubblewrap works here)
	// under the step's process limits — time, memory, CPU, processes,
	// file size, output.
	ConfinedSandbox Confinement = "sandbox"
	// ConfinedWorkspace: ducklm itself, reading and writing only inside
	// the run's workspace.
	ConfinedWorkspace Confinement = "workspace"
	// ConfinedHosts: ducklm itself, reaching only the hosts the step was
	// granted, within the web limits: where web_fetch ran before it had a
	// web worker (kept for the records of that time).
	ConfinedHosts Confinement = "hosts"
	// ConfinedWorld: a world worker process under the world's own limits.
	ConfinedWorld Confinement = "world"
	// ConfinedWebWorker: a web worker process (web_fetch) under the
	// step's time, CPU and memory limits, whose only way out is ducklm's
	// host guard; in bubblewrap (read-only system, no data directory, no
	// network of its own) when the result says Sandboxed, otherwise with
	// the user's rights, after the user approved it.
	ConfinedWebWorker Confinement = "web_worker"
)

// Confined is implemented by the tools whose calls do not run in the
// sandbox.
type Confined interface {
	Confinement() Confinement
}

// ConfinementOf returns where t's calls run: the sandbox unless t says.
func ConfinementOf(t Tool) Confinement {
	if c, ok := t.(Confined); ok {
		return c.Confinement()
	}
	return ConfinedSandbox
}

// Portable is implemented by the tools whose calls are safe to run on the
// team's workers rather than on the machine that runs the task: they read
// and write only the shared database (never the task's workspace, this
// machine's sandbox or the user's approved hosts) and give the same result
// wherever they run. The tool catalog shows it; the tool itself chooses,
// per call, whether workers take its work.
type Portable interface {
	Portable() bool
}

// IsPortable reports whether t's calls may run on the team's workers.
func IsPortable(t Tool) bool {
	p, ok := t.(Portable)
	return ok && p.Portable()
}

// LargerPlanner is the model ducklm suggests when a small one cannot plan.
const LargerPlanner = "qwen2.5:7b"

// PlannerNextStep is the sentence that tells a user what to do when the
// planning model named could not plan a task.
func PlannerNextStep(model string) string {
	if strings.EqualFold(strings.TrimSuffix(model, ":latest"), LargerPlanner) {
		return "Try a larger planning model than " + model + ", or give an explicit plan."
	}
	return "Try a larger planning model such as " + LargerPlanner + " (in Settings, or --model planner=" + LargerPlanner +
		"), or give an explicit plan."
}

// MCPTool describes a step's tool that an MCP server serves, for the router
// (which rates its calls) and the approval card (which shows them).
type MCPTool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// ReadOnlyHint is what the server says of its tool: shown to the person
	// who approves, never trusted on its own.
	ReadOnlyHint bool `json:"readOnlyHint,omitempty"`
	// Safe: the user marked this tool safe, so ask_risky runs it unasked.
	Safe bool `json:"safe,omitempty"`
	// Network: the call reaches the network (a URL server, or a command
	// the user let reach it).
	Network bool `json:"network,omitempty"`
}

// MCPServed is implemented by the tools an MCP server serves.
type MCPServed interface {
	MCP() MCPTool
}

// MCPOf returns what t's MCP server says of it, and false for ducklm's own
// tools.
func MCPOf(t Tool) (MCPTool, bool) {
	m, ok := t.(MCPServed)
	if !ok {
		return MCPTool{}, false
	}
	return m.MCP(), true
}
