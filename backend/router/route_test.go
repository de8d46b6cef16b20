package router_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/router"
)

func shellStep(id, command string) backend.TaskNode {
	return backend.TaskNode{ID: id, Kind: backend.KindToolStep, Tool: router.ToolShell, Args: cmd(command), DependsOn: []string{}}
}

func toolStep(id, tool, args string) backend.TaskNode {
	return backend.TaskNode{ID: id, Kind: backend.KindToolStep, Tool: tool, Args: json.RawMessage(args), DependsOn: []string{}}
}

func coderStep(id string) backend.TaskNode {
	return backend.TaskNode{ID: id, Kind: backend.KindCoderStep, Args: json.RawMessage(`{"goal": "parse the log"}`)}
}

func ready(n backend.TaskNode) router.ReadyStep { return router.ReadyStep{Node: n} }

func approved(n backend.TaskNode) router.ReadyStep { return router.ReadyStep{Node: n, Approved: true} }

// executing is a run with a graph, executing in mode ask_risky, sandboxed.
func executing(r ...router.ReadyStep) router.State {
	return router.State{
		RunID: "run-1", Task: "check the host", Phase: router.PhaseExecuting, HasGraph: true, Ready: r,
		MaxReplans: 2, ApprovalMode: router.AskRisky, Sandboxed: true, StepsRun: 1, MaxSteps: 50,
	}
}

var online = router.Context{AvailableModels: []string{"llama3.1:8b", "qwen2.5-coder:7b", "nomic-embed-text"}}

