package router_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/router"
)

func TestNeedsPermission(t *testing.T) {
	t.Parallel()
	type row struct{ low, medium, high bool }
	tests := []struct {
		mode      router.ApprovalMode
		sandboxed bool
		want      row // for steps that run no process
		wantShell row // for shell and coder steps
	}{
		{router.AskEvery, true, row{true, true, true}, row{true, true, true}},
		{router.AskEvery, false, row{true, true, true}, row{true, true, true}},
		{router.AskRisky, true, row{false, true, true}, row{false, true, true}},
		{router.AskRisky, false, row{false, true, true}, row{true, true, true}},
		{router.AutoSandboxed, true, row{false, false, true}, row{false, false, true}},
		{router.AutoSandboxed, false, row{true, true, true}, row{true, true, true}},
		{"", true, row{true, true, true}, row{true, true, true}},
		{"yolo", true, row{true, true, true}, row{true, true, true}},
	}
	for _, tt := range tests {
		for _, shell := range []bool{false, true} {
			want := tt.want
			if shell {
				want = tt.wantShell
			}
			for level, w := range map[router.Level]bool{router.Low: want.low, router.Medium: want.medium, router.High: want.high} {
				name := fmt.Sprintf("%s/sandboxed=%v/shell=%v/%s", tt.mode, tt.sandboxed, shell, level)
				a := router.Assessment{Level: level, Shell: shell}
				require.Equal(t, w, router.NeedsPermission(tt.mode, a, tt.sandboxed), name)
			}
		}
	}
}

func TestNeedsPermissionUnknownLevelIsHigh(t *testing.T) {
	t.Parallel()
	require.True(t, router.NeedsPermission(router.AutoSandboxed, router.Assessment{}, true))
	require.True(t, router.NeedsPermission(router.AutoSandboxed, router.Assessment{Level: 9}, true))
}

// TestNeedsPermissionFromRisk ties the two policies together on real steps.
func TestNeedsPermissionFromRisk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool      string
		command   string
		mode      router.ApprovalMode
		sandboxed bool
		want      bool
	}{
		{router.ToolFileRead, "", router.AskRisky, true, false},
		{router.ToolFileWrite, "", router.AskRisky, true, true},
		{router.ToolFileWrite, "", router.AutoSandboxed, true, false},
		{router.ToolShell, "ls", router.AutoSandboxed, true, false},
		{router.ToolShell, "ls", router.AutoSandboxed, false, true},
		{router.ToolShell, "ls", router.AskRisky, true, true},
		{router.ToolShell, "curl x", router.AutoSandboxed, true, true},
		{router.ToolCoder, "", router.AutoSandboxed, true, true},
		{router.ToolWorldSim, "", router.AutoSandboxed, true, false},
		{router.ToolWorldSim, "", router.AskEvery, true, true},
	}
	for _, tt := range tests {
		a := router.Risk(tt.tool, cmd(tt.command), tt.sandboxed)
		require.Equal(t, tt.want, router.NeedsPermission(tt.mode, a, tt.sandboxed), "%s %q %s sandboxed=%v", tt.tool, tt.command, tt.mode, tt.sandboxed)
	}
}
