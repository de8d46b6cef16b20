package tool

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/bwrap"
)

var _ backend.Tool = (*Shell)(nil)

// sandboxAvailable is bwrap.Available; tests replace it to play a machine
// without bubblewrap.
var sandboxAvailable = bwrap.Available

// SandboxMode says what Shell does when bubblewrap cannot run here.
type SandboxMode int

const (
	// RequireSandbox refuses the call with EUNAVAILABLE. It is the zero
	// value, so a Shell nobody configured never runs unsandboxed.
	RequireSandbox SandboxMode = iota
	// AllowUnsandboxed runs the command without isolation (same limits,
	// no confinement). The runtime picks it only for a call a person
	// approved knowing there is no sandbox.
	AllowUnsandboxed
)

// Shell runs a shell command in the call's workspace: under bubblewrap when
// it is available, otherwise only as Sandbox allows.
type Shell struct {
	Sandbox SandboxMode
	// SandboxFrom, when set, gives the mode in Sandbox's place, asked when
	// a command runs: the service probes bubblewrap when a step first
	// needs it, not when it opens the data directory.
	SandboxFrom func() SandboxMode
	// Env is added to the command's minimal environment (PATH, HOME, LANG).
	Env map[string]string
}

const shellSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "shell_exec arguments",
  "type": "object",
  "additionalProperties": false,
  "required": ["command"],
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "A POSIX shell command line, run with /bin/sh -c in the workspace."},
    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 86400, "description": "Stop the command after this many seconds; it cannot exceed the step's time limit."},
    "env": {"type": "object", "maxProperties": 16, "propertyNames": {"pattern": "^[A-Z_][A-Z0-9_]{0,63}$"},
      "additionalProperties": {"type": "string", "maxLength": 65536},
      "description": "Environment variables for the command, by name (upper case). A value may be an earlier step's result, {\"$from\": \"step-1\", \"take\": \"stdout\"}: use it in the command as \"$NAME\", never pasted into the command line."}
  }
}`

// shellOutput is Shell's ToolResult.Output.
type shellOutput struct {
	Signal        string   `json:"signal,omitempty"`
	Enforced      []string `json:"enforced"`
	ChangesCapped bool     `json:"changes_capped,omitempty"` // the workspace has too many files to compare all
}

// Name implements backend.Tool.
func (*Shell) Name() string { return "shell_exec" }

// Description implements backend.Tool.
func (*Shell) Description() string {
	return "Runs one POSIX shell command line with /bin/sh -c, with the run's workspace as the " +
		"current and home folder, and returns its exit code, stdout, stderr and the workspace " +
		"files it added, changed or removed. The command runs in a sandbox: the system's " +
		"programs and libraries are readable, only the workspace is writable, /tmp is private " +
		"and emptied afterwards, there is no network unless the step was approved for it, and " +
		"time, CPU, memory, file size, process count and output are limited; output past the " +
		"limit is dropped and marked truncated. Nothing it starts outlives it. Prefer file_read " +
		"and file_write for reading and writing single files."
}

// ArgsSchema implements backend.Tool.
func (*Shell) ArgsSchema() json.RawMessage { return json.RawMessage(shellSchema) }

// Run implements backend.Tool. A command that fails or times out is a
// result; an error means it could not run (bad args, no sandbox and no
// permission to run without one, cancelled).
func (s *Shell) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	var args struct {
		Command        *string           `json:"command"`
		TimeoutSeconds *int64            `json:"timeout_seconds"`
		Env            map[string]string `json:"env"`
	}
	if err := decodeArgs(s.Name(), call.Args, &args); err != nil {
		return backend.ToolResult{}, err
	}
	if args.Command == nil || *args.Command == "" {
		return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "shell_exec needs a command")
	}
	ws, err := openWorkspace(call)
	if err != nil {
		return backend.ToolResult{}, err
	}
	defer ws.close()
	lim := limits(call)
	if t := args.TimeoutSeconds; t != nil {
		if *t < 1 || *t > 86400 {
			return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "timeout_seconds must be between 1 and 86400")
		}
		// The call may ask for less time than the step allows, never more.
		lim.Timeout = min(lim.Timeout, time.Duration(*t)*time.Second)
	}
	env, err := commandEnv(s.Env, args.Env)
	if err != nil {
		return backend.ToolResult{}, err
	}
	spec := bwrap.Spec{
		Argv:         []string{"/bin/sh", "-c", *args.Command},
		Workspace:    call.Workspace,
		WorkspaceDir: ws.dir,
		Network:      call.Network,
		Limits:       lim,
		Env:          env,
	}
	mode := s.Sandbox
	if s.SandboxFrom != nil {
		mode = s.SandboxFrom()
	}
	_, ok, why := sandboxAvailable()
	if !ok && mode != AllowUnsandboxed {
		return backend.ToolResult{}, backend.Errorf(backend.EUNAVAILABLE,
			"%s; shell commands can only run unsandboxed, with your approval", why)
	}

	before := takeSnapshot(ws.fdPath())
	run := bwrap.Run
	if !ok {
		run = bwrap.RunUnsandboxed
	}
	res, err := run(ctx, spec)
	if err != nil && res.Duration == 0 {
		return backend.ToolResult{}, err // it never ran
	}
	after := takeSnapshot(ws.fdPath())
	out := shellOutput{Signal: res.Signal, Enforced: res.Enforced, ChangesCapped: before.truncated || after.truncated}
	return backend.ToolResult{
		ExitCode:     res.ExitCode,
		Stdout:       res.Stdout,
		Stderr:       res.Stderr,
		Truncated:    res.Truncated,
		TimedOut:     res.TimedOut,
		Duration:     res.Duration,
		FilesChanged: changedFiles(before, after),
		Output:       mustJSON(out),
		Sandboxed:    res.Sandboxed,
	}, err
}

// reservedEnv are the variables a step's "env" may not set: the sandbox's
// own, and those that change how programs load or where they look.
var reservedEnv = map[string]bool{"PATH": true, "HOME": true, "LANG": true, "PWD": true, "SHELL": true, "TMPDIR": true,
	"IFS": true, "ENV": true, "BASH_ENV": true, "PS4": true}

// commandEnv joins a step's own variables to the shell's.
func commandEnv(base, step map[string]string) (map[string]string, error) {
	if len(step) == 0 {
		return base, nil
	}
	out := make(map[string]string, len(base)+len(step))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range step {
		if !envName.MatchString(k) || reservedEnv[k] || strings.HasPrefix(k, "LD_") {
			return nil, backend.Errorf(backend.EINVALID, "shell_exec cannot set the environment variable %q: choose another upper-case name", k)
		}
		if strings.ContainsRune(v, 0) {
			return nil, backend.Errorf(backend.EINVALID, "the environment variable %s holds a NUL byte, which no variable can hold", k)
		}
		out[k] = v
	}
	return out, nil
}

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)