func TestRoute(t *testing.T) {
	t.Parallel()
	with := func(s router.State, f func(*router.State)) router.State { f(&s); return s }
	fresh := router.State{RunID: "run-1", Task: "check the host", Phase: router.PhaseNew, MaxReplans: 2,
		ApprovalMode: router.AskRisky, Sandboxed: true}

	tests := []struct {
		name    string
		state   router.State
		ctx     router.Context
		typ     backend.DecisionType
		payload string // JSON, compared semantically
		reason  string // a substring of the reason
	}{
		{"cancelled beats everything", with(executing(ready(shellStep("s1", "ls"))), func(s *router.State) { s.Cancelled = true }), online,
			backend.DecisionFail, `{"cause": "cancelled"}`, "cancelled"},
		{"finished", with(executing(), func(s *router.State) { s.Phase = router.PhaseFinished }), online,
			backend.DecisionNoop, `{}`, "finished"},

		{"plan with a model", fresh, online, backend.DecisionPlan, `{"model": "qwen2.5-coder:7b"}`, "qwen2.5-coder:7b plans it"},
		{"plan with the user's model", fresh, router.Context{AvailableModels: online.AvailableModels,
			Settings: router.Settings{Models: map[router.Role]string{router.RolePlanner: "llama3.1:8b"}}},
			backend.DecisionPlan, `{"model": "llama3.1:8b"}`, "llama3.1:8b"},
		{"the user's model is not installed", fresh, router.Context{AvailableModels: online.AvailableModels,
			Settings: router.Settings{Models: map[router.Role]string{router.RolePlanner: "mistral:7b"}}},
			backend.DecisionPlan, `{"model": "qwen2.5-coder:7b"}`,
			"the chosen planner mistral:7b is not installed in Ollama (ollama pull mistral:7b), so qwen2.5-coder:7b plans it"},
		{"the user's own plan needs no model to plan it", with(fresh, func(s *router.State) { s.UserPlan = true }), online,
			backend.DecisionPlan, `{"model": "qwen2.5-coder:7b"}`, "The task comes with its own plan (an explicit plan or a shell one-liner), so the planner checks it and takes it as it is: no model plans it."},
		{"the user's own plan, offline", with(fresh, func(s *router.State) { s.UserPlan = true }), router.Context{},
			backend.DecisionPlan, `{"model": ""}`, "no model plans it"},
		{"plan offline", fresh, router.Context{}, backend.DecisionPlan, `{"model": ""}`, "offline planner"},
		{"plan offline with only embedders", fresh, router.Context{AvailableModels: []string{"nomic-embed-text"}},
			backend.DecisionPlan, `{"model": ""}`, "offline planner"},
		{"plan again within the bound", with(fresh, func(s *router.State) { s.Replans = 2 }), online,
			backend.DecisionPlan, `{"model": "qwen2.5-coder:7b"}`, "no plan yet"},
		{"no plan past the bound", with(fresh, func(s *router.State) { s.Replans = 3 }), online,
			backend.DecisionFail, `{"cause": "no_plan"}`, "no valid plan after 3 replans"},

		{"replan", with(fresh, func(s *router.State) {
			s.ValidationError = `step "step-2" depends on "step-9", which is not in the plan`
		}), online,
			backend.DecisionReplan, `{"error": "step \"step-2\" depends on \"step-9\", which is not in the plan", "model": "qwen2.5-coder:7b"}`, "replan 1 of 2"},
		{"last replan", with(fresh, func(s *router.State) { s.ValidationError = "bad"; s.Replans = 1 }), online,
			backend.DecisionReplan, `{"error": "bad", "model": "qwen2.5-coder:7b"}`, "replan 2 of 2"},
		{"replans exhausted", with(fresh, func(s *router.State) { s.ValidationError = "bad"; s.Replans = 2 }), online,
			backend.DecisionFail, `{"cause": "invalid_plan", "error": "bad"}`,
			"still invalid after 2 replans by qwen2.5-coder:7b: bad. Try a larger planning model such as qwen2.5:7b (in Settings, or --model planner=qwen2.5:7b), or give an explicit plan."},
		{"a review's answer is replanned as one", with(fresh, func(s *router.State) { s.ValidationError = "bad"; s.Reviewing = true }), online,
			backend.DecisionReplan, `{"error": "bad", "model": "qwen2.5-coder:7b"}`, "The review's answer is invalid, so the planner tries again (replan 1 of 2)."},
		{"a review that never answers says the steps' work is kept", with(fresh, func(s *router.State) {
			s.ValidationError, s.Replans, s.Reviewing = "bad", 2, true
			s.Done = []router.DoneStep{{ID: "s1"}}
		}), online,
			backend.DecisionFail, `{"cause": "invalid_plan", "error": "bad"}`,
			"The review's answer is still invalid after 2 replans by qwen2.5-coder:7b: bad. The steps' results are kept in the run. Try a larger planning model"},
		{"a revision's plan", with(fresh, func(s *router.State) { s.ValidationError, s.Replans, s.Revising = "bad", 2, true }), online,
			backend.DecisionFail, `{"cause": "invalid_plan", "error": "bad"}`, "The revised plan is still invalid after 2 replans"},
		{"no replans allowed", with(fresh, func(s *router.State) { s.ValidationError = "bad"; s.MaxReplans = -1 }), online,
			backend.DecisionFail, `{"cause": "invalid_plan", "error": "bad"}`, "after 0 replans"},

		{"run a low-risk step", executing(ready(toolStep("s1", router.ToolFileRead, `{"path": "a"}`))), online,
			backend.DecisionTool, `{"step": "s1", "tool": "file_read", "network": false}`, `Step "s1" is ready`},
		{"first ready step only", executing(ready(toolStep("s1", router.ToolWorldSim, `{}`)), ready(shellStep("s2", "rm -rf /"))), online,
			backend.DecisionTool, `{"step": "s1", "tool": "world_sim", "network": false}`, `"s1"`},
		{"ask for a medium step in ask_risky", executing(ready(shellStep("s1", "ls -la"))), online,
			backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "shell_exec", "args": {"command": "ls -la"}, "rule": "shell_sandboxed", "risk": "medium", "why": "the command runs in the sandbox", "network": false}`,
			"mode ask_risky: the command runs in the sandbox, which rule shell_sandboxed rates medium risk"},
		{"run it once approved", executing(approved(shellStep("s1", "ls -la"))), online,
			backend.DecisionTool, `{"step": "s1", "tool": "shell_exec", "network": false}`, "shell_exec runs it"},
		{"medium runs unasked in auto_sandboxed", with(executing(ready(shellStep("s1", "ls"))), func(s *router.State) { s.ApprovalMode = router.AutoSandboxed }), online,
			backend.DecisionTool, `{"step": "s1", "tool": "shell_exec", "network": false}`, "ready"},
		{"every shell step asks without a sandbox", with(executing(ready(shellStep("s1", "ls"))), func(s *router.State) {
			s.ApprovalMode = router.AutoSandboxed
			s.Sandboxed = false
		}), online, backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "shell_exec", "args": {"command": "ls"}, "rule": "shell_unsandboxed", "risk": "high", "why": "the command would run without a sandbox", "network": false}`,
			"which rule shell_unsandboxed rates high risk"},
		{"network asks and says so", with(executing(ready(shellStep("s1", "curl -s https://x"))), func(s *router.State) { s.ApprovalMode = router.AutoSandboxed }), online,
			backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "shell_exec", "args": {"command": "curl -s https://x"}, "rule": "network", "risk": "high", "why": "the command reaches the network (curl)", "network": true}`,
			"which rule network rates high risk"},
		{"approved network step runs with network", executing(approved(shellStep("s1", "curl -s https://x"))), online,
			backend.DecisionTool, `{"step": "s1", "tool": "shell_exec", "network": true}`, "ready"},
		{"ask_every asks for a read", with(executing(ready(toolStep("s1", router.ToolFileRead, `{"path": "a"}`))), func(s *router.State) { s.ApprovalMode = router.AskEvery }), online,
			backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "file_read", "args": {"path": "a"}, "rule": "read_only", "risk": "low", "why": "it reads a file in the workspace", "network": false}`,
			"mode ask_every"},
		{"unset mode asks", with(executing(ready(toolStep("s1", router.ToolWorldSim, `{}`))), func(s *router.State) { s.ApprovalMode = "" }), online,
			backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "world_sim", "args": {}, "rule": "simulation", "risk": "low", "why": "it runs a simulated world", "network": false}`,
			"mode unset"},
		{"coder asks even in auto_sandboxed", with(executing(ready(coderStep("c1"))), func(s *router.State) { s.ApprovalMode = router.AutoSandboxed }), online,
			backend.DecisionRequestPermission,
			`{"step": "c1", "kind": "coder", "tool": "coder", "args": {"goal": "parse the log"}, "rule": "generated_code", "risk": "high", "why": "it runs a script a model wrote", "network": false}`,
			"which rule generated_code rates high risk"},
		{"approved coder step", executing(approved(coderStep("c1"))), online,
			backend.DecisionCoder, `{"step": "c1", "tool": "coder", "model": "qwen2.5-coder:7b", "network": false}`, "with qwen2.5-coder:7b"},
		{"approved coder step without a model", executing(approved(coderStep("c1"))), router.Context{},
			backend.DecisionCoder, `{"step": "c1", "tool": "coder", "network": false}`, "no coder model is available"},
		{"in doubt asks again", executing(router.ReadyStep{Node: toolStep("s1", router.ToolFileRead, `{"path": "a"}`), InDoubt: true}), online,
			backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "file_read", "args": {"path": "a"}, "rule": "in_doubt", "risk": "high", "why": "it was running when ducklm stopped and may already have had its effect", "network": false}`,
			"needs a new approval"},
		{"in doubt, approved again", executing(router.ReadyStep{Node: toolStep("s1", router.ToolFileRead, `{}`), InDoubt: true, Approved: true}), online,
			backend.DecisionTool, `{"step": "s1", "tool": "file_read", "network": false}`, "ready"},
		{"unknown tool asks", executing(ready(toolStep("s1", "teleport", `not json`))), online,
			backend.DecisionRequestPermission,
			`{"step": "s1", "kind": "tool", "tool": "teleport", "args": {}, "rule": "unknown_tool", "risk": "high", "why": "tool \"teleport\" is not one the risk policy knows", "network": false}`,
			"unknown_tool"},
		{"a step of no known kind", executing(approved(backend.TaskNode{ID: "x", Kind: "script"})), online,
			backend.DecisionFail, `{"cause": "bad_step", "steps": ["x"]}`, `kind "script"`},

		{"step limit reached with work left", with(executing(approved(shellStep("s1", "ls"))), func(s *router.State) { s.StepsRun = 50 }), online,
			backend.DecisionFail, `{"cause": "step_limit"}`, "limit of 50 steps"},
		{"step limit exceeded", with(executing(), func(s *router.State) { s.StepsRun = 51; s.Running = 1 }), online,
			backend.DecisionFail, `{"cause": "step_limit"}`, "more than its limit of 50"},
		{"step limit reached, all done", with(executing(), func(s *router.State) { s.StepsRun = 50 }), online,
			backend.DecisionComplete, `{}`, "done"},
		{"no step limit", with(executing(approved(shellStep("s1", "ls"))), func(s *router.State) { s.StepsRun = 5000; s.MaxSteps = 0 }), online,
			backend.DecisionTool, `{"step": "s1", "tool": "shell_exec", "network": false}`, "ready"},

		{"waiting for running steps", with(executing(), func(s *router.State) { s.Running = 2; s.Failed = []string{"s1"} }), online,
			backend.DecisionNoop, `{}`, "2 running steps"},
		{"waiting for approval", with(executing(), func(s *router.State) { s.Phase = router.PhaseAwaitingApproval }), online,
			backend.DecisionNoop, `{}`, "approval"},
		{"failed steps, sorted", with(executing(), func(s *router.State) { s.Failed = []string{"s4", "s2"} }), online,
			backend.DecisionFail, `{"cause": "steps_failed", "steps": ["s2", "s4"], "rule": "revisions_used"}`,
			`The run cannot go on: steps "s2" failed, "s4" failed; the run allows no revised plans. Fork the run before the step with an edited plan to try another way.`},

		// The failure rule table, in order.
		{"a failed step is revised", with(executing(), func(s *router.State) {
			s.Failed, s.MaxStepReplans = []string{"s2"}, 1
			s.Errors = map[string]string{"s2": "exited with code 1"}
		}), online, backend.DecisionReplan,
			`{"error": "step \"s2\" failed: exited with code 1", "model": "qwen2.5-coder:7b", "failed": ["s2"], "rule": "revise"}`,
			`Step "s2" failed (exited with code 1), so qwen2.5-coder:7b revises the plan around it, keeping the finished steps (revision 1 of 1).`},
		{"failed steps are revised together", with(executing(), func(s *router.State) {
			s.Failed, s.MaxStepReplans, s.StepReplans = []string{"s4", "s2"}, 2, 1
		}), online, backend.DecisionReplan,
			`{"error": "step \"s2\" failed; step \"s4\" failed", "model": "qwen2.5-coder:7b", "failed": ["s2", "s4"], "rule": "revise"}`,
			`revises the plan around them, keeping the finished steps (revision 2 of 2)`},
		{"denied beats everything", with(executing(), func(s *router.State) {
			s.Failed, s.Denied, s.MaxStepReplans = []string{"s2", "s3"}, []string{"s3"}, 1
		}), online, backend.DecisionFail, `{"cause": "steps_failed", "steps": ["s2", "s3"], "rule": "denied"}`,
			`The run cannot go on: you denied "s3", and ducklm does not plan around a no. Fork the run before the step with an edited plan`},
		{"the user's plan is not rewritten", with(executing(), func(s *router.State) {
			s.Failed, s.UserPlan, s.MaxStepReplans = []string{"s2"}, true, 1
		}), online, backend.DecisionFail, `{"cause": "steps_failed", "steps": ["s2"], "rule": "user_plan"}`,
			`the plan is yours, so ducklm does not rewrite it`},
		{"an open revision goes on", with(executing(), func(s *router.State) {
			s.Failed, s.StepReplans, s.MaxStepReplans, s.Revising = []string{"s2"}, 1, 1, true
		}), online, backend.DecisionReplan, `{"error": "", "model": "qwen2.5-coder:7b"}`,
			"The plan was being revised after failed steps, so qwen2.5-coder:7b is asked for the revised plan again."},
		{"an open revision without a planner", with(executing(), func(s *router.State) {
			s.Failed, s.StepReplans, s.MaxStepReplans, s.Revising = []string{"s2"}, 1, 1, true
		}), router.Context{}, backend.DecisionFail, `{"cause": "steps_failed", "steps": ["s2"], "rule": "no_planner", "needsModel": true}`,
			"no planning model is available to finish it. Start Ollama with a model and resume the run"},
		{"revisions used", with(executing(), func(s *router.State) {
			s.Failed, s.StepReplans, s.MaxStepReplans = []string{"s2"}, 1, 1
		}), online, backend.DecisionFail, `{"cause": "steps_failed", "steps": ["s2"], "rule": "revisions_used"}`,
			`The run cannot go on: step "s2" failed; that was after 1 revised plan, the run's limit. Fork the run`},
		{"no planner to revise", with(executing(), func(s *router.State) {
			s.Failed, s.MaxStepReplans = []string{"s2"}, 1
		}), router.Context{AvailableModels: []string{"nomic-embed-text"}}, backend.DecisionFail,
			`{"cause": "steps_failed", "steps": ["s2"], "rule": "no_planner", "needsModel": true}`,
			`no planning model is available to revise the plan. Start Ollama with a model and resume the run`},
		{"complete", executing(), online, backend.DecisionComplete, `{}`, "Every step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := router.Route(tt.state, tt.ctx)
			require.NoError(t, d.Validate())
			require.Equal(t, tt.typ, d.Type, d.Reason)
			require.JSONEq(t, tt.payload, string(d.Payload))
			require.Equal(t, tt.typ == backend.DecisionRequestPermission, d.RequiresPermission)
			require.Equal(t, 1.0, d.Confidence)
			require.Contains(t, d.Reason, tt.reason)
			require.Regexp(t, `^[A-Z].*\.$`, d.Reason, "a reason is a sentence")
			if d.Type == backend.DecisionRequestPermission {
				var p router.PermissionPayload
				require.NoError(t, json.Unmarshal(d.Payload, &p))
				_, ok := router.RuleByID(p.Rule)
				require.True(t, ok, "the rule %q is in the table", p.Rule)
			}
		})
	}
}

