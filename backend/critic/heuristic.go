package critic

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Heuristic scores a step without a model, from what the result says about
// itself: a clean exit with output is likely useful, a clean exit without
// output less so, a failure with a clear error message on stderr is likely
// useless, a timeout nearly always is. A cut output costs a little.
type Heuristic struct{}

// hardFailures are stderr phrases that mean the step could not do its work
// at all, rather than finishing with a complaint.
var hardFailures = []string{
	"command not found", "no such file or directory", "permission denied", "not permitted",
	"traceback (most recent call last)", "panic:", "syntax error", "segmentation fault",
	"cannot execute", "killed",
}

// Evaluate scores req.
func (Heuristic) Evaluate(req Request) Critique {
	r := req.Result
	stdout, stderr := outputs(req)
	hasOut := strings.TrimSpace(stdout) != "" || len(r.Output) > 0 || len(r.FilesChanged) > 0
	errLine := firstLine(stderr, 160)

	var score float64
	var why string
	switch {
	case r.TimedOut:
		score = 0.05
		why = "The step timed out, so its result is incomplete at best."
		if r.Duration > 0 {
			why = fmt.Sprintf("The step timed out after %s, so its result is incomplete at best.", r.Duration.Round(time.Millisecond))
		}
	case r.ExitCode != 0 && (r.ExitCode == 126 || r.ExitCode == 127 || hardFailure(stderr)):
		score = 0.1
		why = fmt.Sprintf("The step failed with exit code %d and could not do its work", r.ExitCode)
		if errLine != "" {
			why += fmt.Sprintf(": %q", errLine)
		}
		why += "."
	case r.ExitCode != 0 && errLine != "":
		score = 0.2
		why = fmt.Sprintf("The step failed with exit code %d and reported %q.", r.ExitCode, errLine)
	case r.ExitCode != 0:
		score = 0.3
		why = fmt.Sprintf("The step failed with exit code %d without an error message, so part of its work may have happened.", r.ExitCode)
	case hasOut && errLine != "":
		score = 0.8
		why = fmt.Sprintf("The step succeeded and produced output, with a message on stderr: %q.", errLine)
	case hasOut:
		score = 0.9
		why = "The step succeeded and produced output."
	default:
		score = 0.6
		why = "The step succeeded but produced no output, so there is little to show it did what the task needed."
	}
	if r.Truncated {
		score -= 0.05
		why += " Its output was cut at the output limit, so part of it is missing."
	}
	return Critique{Score: round(clamp(score)), Explanation: why, Source: SourceHeuristic}
}

func hardFailure(stderr string) bool {
	s := strings.ToLower(stderr)
	for _, p := range hardFailures {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// round keeps two decimals, so 0.9-0.05 reads 0.85 and not 0.8500000000000001.
func round(x float64) float64 {
	return math.Round(x*100) / 100
}
