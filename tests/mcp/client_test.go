package mcp_test

// The client half of MCP: ducklm using the tools of real MCP servers from
// npm (@modelcontextprotocol/server-everything and server-filesystem,
// installed with npm ci from this folder's lock file) and of a small fake
// server that misbehaves on purpose (testdata/fakeserver), each started in
// the sandbox by backend/mcpclient. In CI a missing prerequisite (node,
// npm, bubblewrap, the packages) fails these tests; elsewhere it skips them.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/bwrap"
	"ducklm/backend/mcpclient"
	"ducklm/backend/prereq"
	"ducklm/backend/settings"
	"ducklm/backend/tool"
)

// realServers installs the npm servers and returns the paths of their
// entry points (run with node).
func realServers(t *testing.T) (everything, filesystem string) {
	t.Helper()
	need(t, "node", "the MCP servers from npm run on it")
	needSandbox(t)
	npmCI(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	everything = filepath.Join(wd, "node_modules/.bin/mcp-server-everything")
	filesystem = filepath.Join(wd, "node_modules/.bin/mcp-server-filesystem")
	for _, p := range []string{everything, filesystem} {
		_, err := os.Stat(p)
		require.NoError(t, err, "npm ci did not install %s", p)
	}
	return everything, filesystem
}

// needSandbox fails the test in CI, and skips it elsewhere, on a machine
// where bubblewrap cannot run: ducklm starts MCP servers only in it.
func needSandbox(t *testing.T) {
	t.Helper()
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "MCP servers run only in the sandbox: %s", why)
	}
}

func manager(t *testing.T, dir string, blobs backend.BlobStore) *mcpclient.Manager {
	m := mcpclient.New(mcpclient.Options{Dir: dir, Blobs: blobs})
	t.Cleanup(func() { m.Close() })
	return m
}

func byName(tools []backend.Tool) map[string]backend.Tool {
	out := map[string]backend.Tool{}
	for _, tl := range tools {
		out[tl.Name()] = tl
	}
	return out
}

// TestRealServersRunInTheSandbox: @modelcontextprotocol/server-everything
// and server-filesystem start under bubblewrap, their tools join the
// catalog as mcp__NAME__TOOL with their own schemas, and calls answer.
func TestRealServersRunInTheSandbox(t *testing.T) {
	everything, filesystem := realServers(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "everything", Command: everything}))
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fs", Command: filesystem, Args: []string{"/"}}))
	m := manager(t, dir, nil)
	tools := byName(m.Tools())
	echo, ok := tools["mcp__everything__echo"]
	require.True(t, ok, "tools: %v", keys(tools))
	require.Contains(t, string(echo.ArgsSchema()), `"message"`)
	_, ok = tools["mcp__fs__write_file"]
	require.True(t, ok, "tools: %v", keys(tools))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := echo.Run(ctx, backend.ToolCall{Args: json.RawMessage(`{"message":"quack"}`)})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	require.Contains(t, string(res.Stdout), "quack")
	require.True(t, res.Sandboxed)

	// The server sees its own folder, not the host's: the sandbox's proof
	// is in /proc/1, bubblewrap's init, and in the hostname.
	own := filepath.Join(dir, "mcp", "fs")
	write := tools["mcp__fs__write_file"]
	res, err = write.Run(ctx, backend.ToolCall{Args: mustArgs(t, map[string]any{"path": filepath.Join(own, "inside.txt"), "content": "in"})})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	got, err := os.ReadFile(filepath.Join(own, "inside.txt"))
	require.NoError(t, err)
	require.Equal(t, "in", string(got))
}

