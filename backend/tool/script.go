package tool

import (
	"context"
	"encoding/json"

	"ducklm/backend"
	"ducklm/backend/bwrap"
)

// Script runs a script the coder wrote (and a person approved) exactly as a
// shell step runs: in the sandbox, in the run's workspace, with its limits.
// It has no args of its own: the script is fixed when the tool is made.
type Script struct {
	Language string // "sh" or "python"
	Source   string
	Sandbox  SandboxMode
}

var _ backend.Tool = (*Script)(nil)

// NewScript returns the tool that runs one approved script.
func NewScript(language, source string, mode SandboxMode) *Script {
	return &Script{Language: language, Source: source, Sandbox: mode}
}

// Name implements backend.Tool.
func (*Script) Name() string { return "coder" }

// Description implements backend.Tool.
func (*Script) Description() string {
	return "Runs a helper script written by the coder model, after the user approved it, in the sandbox."
}

// ArgsSchema implements backend.Tool.
func (*Script) ArgsSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }

// Run implements backend.Tool.
func (s *Script) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	ws, err := openWorkspace(call)
	if err != nil {
		return backend.ToolResult{}, err
	}
	defer ws.close()
	interpreter := "/bin/sh"
	if s.Language == "python" {
		interpreter = "/usr/bin/python3"
	}
	spec := bwrap.Spec{Script: []byte(s.Source), Interpreter: interpreter, Workspace: call.Workspace,
		WorkspaceDir: ws.dir, Network: call.Network, Limits: limits(call)}
	_, ok, why := sandboxAvailable()
	if !ok && s.Sandbox != AllowUnsandboxed {
		return backend.ToolResult{}, backend.Errorf(backend.EUNAVAILABLE, "%s; scripts can only run unsandboxed, with your approval", why)
	}
	run := bwrap.Run
	if !ok {
		run = bwrap.RunUnsandboxed
	}
	before := takeSnapshot(ws.fdPath())
	res, err := run(ctx, spec)
	if err != nil && res.Duration == 0 {
		return backend.ToolResult{}, err
	}
	after := takeSnapshot(ws.fdPath())
	return backend.ToolResult{
		ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, Truncated: res.Truncated,
		TimedOut: res.TimedOut, Duration: res.Duration, FilesChanged: changedFiles(before, after),
		Output: mustJSON(shellOutput{Signal: res.Signal, Enforced: res.Enforced}), Sandboxed: res.Sandboxed,
	}, err
}
