package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/bwrap"
	"ducklm/backend/cli"
	"ducklm/backend/prereq"
)

// TestMCPServerCommandsRefuseBadInputAndWriteNothing: each bad input is a
// sentence and exit 2, and no mcp-servers.json appears; --help is usage
// and exit 0.
func TestMCPServerCommandsRefuseBadInputAndWriteNothing(t *testing.T) {
	dir := home(t)
	notExec := filepath.Join(t.TempDir(), "server.sh")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "add"}, "name the server first"},
		{[]string{"mcp", "add", "Bad Name", "--", "/bin/true"}, "an MCP server's name is 1 to 32 lower-case letters"},
		{[]string{"mcp", "add", "x"}, "give the server's command after --, or its --url"},
		{[]string{"mcp", "add", "x", "--url", "https://a.example/mcp", "--", "/bin/true"}, "give a command after -- or --url, not both"},
		{[]string{"mcp", "add", "x", "--url", "ftp://a.example"}, `the URL of MCP server x must be an http or https URL, not "ftp://a.example"`},
		{[]string{"mcp", "add", "x", "--", "/no/such/server"}, "the command /no/such/server of MCP server x was not found"},
		{[]string{"mcp", "add", "x", "--", notExec}, "of MCP server x is not executable"},
		{[]string{"mcp", "add", "x", "--bogus", "--", "/bin/true"}, "flag provided but not defined: -bogus"},
		{[]string{"mcp", "add", "x", "--url", "https://a.example/mcp", "--network"}, "MCP server x is reached by URL, so it has no network or workspace to allow"},
		{[]string{"mcp", "rm"}, "usage: mcp rm NAME"},
		{[]string{"mcp", "rm", "ghost"}, `there is no MCP server named "ghost" (none is added: ducklm mcp add adds one)`},
		{[]string{"mcp", "test"}, "usage: mcp test NAME"},
		{[]string{"mcp", "test", "ghost"}, `there is no MCP server named "ghost"`},
		{[]string{"mcp", "safe", "ghost"}, "usage: mcp safe NAME TOOL [--off]"},
		{[]string{"mcp", "ls", "extra"}, `mcp ls takes no arguments, but got "extra"`},
	} {
		r := ducklm(t, tt.args...)
		require.Equal(t, cli.ExitUsage, r.code, "%v\nstdout: %s\nstderr: %s", tt.args, r.stdout, r.stderr)
		require.Contains(t, r.stderr, tt.want, "%v", tt.args)
		require.NoFileExists(t, filepath.Join(dir, "mcp-servers.json"), "%v wrote the servers", tt.args)
	}
	for _, args := range [][]string{{"mcp", "add", "--help"}, {"mcp", "ls", "--help"}, {"mcp", "rm", "-h"}, {"mcp", "test", "--help"}, {"mcp", "safe", "--help"}, {"mcp", "help"}} {
		r := ok(t, args...)
		require.Contains(t, r.stdout, "usage: ducklm mcp", "%v", args)
	}
	r := ok(t, "mcp", "add", "--help")
	require.Contains(t, r.stdout, "-- COMMAND [ARGS…]")
	require.Contains(t, r.stdout, "--url URL")
	r = ok(t, "mcp", "ls")
	require.Contains(t, r.stdout, "No MCP server is added.")
}

// TestMCPServerCommandsAddListMarkSafeTestAndRemove: a server is added (it
// starts in the sandbox and lists its tools), listed, one tool marked safe,
// tested, and removed.
func TestMCPServerCommandsAddListMarkSafeTestAndRemove(t *testing.T) {
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "MCP servers run only in the sandbox: %s", why)
	}
	home(t)
	fake := filepath.Join(t.TempDir(), "fakeserver")
	build := exec.Command("go", "build", "-o", fake, "ducklm/tests/mcp/testdata/fakeserver")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	r := ok(t, "mcp", "add", "fake", "--safe", "echo", "--", fake, "ok")
	require.Contains(t, r.stdout, "added MCP server fake\nfake  ready  "+fake+" ok\n  in the sandbox, writes its own folder only, no network\n")
	require.Contains(t, r.stdout, "  mcp__fake__echo (safe; the server says read-only)\n")
	require.Contains(t, r.stdout, "MCP server fake's tool broken was left out")

	r = ducklm(t, "mcp", "add", "fake", "--", fake, "ok")
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stderr, "an MCP server is already named fake; remove it first or choose another name")

	r = ok(t, "mcp", "safe", "fake", "fail")
	require.Equal(t, "fail of MCP server fake is marked safe: in ask_risky mode its calls run without asking\n", r.stdout)
	r = ducklm(t, "mcp", "safe", "fake", "nope")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, `MCP server fake has no tool named "nope" (its tools: echo, big, fail, die, change, slow, long)`)
	r = ok(t, "mcp", "safe", "fake", "echo", "--off")
	require.Contains(t, r.stdout, "echo of MCP server fake asks again")

	r = ok(t, "mcp", "ls")
	require.Contains(t, r.stdout, "  mcp__fake__echo (the server says read-only)\n")
	require.Contains(t, r.stdout, "  mcp__fake__fail (safe)\n")

	r = ok(t, "mcp", "test", "fake")
	require.Contains(t, r.stdout, "fake  ready")

	r = ducklm(t, "mcp", "add", "chatty", "--", fake, "garbage")
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stdout, "MCP server chatty did not start: it did not speak MCP on its standard output")
	require.Contains(t, r.stdout, "It is kept: fix it and run ducklm mcp test chatty, or remove it with ducklm mcp rm chatty.")
	r = ducklm(t, "mcp", "test", "chatty")
	require.Equal(t, cli.ExitFail, r.code)

	ok(t, "mcp", "rm", "chatty")
	r = ok(t, "mcp", "rm", "fake")
	require.Equal(t, "removed MCP server fake\n", r.stdout)
	r = ok(t, "mcp", "ls")
	require.Contains(t, r.stdout, "No MCP server is added.")
}

// TestRunAsksAnMCPCallWithItsServerToolAndHint: ducklm run's approval
// prompt names the MCP server, its tool and what the server says of it,
// with the exact arguments; approved, the call runs in the sandbox.
func TestRunAsksAnMCPCallWithItsServerToolAndHint(t *testing.T) {
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "MCP servers run only in the sandbox: %s", why)
	}
	home(t)
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	fake := filepath.Join(t.TempDir(), "fakeserver")
	out, err := exec.Command("go", "build", "-o", fake, "ducklm/tests/mcp/testdata/fakeserver").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ok(t, "mcp", "add", "fake", "--", fake, "ok")
	plan := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(plan, []byte(`{"nodes":[{"id":"say","kind":"tool","tool":"mcp__fake__echo","args":{"message":"quack"}}]}`), 0o644))
	r := ducklmIn(t, "y\n", "run", "--plan", plan, "--approve", "risky", "--workspace", t.TempDir())
	require.Equal(t, cli.ExitOK, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Contains(t, r.stderr, "step say wants to run mcp__fake__echo\n  {\"message\":\"quack\"}\n  risk medium (rule mcp_call): it calls tool echo of MCP server fake\n")
	require.Contains(t, r.stderr, "  MCP server fake, tool echo: the server says it only reads (shown, never trusted on its own)\n")
	require.Contains(t, r.stdout+r.stderr, "quack")
}
