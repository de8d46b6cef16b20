// Package mcp_test drives a real MCP client — the official TypeScript SDK
// (@modelcontextprotocol/sdk, installed with npm ci from this folder's lock
// file) — against the ducklm binary's `ducklm mcp serve`.
package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/mcp"
	"ducklm/backend/service"
	"ducklm/tests/internal/npmci"
)

// need returns the path of a program the test cannot run without: in CI
// (CI set) its absence fails the test, elsewhere it skips it.
func need(t *testing.T, name, why string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: %s (make deps installs it)", name, why)
		}
		t.Skipf("%s is missing: %s", name, why)
	}
	return path
}

// ducklmBin is $DUCKLM_BIN, or the ducklm binary built from this checkout.
func ducklmBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DUCKLM_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "ducklm")
	build := exec.Command("go", "build", "-tags", "webkit2_41", "-o", bin, ".")
	build.Dir = "../.."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ducklm:\n%s", out)
	return bin
}

// npmCI installs this folder's packages (the TypeScript SDK, the MCP
// servers) from its lock file.
func npmCI(t *testing.T) {
	t.Helper()
	npmci.Install(t, ".", "the TypeScript SDK and the MCP servers")
}

// clientSaw is what client.mjs prints on its last line.
type clientSaw struct {
	Server struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Instructions string   `json:"instructions"`
	Tools        []string `json:"tools"`
	World        struct {
		WorldID string `json:"worldId"`
		RunID   string `json:"runId"`
	} `json:"world"`
	Fork struct {
		RunID string `json:"runId"`
	} `json:"fork"`
	Task struct {
		RunID        string `json:"runId"`
		ApprovalMode string `json:"approvalMode"`
		Note         string `json:"note"`
	} `json:"task"`
	Runs         int    `json:"runs"`
	BadError     string `json:"badError"`
	Deliberation string `json:"deliberation"`
	Progress     int    `json:"progress"`
}

// TestTheTypeScriptSDKListsAndCallsTheToolsOfMCPServe: the official
// TypeScript client starts `ducklm mcp serve`, lists its tools (taking
// their input and output schemas), creates, runs, forks and compares a
// world, reads it as a resource, submits a task, gets a bad argument's
// sentence, and cancels a deliberation after its progress; every call is
// on the ledger under the client's name.
func TestTheTypeScriptSDKListsAndCallsTheToolsOfMCPServe(t *testing.T) {
	node := need(t, "node", "the official TypeScript MCP client runs on it")
	npmCI(t)
	bin := ducklmBin(t)
	home := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", bin)
	cmd.Env = append(os.Environ(), "DUCKLM_HOME="+home, "OLLAMA_HOST=127.0.0.1:1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node client.mjs:\n%s\n%s", stdout.String(), stderr.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var saw clientSaw
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &saw), stdout.String())

	require.Equal(t, "ducklm", saw.Server.Name)
	require.Equal(t, backend.Version, saw.Server.Version)
	require.Contains(t, saw.Instructions, "no tool approves or denies")
	require.Equal(t, []string{"create_world", "deliberate", "diff_runs", "export_bundle", "fork_world", "list_runs", "list_worlds",
		"run_answer", "run_events", "run_status", "run_world", "submit_task", "world_detail"}, saw.Tools)
	require.NoError(t, backend.CheckID(saw.Task.RunID, backend.KindRun))
	require.Contains(t, saw.Task.Note, "can never approve")
	require.Equal(t, 1, saw.Runs)
	require.Contains(t, saw.BadError, `"nope" is not a ducklm id`)
	require.GreaterOrEqual(t, saw.Progress, 2)
	require.Contains(t, saw.Deliberation, "rejected", "the client aborted the deliberation")

	// The client has gone and `ducklm mcp serve` with it: the data
	// directory is free, and holds the record of every call.
	svc, err := service.Open(context.Background(), home)
	require.NoError(t, err)
	defer svc.Close()
	events, err := svc.Ledger.Query(context.Background(), backend.EventQuery{Types: []string{mcp.EventCall}})
	require.NoError(t, err)
	tools := map[string]int{}
	var ids []string
	for _, e := range events {
		require.NoError(t, backend.CheckID(e.Stream, backend.KindMCP))
		var c mcp.Call
		require.NoError(t, json.Unmarshal(e.Payload, &c))
		require.Equal(t, "ts-sdk-client", c.Client)
		require.Equal(t, "1.0.0", c.ClientVersion)
		require.Equal(t, mcp.TransportStdio, c.Transport)
		tools[c.Tool+c.URI]++
		ids = append(ids, c.IDs...)
	}
	require.Equal(t, map[string]int{"create_world": 1, "run_world": 1, "fork_world": 1, "diff_runs": 1, "submit_task": 1,
		"run_status": 2, "list_runs": 1, "deliberate": 1, "ducklm://world/" + saw.World.WorldID: 1}, tools)
	require.Contains(t, ids, saw.Fork.RunID)
	require.Contains(t, ids, saw.Task.RunID)
}
