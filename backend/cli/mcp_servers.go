package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"ducklm/backend"
	"ducklm/backend/mcpclient"
	"ducklm/backend/service"
	"ducklm/backend/settings"
)

// The `ducklm mcp` commands about the MCP servers whose tools ducklm uses.
// They read and write the data directory's mcp-servers.json and start the
// servers (in the sandbox) only to list their tools; they take no lock, so
// they work while the window runs (its catalog follows the file).

// mcpManager returns a manager on the data directory, made if need be.
func mcpManager() (*mcpclient.Manager, error) {
	dir, err := service.DataDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot make the data directory %s", dir)
	}
	return mcpclient.New(mcpclient.Options{Dir: dir}), nil
}

func mcpCtx(env Env) context.Context {
	if env.Ctx != nil {
		return env.Ctx
	}
	return context.Background()
}

// mcpFlags is a flag set that prints nothing: errors become sentences.
func mcpFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("mcp "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			*l = append(*l, t)
		}
	}
	return nil
}

func runMCPAdd(env Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usageError("usage: mcp add NAME -- COMMAND [ARGS…], or mcp add NAME --url URL: name the server first")
	}
	name := args[0]
	rest := args[1:]
	var command []string
	for i, a := range rest {
		if a == "--" {
			command, rest = rest[i+1:], rest[:i]
			break
		}
	}
	fs := mcpFlags("add")
	u := fs.String("url", "", "")
	network := fs.Bool("network", false, "")
	workspace := fs.Bool("workspace", false, "")
	private := fs.Bool("private", false, "")
	var safe listFlag
	fs.Var(&safe, "safe", "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(rest); err != nil {
		return usageError("usage: mcp add: %v", err)
	}
	if fs.NArg() > 0 {
		return usageError("usage: mcp add: %q is not a flag; put the server's command after --, as in ducklm mcp add %s -- npx-free-command ARGS", fs.Arg(0), name)
	}
	cfg := settings.MCPServer{Name: name, URL: *u, Network: *network, Workspace: *workspace, Private: *private}
	switch {
	case len(command) > 0 && *u != "":
		return usageError("usage: mcp add %s: give a command after -- or --url, not both", name)
	case len(command) > 0:
		cfg.Command, cfg.Args = command[0], command[1:]
	case *u == "":
		return usageError("usage: mcp add %s: give the server's command after --, or its --url", name)
	}
	m, err := mcpManager()
	if err != nil {
		return err
	}
	defer m.Close()
	ctx := mcpCtx(env)
	st, err := m.Add(ctx, cfg)
	if err != nil {
		return err
	}
	for _, tool := range safe {
		if st, err = m.MarkSafe(ctx, name, tool, true); err != nil {
			return fmt.Errorf("added MCP server %s, but %s", name, backend.ErrorMessage(err))
		}
	}
	if *asJSON {
		return printJSON(env.Stdout, st)
	}
	fmt.Fprintf(env.Stdout, "added MCP server %s\n", name)
	printServer(env.Stdout, st)
	if st.State != "ready" {
		fmt.Fprintf(env.Stdout, "It is kept: fix it and run ducklm mcp test %s, or remove it with ducklm mcp rm %s.\n", name, name)
		return errExit{ExitFail}
	}
	return nil
}

func runMCPLs(env Env, args []string) error {
	fs := mcpFlags("ls")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil {
		return usageError("usage: mcp ls [--json]: %v", err)
	}
	if fs.NArg() > 0 {
		return usageError("usage: mcp ls takes no arguments, but got %q", fs.Arg(0))
	}
	m, err := mcpManager()
	if err != nil {
		return err
	}
	defer m.Close()
	all, err := m.Servers(mcpCtx(env))
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, all)
	}
	if len(all) == 0 {
		fmt.Fprintln(env.Stdout, "No MCP server is added. Add one with ducklm mcp add NAME -- COMMAND [ARGS…] or ducklm mcp add NAME --url URL.")
		return nil
	}
	for i, s := range all {
		if i > 0 {
			fmt.Fprintln(env.Stdout)
		}
		printServer(env.Stdout, s)
	}
	return nil
}

func runMCPRm(env Env, args []string) error {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return usageError("usage: mcp rm NAME")
	}
	m, err := mcpManager()
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Remove(mcpCtx(env), args[0]); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "removed MCP server %s\n", args[0])
	return nil
}

func runMCPTest(env Env, args []string) error {
	fs := mcpFlags("test")
	asJSON := fs.Bool("json", false, "")
	name, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, rest = args[0], args[1:]
	}
	if err := fs.Parse(rest); err != nil || name == "" || fs.NArg() > 0 {
		return usageError("usage: mcp test NAME [--json]")
	}
	m, err := mcpManager()
	if err != nil {
		return err
	}
	defer m.Close()
	st, terr := m.Test(mcpCtx(env), name)
	if backend.ErrorCode(terr) == backend.ENOTFOUND && st.Name == "" {
		return terr
	}
	if *asJSON {
		if err := printJSON(env.Stdout, st); err != nil {
			return err
		}
	} else {
		printServer(env.Stdout, st)
	}
	if terr != nil {
		return errExit{ExitFail}
	}
	return nil
}

func runMCPSafe(env Env, args []string) error {
	fs := mcpFlags("safe")
	off := fs.Bool("off", false, "")
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return usageError("usage: mcp safe NAME TOOL [--off]: %v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 2 {
		return usageError("usage: mcp safe NAME TOOL [--off]")
	}
	m, err := mcpManager()
	if err != nil {
		return err
	}
	defer m.Close()
	st, err := m.MarkSafe(mcpCtx(env), pos[0], pos[1], !*off)
	if err != nil {
		return err
	}
	if *off {
		fmt.Fprintf(env.Stdout, "%s of MCP server %s asks again in ask_risky mode\n", pos[1], pos[0])
	} else {
		fmt.Fprintf(env.Stdout, "%s of MCP server %s is marked safe: in ask_risky mode its calls run without asking\n", pos[1], pos[0])
	}
	_ = st
	return nil
}

// printServer says how one server stands and what tools it has.
func printServer(w io.Writer, s mcpclient.ServerStatus) {
	what := s.URL
	if s.Stdio() {
		what = strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	fmt.Fprintf(w, "%s  %s  %s\n", s.Name, s.State, what)
	var reach []string
	switch {
	case !s.Stdio() && s.Private:
		reach = append(reach, "reached by URL, its private addresses approved")
	case !s.Stdio():
		reach = append(reach, "reached by URL through the host checks of web_fetch")
	default:
		reach = append(reach, "in the sandbox")
		if s.Workspace {
			reach = append(reach, "writes the run's workspace")
		} else {
			reach = append(reach, "writes its own folder only")
		}
		if s.Network {
			reach = append(reach, "network allowed")
		} else {
			reach = append(reach, "no network")
		}
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(reach, ", "))
	if s.Error != "" {
		fmt.Fprintf(w, "  %s\n", s.Error)
	}
	for _, t := range s.Tools {
		var marks []string
		if t.Safe {
			marks = append(marks, "safe")
		}
		if t.ReadOnlyHint {
			marks = append(marks, "the server says read-only")
		}
		m := ""
		if len(marks) > 0 {
			m = " (" + strings.Join(marks, "; ") + ")"
		}
		fmt.Fprintf(w, "  %s%s\n", t.Catalog, m)
	}
	for _, r := range s.Refused {
		fmt.Fprintf(w, "  %s\n", r)
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
