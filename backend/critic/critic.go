package critic

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"ducklm/backend"
)

// Request is one step result to evaluate.
type Request struct {
	Task   string
	Step   backend.TaskNode
	Result backend.ToolResult
	// Stdout and Stderr are the step's output as the runtime kept it; when
	// empty, Result's bytes are used. Either way they are capped here.
	Stdout, Stderr string
	Model          string       // the critic model the router chose; "" for none
	OnToken        func(string) // receives the model's answer as it streams
}

// Where a critique came from.
const (
	SourceModel     = "model"
	SourceHeuristic = "heuristic"
)

// Critique is an evaluation of one step.
type Critique struct {
	Score       float64 `json:"score"` // 0 (useless or failed) to 1 (did what the task needed)
	Explanation string  `json:"explanation"`
	Source      string  `json:"source"`          // SourceModel or SourceHeuristic
	Model       string  `json:"model,omitempty"` // the model that judged, for SourceModel
	// ModelError says why a model critique was not used, when it was wanted.
	ModelError string `json:"model_error,omitempty"`
	// Normalised lists what ducklm mended in the model's answer before
	// using it (a score of 4 taken as 1).
	Normalised []string `json:"normalised,omitempty"`
}

// Decision wraps a critique in the decision contract: a noop (the critic
// asks the runtime to do nothing) whose payload is the critique and whose
// confidence is the score, the critic's confidence that the step served the
// task. The memory policy and the runtime read it; the critic acts on none.
func Decision(c Critique) backend.Decision {
	return backend.NewDecision(backend.DecisionNoop, c, clamp(c.Score), c.Explanation)
}

// outputs returns the step's stdout and stderr, from the request's strings
// or else the result's bytes.
func outputs(req Request) (string, string) {
	stdout, stderr := req.Stdout, req.Stderr
	if stdout == "" {
		stdout = string(req.Result.Stdout)
	}
	if stderr == "" {
		stderr = string(req.Result.Stderr)
	}
	return stdout, stderr
}

// capText keeps the head and tail of s within about n bytes, marking the cut.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return fmt.Sprintf("%s\n…[%d bytes cut]…\n%s", s[:head], start-head, s[start:])
}

// firstLine returns the first non-blank line of s, cut to n bytes.
func firstLine(s string, n int) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > n {
				for n > 0 && !utf8.RuneStart(line[n]) {
					n--
				}
				line = line[:n] + "…"
			}
			return line
		}
	}
	return ""
}

func clamp(x float64) float64 {
	if math.IsNaN(x) || x < 0 {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}
