package router_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/router"
)

// TestMCPCallsAskInRiskyModeUnlessMarkedSafe: an MCP server's tool is
// medium risk (so ask_risky asks), low once the user marked it safe, high
// when it reaches the network; the server's readOnlyHint changes nothing.
func TestMCPCallsAskInRiskyModeUnlessMarkedSafe(t *testing.T) {
	t.Parallel()
	step := func(tool string) router.State {
		return router.State{RunID: "r", Phase: router.PhaseExecuting, HasGraph: true, ApprovalMode: router.AskRisky, Sandboxed: true,
			Ready: []router.ReadyStep{{Node: backend.TaskNode{ID: "s1", Kind: backend.KindToolStep, Tool: tool, Args: json.RawMessage(`{"path":"/x"}`)}}}}
	}
	for _, tt := range []struct {
		name string
		mcp  backend.MCPTool
		mode router.ApprovalMode
		want backend.DecisionType
		rule string
	}{
		{"plain", backend.MCPTool{Server: "fs", Tool: "read"}, router.AskRisky, backend.DecisionRequestPermission, router.RuleMCP},
		{"read-only hint", backend.MCPTool{Server: "fs", Tool: "read", ReadOnlyHint: true}, router.AskRisky, backend.DecisionRequestPermission, router.RuleMCP},
		{"safe", backend.MCPTool{Server: "fs", Tool: "read", Safe: true}, router.AskRisky, backend.DecisionTool, ""},
		{"safe asks every", backend.MCPTool{Server: "fs", Tool: "read", Safe: true}, router.AskEvery, backend.DecisionRequestPermission, router.RuleMCPSafe},
		{"auto", backend.MCPTool{Server: "fs", Tool: "read"}, router.AutoSandboxed, backend.DecisionTool, ""},
		{"network", backend.MCPTool{Server: "web", Tool: "get", Network: true}, router.AutoSandboxed, backend.DecisionRequestPermission, router.RuleMCPNetwork},
		{"network safe", backend.MCPTool{Server: "web", Tool: "get", Network: true, Safe: true}, router.AskRisky, backend.DecisionTool, ""},
	} {
		name := "mcp__" + tt.mcp.Server + "__" + tt.mcp.Tool
		s := step(name)
		s.ApprovalMode = tt.mode
		s.MCP = map[string]backend.MCPTool{name: tt.mcp}
		d := router.Route(s, router.Context{})
		require.Equal(t, tt.want, d.Type, tt.name)
		if tt.rule != "" {
			var p router.PermissionPayload
			require.NoError(t, json.Unmarshal(d.Payload, &p))
			require.Equal(t, tt.rule, p.Rule, tt.name)
			require.Equal(t, json.RawMessage(`{"path":"/x"}`), p.Args, tt.name)
		}
	}
	// A server's tool the router was told nothing of is unknown: high.
	d := router.Route(step("mcp__gone__read"), router.Context{})
	var p router.PermissionPayload
	require.NoError(t, json.Unmarshal(d.Payload, &p))
	require.Equal(t, router.RuleUnknownTool, p.Rule)
}
