package desktop_test

import (
	"bufio"
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

	"ducklm/tests/internal/npmci"
)

// TestDesktopScreens walks the real window through every main screen with
// `ducklm open`, on a data directory filled through the CLI (a forked
// Branching Grid, a task planned by a fake Ollama and finished, a task
// waiting for approval, an MCP server from npm), and saves one screenshot
// per screen:
// tests/artifacts/screen-NAME.png, the pictures the README shows.
func TestDesktopScreens(t *testing.T) {
	bin := binary(t)
	dataDir, workspace := t.TempDir(), t.TempDir()
	ollama := startFakeOllama(t)
	env := append(os.Environ(), "DUCKLM_HOME="+dataDir, "OLLAMA_HOST="+ollama, "GDK_BACKEND=x11")
	cli := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		out, err := cmd.Output()
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		require.NoError(t, err, "ducklm %s: %s", strings.Join(args, " "), stderr)
		return out
	}

	var demo struct {
		ParentWorld string `json:"parentWorld"`
		Children    []struct {
			Run string `json:"run"`
		} `json:"children"`
	}
	require.NoError(t, json.Unmarshal(cli("world", "demo", "--json"), &demo))
	require.Len(t, demo.Children, 2)
	// The noisy child thinks before its next step: the world screen shows
	// the round it made and the timeline the step it chose.
	cli("world", "deliberate", demo.Children[1].Run, "--strategy", "beam", "--width", "8", "--depth", "6", "--budget", "120", "--apply")
	require.NoError(t, os.WriteFile(filepath.Join(workspace, "notes.txt"), []byte("ducklm workspace\n"), 0o644))
	// The planned task is reviewed and answered: its run view shows the answer.
	var first struct {
		Stream string `json:"stream"`
	}
	listed := cli("run", "list the workspace", "--approve", "auto", "--workspace", workspace, "--json")
	require.NoError(t, json.Unmarshal(listed[:bytes.IndexByte(listed, '\n')], &first), "ducklm run --json printed %q", listed)
	require.Contains(t, string(listed), `"run.answered"`, "the planned task was answered")
	plan := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(plan, []byte(`{"nodes":[
		{"id":"count","kind":"tool","tool":"shell_exec","args":{"command":"wc -l notes.txt"},"title":"count the lines of the notes"},
		{"id":"clean","kind":"tool","tool":"shell_exec","args":{"command":"rm -rf build"},"depends_on":["count"],"title":"remove the build folder"}
	]}`), 0o644))
	// --detach prints the run's id and leaves it to the window, which
	// drives it to its risky step and asks.
	waiting := strings.TrimSpace(string(cli("run", "--label", "tidy the workspace", "--plan", plan, "--approve", "risky",
		"--workspace", workspace, "--detach")))
	require.True(t, strings.HasPrefix(waiting, "run_"), "ducklm run --detach printed %q", waiting)

	// The filesystem MCP server from npm (tests/mcp's lock), allowed "/"
	// (the sandbox shows it only its own folder to write), its listing
	// tool marked safe: Settings → Tools.
	cli("mcp", "add", "files", "--", mcpFilesystem(t), "/")
	cli("mcp", "safe", "files", "list_directory")

	_, out := launch(t, bin, env)
	wid := mainWindow(t)

	screens := []struct {
		name string
		open []string
	}{
		{"home", []string{"runs"}},
		{"approval", []string{waiting}},
		{"answer", []string{first.Stream}},
		{"new-task", []string{"new"}},
		{"worlds", []string{"worlds"}},
		{"world", []string{demo.Children[1].Run}},
		{"lineage", []string{demo.ParentWorld}},
		// The comparison of the two branches, left by the next screen: the
		// path that once left a blank page (an effect's cleanup that was not
		// a function).
		{"compare", []string{"compare", demo.Children[0].Run, demo.Children[1].Run}},
		{"timeline", []string{"timeline", demo.Children[1].Run}},
		{"memory", []string{"memory"}},
		{"settings", []string{"settings"}},
		{"tools", []string{"tools"}},
	}
	previous := ""
	for _, s := range screens {
		open := exec.Command(bin, append([]string{"open"}, s.open...)...)
		open.Env = env
		msg, err := open.CombinedOutput()
		require.NoError(t, err, "ducklm open %v: %s", s.open, msg)
		shot := filepath.Join(artifactDir(t), "screen-"+s.name+".png")
		// Each screen loads its data and lays out (the lineage in a worker):
		// wait until the picture has changed and then stopped changing
		// (but for relative times ticking: "50 s ago").
		time.Sleep(time.Second)
		deadline := time.Now().Add(45 * time.Second)
		last := ""
		for {
			capture(t, wid, shot)
			settled := last != "" && difference(t, last, shot) < 0.002
			changed := previous == "" || difference(t, previous, shot) > 0.01
			if (settled && changed) || time.Now().After(deadline) {
				break
			}
			last = shot + ".prev.png"
			copyFile(t, shot, last)
			time.Sleep(700 * time.Millisecond)
		}
		os.Remove(shot + ".prev.png")
		require.NoError(t, drawn(t, shot), s.name)
		if previous != "" {
			require.Greater(t, difference(t, previous, shot), 0.01, "%s: the screen changed", s.name)
		}
		previous = shot
		if s.name == "compare" {
			previous = closeCompare(t, wid, shot)
		}
	}
	require.NotContains(t, out.String(), "level=ERROR", "the window logged no error while walking the screens")
}

// closeCompare presses the comparison's Close button in the window, as a
// keyboard user does (the comparison takes the focus when it opens, so Tab
// reaches Close and Return presses it), and checks that the comparison went
// and the screen is drawn, not blank: the path that once left a white page.
// It returns the screenshot after.
func closeCompare(t *testing.T, wid, open string) string {
	t.Helper()
	xdotool(t, "windowfocus", "--sync", wid)
	xdotool(t, "key", "--clearmodifiers", "Tab", "Return")
	closed := filepath.Join(artifactDir(t), "screen-compare-closed.png")
	var changed float64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		capture(t, wid, closed)
		if changed = difference(t, open, closed); changed > 0.02 {
			break
		}
	}
	require.Greater(t, changed, 0.02, "Close took the comparison away")
	require.NoError(t, drawn(t, closed), "after Close")
	return closed
}

// startFakeOllama builds and starts the e2e suite's fake Ollama with its
// script and returns its address.
func startFakeOllama(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakeollama")
	build := exec.Command("go", "build", "-o", bin, "./tests/e2e/fakeollama")
	build.Dir = filepath.Join("..", "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the fake Ollama: %s", out)
	cmd := exec.Command(bin, "-script", filepath.Join("..", "e2e", "ollama-script.json"))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ollamatest listening on ")
	require.True(t, ok, "fake Ollama said %q", line)
	return addr
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o644))
}

// mcpFilesystem installs tests/mcp's npm packages (npm ci from its lock
// file, once per lock) and returns server-filesystem's command.
func mcpFilesystem(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../mcp")
	require.NoError(t, err)
	npmci.Install(t, dir, "the MCP server the Tools screen shows")
	return filepath.Join(dir, "node_modules", ".bin", "mcp-server-filesystem")
}
