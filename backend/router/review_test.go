package router_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/router"
)

// reviewed is a run of a model's plan whose steps are all done: it ends
// with a review.
func reviewed(f func(*router.State)) router.State {
	s := executing()
	s.Review, s.MaxReviews = true, 4
	s.Done = []router.DoneStep{{ID: "step-1", Title: "read the page", Score: 0.9, HasScore: true}, {ID: "step-2"}}
	s.CriticThreshold = 0.5
	if f != nil {
		f(&s)
	}
	return s
}

func TestRouteClosesTheLoop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		state   router.State
		ctx     router.Context
		typ     backend.DecisionType
		payload string
		reason  string
	}{
		{"an answered run completes with how it was answered", reviewed(func(s *router.State) {
			s.Answered, s.AnswerReason = true, "tiny answered the task from the results of step-1 (review 1)."
			s.Reviewing = true
		}), online, backend.DecisionComplete, `{}`, "tiny answered the task from the results of step-1 (review 1)."},
		{"a model's plan is reviewed when its steps are done", reviewed(nil), online,
			backend.DecisionReview, `{"model": "qwen2.5-coder:7b", "round": 1}`, "reads their results to answer the task (review 1 of 4)"},
		{"the next review round", reviewed(func(s *router.State) { s.Reviews = 2 }), online,
			backend.DecisionReview, `{"model": "qwen2.5-coder:7b", "round": 3}`, "review 3 of 4"},
		{"an open review round goes on", reviewed(func(s *router.State) { s.Reviews, s.Reviewing = 2, true }), online,
			backend.DecisionReview, `{"model": "qwen2.5-coder:7b", "round": 2, "resume": true}`, "were being reviewed"},
		{"an open review round goes on before ready steps", reviewed(func(s *router.State) {
			s.Reviews, s.Reviewing = 1, true
			s.Ready = []router.ReadyStep{ready(shellStep("s9", "ls"))}
		}), online, backend.DecisionReview, `{"model": "qwen2.5-coder:7b", "round": 1, "resume": true}`, "asked again"},
		{"the review bound ends the run with a sentence", reviewed(func(s *router.State) { s.Reviews = 4 }), online,
			backend.DecisionFail, `{"cause": "review_bound", "steps": ["step-1", "step-2"], "rule": "review_bound"}`,
			"reviewed its results 4 times, its limit, and each review asked for more steps. Done: step-1 (read the page), step-2. Not done: an answer to the task."},
		{"the review bound ends the run with or without a model", reviewed(func(s *router.State) { s.Reviews = 4 }), router.Context{},
			backend.DecisionFail, `{"cause": "review_bound", "steps": ["step-1", "step-2"], "rule": "review_bound"}`,
			"reviewed its results 4 times, its limit"},
		{"no model to go on with an open review: the run waits for one", reviewed(func(s *router.State) { s.Reviews, s.Reviewing = 4, true }),
			router.Context{}, backend.DecisionFail, `{"cause": "no_model", "steps": ["step-1", "step-2"], "needsModel": true}`,
			"no planning model is available to read the results"},
		{"no model to review: the run waits for one", reviewed(nil), router.Context{},
			backend.DecisionFail, `{"cause": "no_model", "steps": ["step-1", "step-2"], "needsModel": true}`,
			"Every step of the plan is done, but no planning model is available to read the results and answer the task. Start Ollama with a model and resume the run"},
		{"a user's plan without review completes", reviewed(func(s *router.State) { s.Review = false }), online,
			backend.DecisionComplete, `{}`, "Every step of the plan is done."},
		{"no reviews allowed", reviewed(func(s *router.State) { s.MaxReviews = 0 }), online,
			backend.DecisionComplete, `{}`, "Every step of the plan is done."},
		{"steps still running wait", reviewed(func(s *router.State) { s.Running = 1 }), online,
			backend.DecisionNoop, `{}`, "Waiting for 1 running step"},

		{"a low critic score is a failure: the plan is revised", reviewed(func(s *router.State) {
			s.Done[0].Score = 0.2
			s.MaxStepReplans = 1
		}), online, backend.DecisionReplan,
			`{"error": "step \"step-1\" failed: the critic scored it 0.20, below the run's threshold of 0.50", "model": "qwen2.5-coder:7b", "failed": ["step-1"], "rule": "revise"}`,
			`Step "step-1" failed (the critic scored it 0.20, below the run's threshold of 0.50)`},
		{"a low score holds back the steps that depend on it", reviewed(func(s *router.State) {
			s.Done = []router.DoneStep{{ID: "step-1", Score: 0.1, HasScore: true}}
			n := shellStep("step-2", "ls")
			n.DependsOn = []string{"step-1"}
			s.Ready = []router.ReadyStep{approved(n)}
			s.MaxStepReplans = 1
		}), online, backend.DecisionReplan,
			`{"error": "step \"step-1\" failed: the critic scored it 0.10, below the run's threshold of 0.50", "model": "qwen2.5-coder:7b", "failed": ["step-1"], "rule": "revise"}`, "revises the plan"},
		{"a user's plan is not judged by its scores", reviewed(func(s *router.State) {
			s.Done[0].Score = 0.1
			s.UserPlan, s.Review = true, false
		}), online, backend.DecisionComplete, `{}`, "Every step of the plan is done."},
		{"no threshold, no judgement", reviewed(func(s *router.State) { s.Done[0].Score, s.CriticThreshold = 0.1, 0 }), online,
			backend.DecisionReview, `{"model": "qwen2.5-coder:7b", "round": 1}`, "review 1 of 4"},

		{"a failed step safe to repeat is retried after a backoff", reviewed(func(s *router.State) {
			s.Failed, s.Errors = []string{"step-2"}, map[string]string{"step-2": "timed out"}
			s.Retryable, s.MaxRetries = map[string]int{"step-2": 2}, 2
		}), online, backend.DecisionRetry, `{"step": "step-2", "attempt": 2, "delay_ms": 2000, "rule": "retry"}`,
			`Step "step-2" timed out and is safe to run again, so it runs again after 2 s (retry 2 of 2).`},
		{"a retry comes before ready steps", reviewed(func(s *router.State) {
			s.Failed, s.Retryable, s.MaxRetries = []string{"step-2"}, map[string]int{"step-2": 1}, 1
			s.Ready = []router.ReadyStep{approved(shellStep("s3", "ls"))}
		}), online, backend.DecisionRetry, `{"step": "step-2", "attempt": 1, "delay_ms": 500, "rule": "retry"}`, "after 0.5 s"},
		{"past its retries a step goes to the failure rules", reviewed(func(s *router.State) {
			s.Failed, s.Errors = []string{"step-2"}, map[string]string{"step-2": "timed out"}
			s.Retryable, s.MaxRetries = map[string]int{"step-2": 3}, 2
			s.MaxStepReplans = 0
		}), online, backend.DecisionFail, `{"cause": "steps_failed", "steps": ["step-2"], "rule": "revisions_used"}`, "allows no revised plans"},

		{"a shell step planned after a web page asks in auto mode", func() router.State {
			s := executing(router.ReadyStep{Node: shellStep("s1", "ls"), Untrusted: []string{"the web page https://ducks.example/"}})
			s.ApprovalMode = router.AutoSandboxed
			return s
		}(), online, backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "shell_exec", "args": {"command": "ls"}, "rule": "after_untrusted", "risk": "high",
			  "why": "the command runs in the sandbox, and it was planned after the run read the web page https://ducks.example/", "network": false,
			  "untrusted": ["the web page https://ducks.example/"]}`,
			"which rule after_untrusted rates high risk"},
		{"the same step runs unasked when nothing outside was read", func() router.State {
			s := executing(ready(shellStep("s1", "ls")))
			s.ApprovalMode = router.AutoSandboxed
			return s
		}(), online, backend.DecisionTool, `{"step": "s1", "tool": "shell_exec", "network": false}`, "ready"},
		{"a read planned after a page asks in ask_risky", executing(router.ReadyStep{
			Node: toolStep("s1", router.ToolFileRead, `{"path": "a"}`), Untrusted: []string{"the web page https://x.example/"}}), online,
			backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "file_read", "args": {"path": "a"}, "rule": "after_untrusted", "risk": "medium",
			  "why": "it reads a file in the workspace, and it was planned after the run read the web page https://x.example/", "network": false,
			  "untrusted": ["the web page https://x.example/"]}`, "medium risk"},
		{"an approved step planned after a page runs", executing(router.ReadyStep{Node: shellStep("s1", "ls"), Approved: true,
			Untrusted: []string{"the web page https://x.example/"}}), online,
			backend.DecisionTool, `{"step": "s1", "tool": "shell_exec", "network": false}`, "ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before, _ := json.Marshal(tt.state)
			d := router.Route(tt.state, tt.ctx)
			require.NoError(t, d.Validate())
			require.Equal(t, tt.typ, d.Type, d.Reason)
			require.JSONEq(t, tt.payload, string(d.Payload))
			require.Contains(t, d.Reason, tt.reason)
			require.EqualValues(t, 1, d.Confidence)
			after, _ := json.Marshal(tt.state)
			require.JSONEq(t, string(before), string(after), "the router changed its input")
		})
	}
}
