package planner

import (
	"context"
	"encoding/json"
	"strings"
	"unicode"

	"ducklm/backend"
)

// Planner turns a task into a decision. It never runs what it decides.
type Planner interface {
	Plan(ctx context.Context, req Request) (backend.Decision, error)
}

var (
	_ Planner = LLM{}
	_ Planner = Offline{}
)

// ToolInfo describes one tool to a planning model.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	ArgsSchema  json.RawMessage `json:"args_schema"`
}

// CatalogOf describes tools for a Request's Catalog.
func CatalogOf(tools ...backend.Tool) []ToolInfo {
	out := make([]ToolInfo, 0, len(tools))
	for _, t := range tools {
		out = append(out, ToolInfo{Name: t.Name(), Description: t.Description(), ArgsSchema: t.ArgsSchema()})
	}
	return out
}

// Request is what the planner is asked.
type Request struct {
	Task     string
	Context  string     // assembled by the context builder
	Catalog  []ToolInfo // the tools a plan may use
	Model    string     // the planning model the router chose
	Feedback string     // why the previous attempt was rejected, when replanning
	// Previous is the model's previous answer, when replanning: it goes
	// back to the model with Feedback, so it can correct rather than guess.
	Previous string
	Attempt  int // 1 for the first attempt at this task, 2 for the first replan, ...
	// Revision, when set, asks for a revised plan after steps failed: the
	// finished steps stay, the model plans what is left.
	Revision *Revision
	// Review, when set, asks what the finished plan's results mean: the
	// answer to the task citing the steps it rests on, more steps, or fail.
	Review *Review
	// Explicit is a plan the user gave; it is returned as it is.
	Explicit *backend.TaskGraph
	// OnToken receives the model's answer as it streams; not stored.
	OnToken func(string)
}

// Revision is what a planner revising a plan after a failed step is told.
type Revision struct {
	// Done are the finished steps, which stay in the plan as they ran.
	Done []StepOutcome `json:"done"`
	// Failed are the steps that failed after their retries.
	Failed []StepOutcome `json:"failed"`
}

// Review is what the orchestrator reviewing a run's results is told.
type Review struct {
	// Round is this review round (1 for the first), of MaxRounds.
	Round     int           `json:"round"`
	MaxRounds int           `json:"max_rounds"`
	Steps     []StepOutcome `json:"steps"`
}