func keys(m map[string]backend.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustArgs(t *testing.T, v any) json.RawMessage {
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

// TestAWriteOutsideItsFolderIsRefusedByTheSandbox: server-filesystem is
// allowed the whole of "/", so the server itself would write anywhere; the
// sandbox shows it only its own folder writable, so a write to a host
// folder beside it fails and the host folder stays as it was.
func TestAWriteOutsideItsFolderIsRefusedByTheSandbox(t *testing.T) {
	_, filesystem := realServers(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fs", Command: filesystem, Args: []string{"/"}}))
	m := manager(t, dir, nil)
	write := byName(m.Tools())["mcp__fs__write_file"]
	require.NotNil(t, write)
	outside := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A folder the sandbox does not show (ENOENT), and the read-only
	// system (EROFS): the server says the write failed.
	for _, path := range []string{filepath.Join(outside, "escaped.txt"), "/usr/escaped.txt"} {
		res, err := write.Run(ctx, backend.ToolCall{Args: mustArgs(t, map[string]any{"path": path, "content": "out"})})
		require.NoError(t, err)
		require.Equal(t, 1, res.ExitCode, "writing %s: stdout %s", path, res.Stdout)
		require.NotEmpty(t, res.Stderr)
		require.NoFileExists(t, path)
		t.Logf("%s: %s", path, strings.TrimSpace(string(res.Stderr)))
	}
	// The data directory beside the server's folder: under the host's /tmp
	// the sandbox's own /tmp (private, thrown away) takes the write, and
	// the host's folder never sees it.
	res, err := write.Run(ctx, backend.ToolCall{Args: mustArgs(t, map[string]any{"path": filepath.Join(dir, "escaped.txt"), "content": "out"})})
	require.NoError(t, err)
	require.NoFileExists(t, filepath.Join(dir, "escaped.txt"))
	// Reading the host's data directory fails too: it is not in the sandbox.
	read := byName(m.Tools())["mcp__fs__read_text_file"]
	require.NotNil(t, read)
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s3cret"), 0o644))
	res, err = read.Run(ctx, backend.ToolCall{Args: mustArgs(t, map[string]any{"path": filepath.Join(outside, "secret.txt")})})
	require.NoError(t, err)
	require.Equal(t, 1, res.ExitCode)
	require.NotContains(t, string(res.Stdout)+string(res.Stderr), "s3cret")
}

// serverPID finds the host pid of the process whose working folder is
// home (the server's own folder) and whose command line names cmd.
func serverPID(t *testing.T, home, cmd string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			line, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
			if cwd == home && strings.Contains(string(line), cmd) && strings.HasPrefix(string(line), "node") {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no process of %s runs in %s", cmd, home)
	return 0
}

// TestKillingTheServerMidCallFailsTheStepAndTheNextCallWorks: the real
// server-everything is killed (SIGKILL, from outside) during a long call;
// the step fails with a sentence at once, and the next call starts the
// server again and answers.
func TestKillingTheServerMidCallFailsTheStepAndTheNextCallWorks(t *testing.T) {
	everything, _ := realServers(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "everything", Command: everything}))
	m := manager(t, dir, nil)
	tools := byName(m.Tools())
	long := tools["mcp__everything__trigger-long-running-operation"]
	require.NotNil(t, long, "tools: %v", keys(tools))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type ran struct {
		res backend.ToolResult
		err error
	}
	done := make(chan ran, 1)
	start := time.Now()
	go func() {
		res, err := long.Run(ctx, backend.ToolCall{Args: json.RawMessage(`{"duration":60,"steps":5}`)})
		done <- ran{res, err}
	}()
	time.Sleep(time.Second) // the call is under way
	pid := serverPID(t, filepath.Join(dir, "mcp", "everything"), "mcp-server-everything")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	got := <-done
	require.NoError(t, got.err)
	require.Less(t, time.Since(start), 20*time.Second, "the step waited for its whole duration")
	require.Equal(t, 1, got.res.ExitCode)
	require.Contains(t, string(got.res.Stderr), "MCP server everything stopped during the call to trigger-long-running-operation (")
	require.Contains(t, string(got.res.Stderr), "it starts again for the next call")
	t.Logf("%s", got.res.Stderr)

	res, err := tools["mcp__everything__echo"].Run(ctx, backend.ToolCall{Args: json.RawMessage(`{"message":"again"}`)})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	require.Contains(t, string(res.Stdout), "again")
}

// TestImagesAndResourcesBecomeBlobs: server-everything's tiny image is
// kept as a blob with its MIME type, and its resource reference is text.
func TestImagesAndResourcesBecomeBlobs(t *testing.T) {
	everything, _ := realServers(t)
	dir := t.TempDir()
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "everything", Command: everything}))
	m := manager(t, dir, blobs)
	img := byName(m.Tools())["mcp__everything__get-tiny-image"]
	require.NotNil(t, img)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := img.Run(ctx, backend.ToolCall{Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	var out struct {
		Content []struct {
			Type     string           `json:"type"`
			MIMEType string           `json:"mimeType"`
			Blob     *backend.BlobRef `json:"blob"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(res.Output, &out))
	var found bool
	for _, c := range out.Content {
		if c.Type == "image" {
			found = true
			require.Equal(t, "image/png", c.MIMEType)
			require.NotNil(t, c.Blob)
			data, err := blobs.Get(ctx, *c.Blob)
			require.NoError(t, err)
			require.Equal(t, "\x89PNG", string(data[:4]))
		}
	}
	require.True(t, found, "no image in %s", res.Output)
}

// fakeServer builds testdata/fakeserver.
func fakeServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakeserver")
	build := exec.Command("go", "build", "-o", bin, "./testdata/fakeserver")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build fakeserver:\n%s", out)
	return bin
}

// TestMisbehavingServersEachGetASentence: a server that is not executable,
// one that prints garbage, a tool whose schema is not JSON Schema, a 51 MB
// answer, an isError answer and a server that dies during a call: each is a
// sentence, and the other servers and tools go on working.
func TestMisbehavingServersEachGetASentence(t *testing.T) {
	needSandbox(t)
	fake := fakeServer(t)
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "server.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o644))
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "noexec", Command: script}))
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "garbage", Command: fake, Args: []string{"garbage"}}))
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fake", Command: fake, Args: []string{"ok"}}))
	m := manager(t, dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	status, err := m.Servers(ctx)
	require.NoError(t, err)
	require.Len(t, status, 3)
	by := map[string]mcpclient.ServerStatus{}
	for _, s := range status {
		by[s.Name] = s
		t.Logf("%s: %s %s %v", s.Name, s.State, s.Error, s.Refused)
	}
	require.Equal(t, "failed", by["noexec"].State)
	require.Equal(t, "the command "+script+" of MCP server noexec is not executable (chmod +x it, or name its interpreter first)", by["noexec"].Error)
	require.Equal(t, "failed", by["garbage"].State)
	require.Contains(t, by["garbage"].Error, "MCP server garbage did not start: it did not speak MCP on its standard output")
	require.Equal(t, "ready", by["fake"].State)
	require.Len(t, by["fake"].Refused, 1)
	require.Contains(t, by["fake"].Refused[0], "MCP server fake's tool broken was left out: its input schema cannot be used, because it is not valid JSON Schema (")
	require.Contains(t, by["fake"].Refused[0], `"properties.a.type"`)

	tools := byName(m.Tools())
	require.NotContains(t, tools, "mcp__fake__broken")
	require.Contains(t, tools, "mcp__fake__echo")
	mcpInfo, ok := backend.MCPOf(tools["mcp__fake__echo"])
	require.True(t, ok)
	require.Equal(t, backend.MCPTool{Server: "fake", Tool: "echo", ReadOnlyHint: true}, mcpInfo)
	echo := func() {
		t.Helper()
		res, err := tools["mcp__fake__echo"].Run(ctx, backend.ToolCall{Args: json.RawMessage(`{"message":"still here"}`)})
		require.NoError(t, err)
		require.Equal(t, "still here\n", string(res.Stdout), "stderr: %s", res.Stderr)
	}
	echo()

	start := time.Now()
	res, err := tools["mcp__fake__big"].Run(ctx, backend.ToolCall{Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, 1, res.ExitCode)
	require.Equal(t, "MCP server fake stopped during the call to big (its answer was larger than 50 MB, which ducklm does not read); it starts again for the next call\n", string(res.Stderr))
	t.Logf("a 51 MB answer was refused in %s", time.Since(start))
	echo()

	res, err = tools["mcp__fake__fail"].Run(ctx, backend.ToolCall{Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, 1, res.ExitCode)
	require.Equal(t, "the disk is full\n", string(res.Stderr))

	res, err = tools["mcp__fake__die"].Run(ctx, backend.ToolCall{Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, 1, res.ExitCode)
	require.Equal(t, "MCP server fake stopped during the call to die (it exited with code 3; its last message: \"fakeserver: dying on purpose\"); it starts again for the next call\n", string(res.Stderr))
	echo()

	// tools/list_changed: the new tool joins the catalog.
	res, err = tools["mcp__fake__change"].Run(ctx, backend.ToolCall{Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.Eventually(t, func() bool { _, ok := byName(m.Tools())["mcp__fake__late"]; return ok }, 10*time.Second, 50*time.Millisecond)
}

// TestAStepTimeoutSendsACancellation: a call past the step's time limit is
// a timed-out result with a sentence, and the server receives
// notifications/cancelled for it.
func TestAStepTimeoutSendsACancellation(t *testing.T) {
	needSandbox(t)
	fake := fakeServer(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fake", Command: fake, Args: []string{"ok"}}))
	m := manager(t, dir, nil)
	slow := byName(m.Tools())["mcp__fake__slow"]
	require.NotNil(t, slow)
	start := time.Now()
	res, err := slow.Run(context.Background(), backend.ToolCall{Args: json.RawMessage(`{}`), Limits: backend.Limits{Timeout: time.Second}})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 10*time.Second)
	require.True(t, res.TimedOut)
	require.Equal(t, 1, res.ExitCode)
	require.Equal(t, "MCP server fake did not answer slow within the step's 1s; ducklm sent it a cancellation\n", string(res.Stderr))
	cancelled := filepath.Join(dir, "mcp", "fake", "cancelled.txt")
	require.Eventually(t, func() bool { _, err := os.Stat(cancelled); return err == nil }, 10*time.Second, 50*time.Millisecond)
	data, err := os.ReadFile(cancelled)
	require.NoError(t, err)
	require.Contains(t, string(data), `"requestId"`)
}

// TestConcurrentCallersShareOneStart: the catalog, the server list and
// steps asking at once start the server once and all see it ready.
func TestConcurrentCallersShareOneStart(t *testing.T) {
	needSandbox(t)
	fake := fakeServer(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fake", Command: fake, Args: []string{"ok"}}))
	m := manager(t, dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make(chan error, 8)
	states := make(chan string, 4)
	for range 4 {
		go func() {
			all, err := m.Servers(ctx)
			if err == nil && len(all) == 1 {
				states <- all[0].State
			} else {
				states <- fmt.Sprint(err)
			}
		}()
		go func() {
			if _, ok := byName(m.Tools())["mcp__fake__echo"]; !ok {
				errs <- fmt.Errorf("the catalog lacks echo")
				return
			}
			errs <- nil
		}()
	}
	for range 4 {
		require.Equal(t, "ready", <-states)
		require.NoError(t, <-errs)
	}
	// One process serves them all.
	require.Equal(t, 1, fakeProcesses(fake, "ok"), "fake servers running")
}

// TestClosingTheManagerKillsItsServers: every server process (and what it
// started) is gone once the manager is closed.
func TestClosingTheManagerKillsItsServers(t *testing.T) {
	needSandbox(t)
	fake := fakeServer(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fake", Command: fake, Args: []string{"ok"}}))
	m := mcpclient.New(mcpclient.Options{Dir: dir})
	require.NotEmpty(t, m.Tools())
	running := func() int {
		n := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			line, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if strings.Contains(string(line), fake) {
				n++
			}
		}
		return n
	}
	require.Positive(t, running())
	start := time.Now()
	require.NoError(t, m.Close())
	require.Equal(t, 0, running(), "processes of the server outlived Close")
	t.Logf("closed in %s", time.Since(start))
}

// TestTheCatalogFollowsChangesFromAnotherProcess: a tool marked safe and a
// server added or removed in mcp-servers.json by another process (ducklm
// mcp safe, add, rm while the window runs) reach the catalog without a
// restart.
func TestTheCatalogFollowsChangesFromAnotherProcess(t *testing.T) {
	needSandbox(t)
	fake := fakeServer(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fake", Command: fake, Args: []string{"ok"}}))
	m := manager(t, dir, nil)
	info, ok := backend.MCPOf(byName(m.Tools())["mcp__fake__echo"])
	require.True(t, ok)
	require.False(t, info.Safe)

	time.Sleep(10 * time.Millisecond) // a later modification time
	require.NoError(t, settings.UpdateMCP(dir, "fake", func(s *settings.MCPServer) error { s.Safe = []string{"echo"}; return nil }))
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "other", Command: fake, Args: []string{"ok"}}))
	require.Eventually(t, func() bool {
		tools := byName(m.Tools())
		info, _ := backend.MCPOf(tools["mcp__fake__echo"])
		_, other := tools["mcp__other__echo"]
		return info.Safe && other
	}, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, settings.RemoveMCP(dir, "other"))
	require.Eventually(t, func() bool { _, other := byName(m.Tools())["mcp__other__echo"]; return !other }, 10*time.Second, 20*time.Millisecond)
}

// TestLargeTextAndResourcesAreKeptAsBlobs: a 100 KB text is the step's
// stdout whole (under the output limit), and the step's output carries its
// start with the whole text as a blob; an embedded binary resource is a
// blob with its MIME type.
func TestLargeTextAndResourcesAreKeptAsBlobs(t *testing.T) {
	needSandbox(t)
	fake := fakeServer(t)
	dir := t.TempDir()
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(t, err)
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fake", Command: fake, Args: []string{"ok"}}))
	m := manager(t, dir, blobs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := byName(m.Tools())["mcp__fake__long"].Run(ctx, backend.ToolCall{Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	text := strings.Repeat("duck ", 20<<10)
	require.Equal(t, text+"\n", string(res.Stdout))
	var out struct {
		Content []struct {
			Type     string           `json:"type"`
			Text     string           `json:"text"`
			Clipped  bool             `json:"clipped"`
			URI      string           `json:"uri"`
			MIMEType string           `json:"mimeType"`
			Blob     *backend.BlobRef `json:"blob"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.Len(t, out.Content, 2)
	require.True(t, out.Content[0].Clipped)
	require.Len(t, out.Content[0].Text, 16<<10)
	whole, err := blobs.Get(ctx, *out.Content[0].Blob)
	require.NoError(t, err)
	require.Equal(t, text, string(whole))
	require.Equal(t, "resource", out.Content[1].Type)
	require.Equal(t, "file:///report.bin", out.Content[1].URI)
	require.Equal(t, "application/octet-stream", out.Content[1].MIMEType)
	data, err := blobs.Get(ctx, *out.Content[1].Blob)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 1, 2, 3}, data)
	require.Less(t, len(res.Output), 20<<10, "the step's output stays small")
}

// TestAWorkspaceSwappedForALinkIsNeverGivenToTheServer: a server that works
// in the run's workspace gets the folder the run was given. Swapped for a
// link to the data directory before the server starts, or after it wrote
// there once, the call is refused with a sentence and nothing is written
// where the link points.
func TestAWorkspaceSwappedForALinkIsNeverGivenToTheServer(t *testing.T) {
	_, filesystem := realServers(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fs", Command: filesystem, Args: []string{"/"}, Workspace: true}))
	m := manager(t, dir, nil)
	write := byName(m.Tools())["mcp__fs__write_file"]
	require.NotNil(t, write)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	secret := t.TempDir() // stands for the data directory
	swap := func(ws string) {
		require.NoError(t, os.Rename(ws, ws+".old"))
		require.NoError(t, os.Symlink(secret, ws))
	}
	call := func(ws string, id *backend.FolderID) (backend.ToolResult, error) {
		return write.Run(ctx, backend.ToolCall{Workspace: ws, WorkspaceID: id,
			Args: mustArgs(t, map[string]any{"path": filepath.Join(ws, "note.txt"), "content": "x"})})
	}

	// Swapped before the server ever started for this workspace.
	first := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.Mkdir(first, 0o755))
	id, err := tool.IdentifyWorkspace(first)
	require.NoError(t, err)
	swap(first)
	_, err = call(first, &id)
	require.Error(t, err)
	require.Contains(t, backend.ErrorMessage(err), "is no longer the folder this run was given")
	require.NoFileExists(t, filepath.Join(secret, "note.txt"))

	// Swapped while the server runs in it: its next call is refused too.
	second := filepath.Join(t.TempDir(), "ws")
	require.NoError(t, os.Mkdir(second, 0o755))
	id, err = tool.IdentifyWorkspace(second)
	require.NoError(t, err)
	res, err := call(second, &id)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	require.FileExists(t, filepath.Join(second, "note.txt"))
	swap(second)
	_, err = call(second, &id)
	require.Error(t, err)
	require.Contains(t, backend.ErrorMessage(err), "replaced by a link")
	require.NoFileExists(t, filepath.Join(secret, "note.txt"))
	entries, err := os.ReadDir(secret)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// fakeProcesses counts the fake server's processes started with arg.
func fakeProcesses(fake, arg string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		line, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.HasPrefix(string(line), fake+"\x00"+arg) {
			n++
		}
	}
	return n
}

// TestACancelledCallStopsAServerNoOtherCallUses: cancelling a step (its
// run cancelled) stops the server's process group when no other call is
// under way on it, and the next call starts it again; with another call
// under way, the server is only told, and that call goes on.
func TestACancelledCallStopsAServerNoOtherCallUses(t *testing.T) {
	needSandbox(t)
	fake := fakeServer(t)
	dir := t.TempDir()
	require.NoError(t, settings.AddMCP(dir, settings.MCPServer{Name: "fake", Command: fake, Args: []string{"ok"}}))
	m := manager(t, dir, nil)
	tools := byName(m.Tools())
	slow, echo := tools["mcp__fake__slow"], tools["mcp__fake__echo"]
	require.NotNil(t, slow)
	require.Equal(t, 1, fakeProcesses(fake, "ok"))

	// Two calls under way, one cancelled: the server stays for the other.
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	errs := make(chan error, 2)
	go func() { _, err := slow.Run(ctxA, backend.ToolCall{Args: json.RawMessage(`{}`)}); errs <- err }()
	go func() { _, err := slow.Run(ctxB, backend.ToolCall{Args: json.RawMessage(`{}`)}); errs <- err }()
	time.Sleep(500 * time.Millisecond) // both calls are under way
	cancelA()
	err := <-errs
	require.Error(t, err)
	require.Contains(t, backend.ErrorMessage(err), "ducklm told the server")
	require.Equal(t, 1, fakeProcesses(fake, "ok"), "the other call still uses the server")

	// The last call cancelled: the process is stopped.
	cancelB()
	err = <-errs
	require.Error(t, err)
	require.Contains(t, backend.ErrorMessage(err), "ducklm stopped MCP server fake, which no other call was using")
	require.Eventually(t, func() bool { return fakeProcesses(fake, "ok") == 0 }, 10*time.Second, 50*time.Millisecond)

	// The next call starts it again.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := echo.Run(ctx, backend.ToolCall{Args: json.RawMessage(`{"message":"again"}`)})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "stderr: %s", res.Stderr)
	require.Equal(t, 1, fakeProcesses(fake, "ok"))
}
