package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/mcp"
	"ducklm/backend/service"
)

// mcpCommand is one `ducklm mcp` sub-command.
type mcpCommand struct {
	name, args, summary string
	run                 func(env Env, args []string) error
}

var mcpCommands = []mcpCommand{
	{"serve", "", "serve ducklm's runs and worlds to an MCP client over stdin and stdout", runMCPServe},
	{"add", "NAME [--network] [--workspace] [--safe TOOL,…] -- COMMAND [ARGS…]", "add an MCP server ducklm starts in its sandbox: its tools join the catalog as mcp__NAME__TOOL " +
		"(--network lets it reach the network, --workspace lets it write the run's workspace instead of a folder of its own)", runMCPAdd},
	{"add", "NAME --url URL [--private] [--safe TOOL,…]", "add an MCP server reached over streamable HTTP, through web_fetch's host checks " +
		"(--private approves its host's private or loopback addresses)", nil},
	{"ls", "[--json]", "list the MCP servers, how each stands and its tools", runMCPLs},
	{"rm", "NAME", "remove an MCP server", runMCPRm},
	{"test", "NAME [--json]", "start an MCP server afresh and list its tools, or say why it cannot start", runMCPTest},
	{"safe", "NAME TOOL [--off]", "mark a server's tool safe (ask_risky runs its calls without asking), or --off to ask again", runMCPSafe},
}

func init() {
	registerGroup("mcp", "use MCP servers' tools, and serve ducklm to other agents over the Model Context Protocol (ducklm mcp help)", mcpUsage(), runMCP)
}

func mcpUsage() string {
	var b strings.Builder
	b.WriteString("mcp <command> [arguments]\n\nCommands:")
	for _, c := range mcpCommands {
		fmt.Fprintf(&b, "\n  ducklm mcp %s %s\n      %s", c.name, c.args, c.summary)
	}
	b.WriteString("\n\nThe same server answers at /mcp on `ducklm serve`. An MCP client never approves a step: approvals stay at the window and the CLI.")
	return b.String()
}

func runMCP(env Env, args []string) error {
	if len(args) == 0 {
		return usageError("usage: name an mcp command (ducklm mcp help lists them)")
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		fmt.Fprintf(env.Stdout, "usage: ducklm %s\n", mcpUsage())
		return nil
	}
	var run func(Env, []string) error
	var usage strings.Builder
	for _, c := range mcpCommands {
		if c.name != args[0] {
			continue
		}
		fmt.Fprintf(&usage, "usage: ducklm mcp %s\n    %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
		if run == nil {
			run = c.run
		}
	}
	if run != nil {
		if hasHelpFlag(args[1:]) {
			fmt.Fprint(env.Stdout, usage.String())
			return nil
		}
		return run(env, args[1:])
	}
	return usageError("usage: unknown mcp command %q", args[0])
}

// runMCPServe answers one MCP client on stdin and stdout until it closes
// them. It drives the runs it starts, as the window does, so it holds the
// data directory while it serves; its log goes to stderr, since stdout is
// the protocol's.
func runMCPServe(env Env, args []string) error {
	if len(args) > 0 {
		return usageError("usage: mcp serve takes no arguments, but got %q", args[0])
	}
	ctx := env.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	dir, err := service.DataDir()
	if err != nil {
		return err
	}
	lock, err := service.AcquireLock(dir)
	if errors.Is(err, service.ErrLocked) {
		return backend.Wrap(err, backend.ECONFLICT, "%s; an MCP client can reach ducklm over HTTP instead, at the /mcp endpoint `ducklm serve` prints (in place of the window), where the person approves steps in the browser", backend.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := service.OpenWith(ctx, dir, service.Options{Log: log})
	if err != nil {
		return err
	}
	defer svc.Close()
	runCtx, stopRuns := context.WithCancel(ctx)
	defer stopRuns()
	if _, err := svc.StartRuntime(runCtx); err != nil {
		log.Error("resume runs", "err", err)
	}
	facade := api.New(svc, nil, log)
	api.Configure(facade, func() context.Context { return runCtx }, nil)
	srv, err := mcp.New(mcp.Options{API: facade, Service: svc, Transport: mcp.TransportStdio, Log: log})
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot start the MCP server")
	}
	return srv.ServeStdio(ctx, io.NopCloser(env.Stdin), nopWriteCloser{env.Stdout})
}

// nopWriteCloser leaves the process's stdout open when the protocol closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