// StepOutcome is one step of a plan being revised or reviewed, and how it
// ended.
type StepOutcome struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Tool   string          `json:"tool,omitempty"`
	Title  string          `json:"title,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Result string          `json:"result,omitempty"` // its output (head and tail), or its error
	// State, Exit and Score say how it ended, for a review: done or
	// failed, its exit code, the critic's score.
	State string   `json:"state,omitempty"`
	Exit  *int     `json:"exit,omitempty"`
	Score *float64 `json:"score,omitempty"`
}

// Call records one request to a planning model and what came back: the
// runtime keeps it with the run, so each attempt can be shown and the next
// one differs from it.
type Call struct {
	Model   string         `json:"model"`
	Attempt int            `json:"attempt"`
	Options map[string]any `json:"options,omitempty"`
	Answer  string         `json:"answer"` // cut to a few KB
	// Normalised lists what ducklm corrected in the answer before using
	// it, where the meaning was unambiguous (a confidence of 4 taken as 1).
	Normalised []string `json:"normalised,omitempty"`
	// Unstreamed says the answer's stream was cut and it was asked again
	// without streaming.
	Unstreamed bool `json:"unstreamed,omitempty"`
}

// Where a plan came from, in PlanPayload.Source.
const (
	SourceExplicit = "explicit"  // the user gave the graph
	SourceOneLiner = "one-liner" // the task was "$ command" or "!command"
	SourceModel    = "model"     // a model planned it
)

// PlanPayload is the payload of a plan decision.
type PlanPayload struct {
	Graph  backend.TaskGraph `json:"graph"`
	Source string            `json:"source"`
	Model  string            `json:"model,omitempty"`
	Call   *Call             `json:"call,omitempty"` // set when a model planned
}

// RespondPayload is the payload of a respond decision.
type RespondPayload struct {
	Text string `json:"text"`
	// Cites are the steps the answer rests on (a review's answer).
	Cites []string `json:"cites,omitempty"`
	Model string   `json:"model,omitempty"`
	Call  *Call    `json:"call,omitempty"`
}

// ReplanPayload is the payload of a replan decision: the model's answer
// could not be used, and Error says exactly why (it is the Feedback of the
// next attempt).
type ReplanPayload struct {
	Error   string `json:"error"`
	Attempt int    `json:"attempt"`
	Output  string `json:"output"` // the model's answer, cut to a few KB
	Model   string `json:"model,omitempty"`
	Call    *Call  `json:"call,omitempty"`
}

// FailPayload is the payload of a fail decision.
type FailPayload struct {
	Error string `json:"error"`
	// NeedsModel is set when the task could be done with a model: the
	// runtime can pause the run with a "no model" status instead.
	NeedsModel bool  `json:"needs_model,omitempty"`
	Call       *Call `json:"call,omitempty"`
}

// CallOf returns the model call a planner decision records, if any.
func CallOf(d backend.Decision) *Call {
	var p struct {
		Call *Call `json:"call"`
	}
	if json.Unmarshal(d.Payload, &p) != nil {
		return nil
	}
	return p.Call
}

// NeedsModel is the reason Offline gives for a natural-language task.
const NeedsModel = "natural-language tasks need a model: start Ollama (ollama serve) or give an explicit plan"

// Offline plans without a model: explicit plans and shell one-liners (see
// Direct); anything else fails with NeedsModel.
type Offline struct{}

// Plan implements Planner.
func (Offline) Plan(_ context.Context, req Request) (backend.Decision, error) {
	if d, ok := Direct(req); ok {
		return d, nil
	}
	return backend.NewDecision(backend.DecisionFail, FailPayload{Error: NeedsModel, NeedsModel: true}, 1, NeedsModel), nil
}

// Direct returns the decision for a task that needs no reasoning, and
// whether the task was one:
//   - req.Explicit, or a task that is a JSON object with "nodes": that plan;
//   - a task starting with "$ " or "!", e.g. "$ hostnamectl": a one-step
//     shell_exec plan running the rest of the line.
//
// An explicit plan whose shape is wrong fails: asking again cannot fix what
// the user wrote.
func Direct(req Request) (backend.Decision, bool) {
	if req.Review != nil {
		return backend.Decision{}, false // the results need reading, whatever the task's form
	}
	task := strings.TrimLeftFunc(req.Task, unicode.IsSpace)
	switch {
	case req.Explicit != nil:
		g := backend.TaskGraph{Nodes: append([]backend.TaskNode(nil), req.Explicit.Nodes...)}
		normalize(&g)
		data, err := json.Marshal(g)
		if err != nil {
			return fail("the explicit plan cannot be encoded: " + err.Error()), true
		}
		return explicit(data), true
	case strings.HasPrefix(task, "{"):
		var probe map[string]json.RawMessage
		if json.Unmarshal([]byte(task), &probe) != nil || probe["nodes"] == nil {
			return backend.Decision{}, false
		}
		return explicit([]byte(strings.TrimSpace(task))), true
	case strings.HasPrefix(task, "$ "), strings.TrimSpace(task) == "$", strings.HasPrefix(task, "!"):
		cmd := strings.TrimSpace(task[1:])
		if cmd == "" {
			return fail("the shell one-liner has no command after its " + task[:1]), true
		}
		args, _ := json.Marshal(map[string]string{"command": cmd})
		g := backend.TaskGraph{Nodes: []backend.TaskNode{{
			ID: "step-1", Kind: backend.KindToolStep, Tool: "shell_exec",
			Args: args, DependsOn: []string{}, Title: cmd,
		}}}
		return backend.NewDecision(backend.DecisionPlan, PlanPayload{Graph: g, Source: SourceOneLiner}, 1,
			"the task is a shell one-liner"), true
	}
	return backend.Decision{}, false
}

// explicit checks a user's graph against the plan schema's graph part.
func explicit(data []byte) backend.Decision {
	doc, err := decodeJSON(string(data))
	if err != nil {
		return fail("the explicit plan is not valid JSON: " + err.Error())
	}
	why, err := validate(graphSchema, doc)
	if err != nil {
		return fail(err.Error())
	}
	if why != "" {
		return fail("the explicit plan does not match the plan schema: " + why)
	}
	var g backend.TaskGraph
	if err := json.Unmarshal(data, &g); err != nil {
		return fail("the explicit plan cannot be read: " + err.Error())
	}
	normalize(&g)
	return backend.NewDecision(backend.DecisionPlan, PlanPayload{Graph: g, Source: SourceExplicit}, 1,
		"the task is an explicit plan")
}

func fail(reason string) backend.Decision {
	return backend.NewDecision(backend.DecisionFail, FailPayload{Error: reason}, 1, reason)
}

// normalize gives every node the empty values the runtime expects.
func normalize(g *backend.TaskGraph) {
	for i := range g.Nodes {
		if g.Nodes[i].DependsOn == nil {
			g.Nodes[i].DependsOn = []string{}
		}
		if len(g.Nodes[i].Args) == 0 {
			g.Nodes[i].Args = json.RawMessage("{}")
		}
	}
}
