package router

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"ducklm/backend"
)

// The rules that close the loop: a run reads its own results before it
// ends (review), a failed step that is safe to repeat runs again (retry),
// the critic's low score counts as a failure (critic_low), and a step
// planned after the run read outside content asks sooner (after_untrusted).
const (
	RuleReview         = "review"
	RuleReviewBound    = "review_bound"
	RuleRetry          = "retry"
	RuleCriticLow      = "critic_low"
	RuleAfterUntrusted = "after_untrusted"
)

// ReviewPayload is the payload of a review decision: the orchestrator (the
// planning model) reads what the steps did and answers the task, adds
// steps, or gives up.
type ReviewPayload struct {
	Model string `json:"model"`
	// Round is the review round the decision opens, or continues when
	// Resume is set.
	Round  int  `json:"round"`
	Resume bool `json:"resume,omitempty"`
}

// RetryPayload is the payload of a retry decision.
type RetryPayload struct {
	Step string `json:"step"`
	// Attempt is the attempt that failed (1 for the first run).
	Attempt int `json:"attempt"`
	// DelayMS is the backoff before the step starts again.
	DelayMS int64  `json:"delay_ms"`
	Rule    string `json:"rule"`
}

// RetryDelayMS is the backoff after a step's attempt-th run failed:
// 0.5 s, 2 s, 4.5 s, … (attempt² × 0.5 s).
func RetryDelayMS(attempt int) int64 { return int64(attempt*attempt) * 500 }

// review decides what happens when a run that ends with a review has no
// step left to run: a review round, or the end at its bound. resume says a
// round is already open (ducklm stopped in it).
func review(s State, c Context, resume bool) backend.Decision {
	if !resume && s.Reviews >= s.MaxReviews {
		return fail(FailPayload{Cause: CauseReviewBound, Steps: doneIDs(s.Done), Rule: RuleReviewBound},
			fmt.Sprintf("The run ends without an answer: it reviewed its results %d %s, its limit, and each review asked for more steps. "+
				"Done: %s. Not done: an answer to the task. Fork the run at its last checkpoint to go on, "+
				"or allow more reviews (--max-reviews, or Settings → Runs).",
				s.Reviews, plural(s.Reviews, "time"), doneList(s.Done)))
	}
	model, ok := PickModel(RolePlanner, c.AvailableModels, c.Settings)
	if !ok {
		// The run waits for a model to answer it, as a task with none to
		// plan it does; resumed, it is reviewed.
		return fail(FailPayload{Cause: CauseNoModel, Steps: doneIDs(s.Done), NeedsModel: true},
			"Every step of the plan is done, but no planning model is available to read the results and answer the task. "+
				"Start Ollama with a model and resume the run.")
	}
	if resume {
		return decide(backend.DecisionReview, ReviewPayload{Model: model, Round: s.Reviews, Resume: true},
			fmt.Sprintf("The results were being reviewed, so %s is asked again (review %d of %d).", model, s.Reviews, s.MaxReviews))
	}
	return decide(backend.DecisionReview, ReviewPayload{Model: model, Round: s.Reviews + 1},
		fmt.Sprintf("Every step of the plan is done, so %s reads their results to answer the task (review %d of %d).",
			model, s.Reviews+1, s.MaxReviews))
}

func doneIDs(done []DoneStep) []string {
	ids := make([]string, len(done))
	for i, d := range done {
		ids[i] = d.ID
	}
	return ids
}

// doneList names the finished steps: "step-1 (read the page), step-2".
func doneList(done []DoneStep) string {
	if len(done) == 0 {
		return "no step finished"
	}
	parts := make([]string, len(done))
	for i, d := range done {
		parts[i] = d.ID
		if t := strings.TrimSpace(d.Title); t != "" {
			parts[i] += " (" + t + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// retry decides to run a failed step again when its result says that is
// safe and it has retries left: the first such step in id order.
func retry(s State) (backend.Decision, bool) {
	for _, id := range slices.Sorted(maps.Keys(s.Retryable)) {
		attempt := s.Retryable[id]
		if attempt > s.MaxRetries || slices.Contains(s.Denied, id) {
			continue
		}
		delay := RetryDelayMS(attempt)
		why := s.Errors[id]
		if why == "" {
			why = "failed"
		}
		return decide(backend.DecisionRetry, RetryPayload{Step: id, Attempt: attempt, DelayMS: delay, Rule: RuleRetry},
			fmt.Sprintf("Step %q %s and is safe to run again, so it runs again after %s (retry %d of %d).",
				id, why, seconds(delay), attempt, s.MaxRetries)), true
	}
	return backend.Decision{}, false
}

func seconds(ms int64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

// withLowScores returns s with each finished step of a model's plan that
// the critic scored below the run's threshold counted as failed (the
// critic suggests; this rule decides), and the steps that depend on one no
// longer ready. s itself is not changed.
func withLowScores(s State) State {
	if s.UserPlan || s.CriticThreshold <= 0 {
		return s
	}
	var low []DoneStep
	done := make([]DoneStep, 0, len(s.Done))
	for _, d := range s.Done {
		if d.HasScore && d.Score < s.CriticThreshold {
			low = append(low, d)
		} else {
			done = append(done, d)
		}
	}
	if len(low) == 0 {
		return s
	}
	s.Done = done
	s.Failed = slices.Clone(s.Failed)
	s.Errors = maps.Clone(s.Errors)
	if s.Errors == nil {
		s.Errors = map[string]string{}
	}
	lowIDs := doneIDs(low)
	for _, d := range low {
		s.Failed = append(s.Failed, d.ID)
		s.Errors[d.ID] = fmt.Sprintf("the critic scored it %.2f, below the run's threshold of %.2f", d.Score, s.CriticThreshold)
	}
	var ready []ReadyStep
	for _, r := range s.Ready {
		if !slices.ContainsFunc(r.Node.DependsOn, func(dep string) bool { return slices.Contains(lowIDs, dep) }) {
			ready = append(ready, r)
		}
	}
	s.Ready = ready
	return s
}

// afterUntrusted rates a step planned after outside content one level
// higher: such content may have been written to steer the model.
func afterUntrusted(a Assessment, sources []string) Assessment {
	a.Level = min(a.Level.normal()+1, High)
	a.Rule = RuleAfterUntrusted
	a.Why += ", and it was planned after the run read " + strings.Join(sources, ", ")
	return a
}
