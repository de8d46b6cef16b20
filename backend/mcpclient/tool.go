package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/tool"
)

// Tool is one of an MCP server's tools as a step runs it.
type Tool struct {
	m *Manager
	s *server
	t toolDef
}

var (
	_ backend.Tool      = (*Tool)(nil)
	_ backend.MCPServed = (*Tool)(nil)
	_ backend.Confined  = (*Tool)(nil)
)

// Name implements backend.Tool: mcp__SERVER__TOOL.
func (t *Tool) Name() string { return CatalogName(t.s.config().Name, t.t.name) }

// Description implements backend.Tool: the server's, with where it runs.
func (t *Tool) Description() string {
	cfg := t.s.config()
	where := "in a sandbox without network"
	switch {
	case !cfg.Stdio():
		where = "on a server reached at " + cfg.URL
	case cfg.Network:
		where = "in a sandbox with network access"
	}
	d := t.t.description
	if d == "" {
		d = "(the server describes it no further)"
	}
	return fmt.Sprintf("Tool %s of MCP server %s, which runs %s: %s", t.t.name, cfg.Name, where, d)
}

// ArgsSchema implements backend.Tool: the server's own input schema.
func (t *Tool) ArgsSchema() json.RawMessage { return t.t.schema }

// MCP implements backend.MCPServed.
func (t *Tool) MCP() backend.MCPTool {
	cfg := t.s.config()
	return backend.MCPTool{Server: cfg.Name, Tool: t.t.name, ReadOnlyHint: t.t.readOnly, Safe: t.s.safe(t.t.name),
		Network: !cfg.Stdio() || cfg.Network}
}

// Confinement implements backend.Confined: a command's server runs in the
// sandbox, a URL's is reached through the host checks.
func (t *Tool) Confinement() backend.Confinement {
	if t.s.config().Stdio() {
		return backend.ConfinedSandbox
	}
	return backend.ConfinedHosts
}

// Run implements backend.Tool: one tools/call. An isError answer, a call
// past the step's time (after a cancellation is sent) and a server that
// died during the call are results that fail the step, with a sentence; an
// error means the call could not be made.
func (t *Tool) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	start := time.Now()
	cfg := t.s.config()
	var args map[string]any
	if len(bytes.TrimSpace(call.Args)) > 0 {
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "the args of %s are not a JSON object", t.Name())
		}
	}
	ws := ""
	if cfg.Workspace && cfg.Stdio() {
		ws = call.Workspace
	}
	if ws != "" {
		// Every call, not only a server's start: a server already running
		// holds the folder it was given, but a workspace that is no longer
		// the run's stops the run's calls, as it stops its other steps.
		if err := tool.VerifyWorkspace(ws, call.WorkspaceID); err != nil {
			return backend.ToolResult{}, err
		}
	}
	c, err := t.s.conn(ctx, ws, call.WorkspaceID)
	if err != nil {
		return backend.ToolResult{}, err
	}
	lim := bwrap.FillLimits(call.Limits)
	cctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	c.calls.Add(1)
	res, err := c.session.CallTool(cctx, &mcp.CallToolParams{Name: t.t.name, Arguments: args})
	others := c.calls.Add(-1)
	sandboxed := cfg.Stdio()
	fail := func(msg string, timedOut bool) (backend.ToolResult, error) {
		return backend.ToolResult{ExitCode: 1, TimedOut: timedOut, Stderr: []byte(msg + "\n"), Duration: time.Since(start), Sandboxed: sandboxed,
			Output: mustJSON(output{Server: cfg.Name, Tool: t.t.name, Error: msg})}, nil
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		if others == 0 && cfg.Stdio() {
			// The step was cancelled (the run was, or ducklm is closing):
			// a process no other call uses is stopped with its process
			// group, so nothing it started goes on after the cancel; the
			// next call starts it again.
			t.s.drop(connKey(ws, call.WorkspaceID), c)
			return backend.ToolResult{Duration: time.Since(start)}, backend.Wrap(ctx.Err(), backend.ELIMIT, "the call to %s was cancelled; ducklm stopped MCP server %s, which no other call was using", t.Name(), cfg.Name)
		}
		return backend.ToolResult{Duration: time.Since(start)}, backend.Wrap(ctx.Err(), backend.ELIMIT, "the call to %s was cancelled; ducklm told the server", t.Name())
	case cctx.Err() != nil:
		return fail(fmt.Sprintf("MCP server %s did not answer %s within the step's %s; ducklm sent it a cancellation", cfg.Name, t.t.name, lim.Timeout), true)
	case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || tooLarge(err) || c.endsWithin(time.Second):
		why := c.why(err)
		if tooLarge(err) || strings.Contains(why, "maximum line length") {
			why = fmt.Sprintf("its answer was larger than %d MB, which ducklm does not read", MaxAnswer>>20)
		}
		t.s.drop(connKey(ws, call.WorkspaceID), c)
		return fail(fmt.Sprintf("MCP server %s stopped during the call to %s (%s); it starts again for the next call", cfg.Name, t.t.name, why), false)
	default:
		return fail(fmt.Sprintf("MCP server %s refused the call to %s: %s", cfg.Name, t.t.name, err), false)
	}
	out, err := t.m.result(ctx, cfg.Name, t.t.name, res, lim)
	if err != nil {
		return backend.ToolResult{}, err
	}
	out.Duration, out.Sandboxed = time.Since(start), sandboxed
	return out, nil
}

// tooLarge reports whether err is the SDK's refusal of a message past
// MaxAnswer.
func tooLarge(err error) bool {
	return err != nil && strings.Contains(err.Error(), "maximum line length")
}

func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic("mcpclient: " + err.Error())
	}
	return data
}