// TestRouteIsPure: the same input gives the same decision, and the input
// is left as it was.
func TestRouteIsPure(t *testing.T) {
	t.Parallel()
	build := func() (router.State, router.Context) {
		s := executing(
			router.ReadyStep{Node: backend.TaskNode{ID: "s1", Kind: "tool", Tool: router.ToolShell, Args: cmd("curl x | sh"), DependsOn: []string{"s0"}, Title: "fetch"}},
			approved(coderStep("c1")),
		)
		s.Failed = []string{"s9"}
		s.ValidationError = ""
		c := router.Context{
			AvailableModels: []string{"zeta", "qwen2.5:7b", "nomic-embed-text", "llama3"},
			Settings:        router.Settings{Models: map[router.Role]string{router.RolePlanner: "llama3:latest", router.RoleCoder: "zeta"}},
		}
		return s, c
	}
	for _, mutate := range []func(*router.State){
		func(*router.State) {},
		func(s *router.State) { s.Ready = s.Ready[1:] },
		func(s *router.State) { s.Ready = nil },
		func(s *router.State) { s.HasGraph = false },
		func(s *router.State) { s.HasGraph = false; s.ValidationError = "bad" },
		// Failed steps decide, in sorted order, without sorting the caller's slice.
		func(s *router.State) { s.Ready = nil; s.Failed = []string{"s9", "s3", "s5"} },
		func(s *router.State) { s.Ready = nil; s.Failed = []string{"s9", "s3"}; s.MaxStepReplans = 1 },
	} {
		s, c := build()
		mutate(&s)
		want := router.Route(s, c)
		for range 20 {
			s2, c2 := build()
			mutate(&s2)
			require.Equal(t, want, router.Route(s2, c2))
			require.Equal(t, s2, s, "Route changed its state")
			require.Equal(t, c2, c, "Route changed its context")
		}
		// And the state it saw is unchanged after the call.
		before, cBefore := build()
		mutate(&before)
		router.Route(s, c)
		require.Equal(t, before, s)
		require.Equal(t, cBefore, c)
	}
}

// TestRouteDoesNotAliasInput: a decision's payload shares no memory with
// the state, so the loop may keep one and change the other.
func TestRouteDoesNotAliasInput(t *testing.T) {
	t.Parallel()
	s := executing(ready(shellStep("s1", "ls -la")))
	d := router.Route(s, online)
	require.Equal(t, backend.DecisionRequestPermission, d.Type)
	s.Ready[0].Node.Args[2] = 'X'
	var p router.PermissionPayload
	require.NoError(t, json.Unmarshal(d.Payload, &p))
	require.JSONEq(t, `{"command": "ls -la"}`, string(p.Args))

	s = executing()
	s.Failed = []string{"s1"}
	d = router.Route(s, online)
	s.Failed[0] = "changed"
	require.JSONEq(t, `{"cause": "steps_failed", "steps": ["s1"], "rule": "revisions_used"}`, string(d.Payload))
}
