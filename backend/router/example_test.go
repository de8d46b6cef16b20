package router_test

import (
	"encoding/json"
	"fmt"

	"ducklm/backend"
	"ducklm/backend/router"
)

func ExampleRoute() {
	s := router.State{
		Phase: router.PhaseExecuting, HasGraph: true, ApprovalMode: router.AutoSandboxed, Sandboxed: true, MaxReplans: 2,
		Ready: []router.ReadyStep{{Node: backend.TaskNode{
			ID: "step-1", Kind: backend.KindToolStep, Tool: router.ToolShell,
			Args: json.RawMessage(`{"command": "curl -s https://example.com"}`),
		}}},
	}
	d := router.Route(s, router.Context{})
	fmt.Println(d.Type, d.RequiresPermission)
	fmt.Println(d.Reason)
	// Output:
	// request_permission true
	// Step "step-1" needs approval in mode auto_sandboxed: the command reaches the network (curl), which rule network rates high risk.
}

func ExampleRisk() {
	a := router.Risk(router.ToolShell, json.RawMessage(`{"command": "sudo rm -rf /tmp/x"}`), true)
	fmt.Println(a.Level, a.Rule)
	fmt.Println(a.Why)
	// Output:
	// high destructive
	// the command can destroy data (rm -r) and asks for more privilege (sudo)
}
