package desktop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/prereq"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/tests/xwindow"
)

// TestMain stops the throw-away PostgreSQL the team test started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// answered is what a window says of an answer it gave to a run another
// installation drives ("Answered. This run is driven by ducklm on …").
var answered = regexp.MustCompile(`answered\W+this run is driven by ducklm on`)

// teamWindow is one desktop window of a team: its process, on a data
// directory of its own pointed at the team's PostgreSQL.
type teamWindow struct {
	name string
	env  []string
	cmd  *exec.Cmd
	out  *lineWatcher
	wid  string
}

// TestTwoDesktopWindowsOnOnePostgresSeeEachOthersRuns starts two real
// windows under one X display, each on its own data directory (two
// installations) and both on one throw-away PostgreSQL. Everything is done
// in the windows, as a person does it, and read off them: what a window
// shows is read off its screenshot by tesseract's OCR, and a click goes to
// the word a person would click. A task typed into A's New task screen waits
// for approval; B's list, left alone, shows it waiting; B opens it and
// approves it; A's run view, left alone, reads it completed (A drives it:
// its workspace). Then B starts a task of its own, and A's list, left
// alone, shows it completed beside its own.
func TestTwoDesktopWindowsOnOnePostgresSeeEachOthersRuns(t *testing.T) {
	bin := binary(t)
	if _, err := exec.LookPath("tesseract"); err != nil {
		prereq.Missing(t, "tesseract (Debian's tesseract-ocr) reads what the windows show: %v", err)
	}
	url := pgtest.URL(t)
	ollama := startFakeOllama(t)
	open := func(name string) *teamWindow {
		t.Helper()
		w := &teamWindow{name: name, env: append(os.Environ(), "DUCKLM_HOME="+t.TempDir(), "DUCKLM_DATABASE_URL="+url,
			"OLLAMA_HOST="+ollama, "GDK_BACKEND=x11", "XDG_DATA_HOME="+t.TempDir())}
		w.cmd, w.out = launch(t, bin, w.env)
		w.wid = xwindow.OfProcess(t, w.cmd.Process.Pid)
		return w
	}
	// One after the other: the first migrates the database.
	a := open("a")
	b := open("b")
	require.NotEqual(t, a.wid, b.wid, "two windows")
	xdotool(t, "windowmove", b.wid, "320", "180") // both on the screen, B over A

	a.screen(t, bin, "runs")
	b.screen(t, bin, "runs")
	a.startTask(t, bin, "list the workspace for amber lighthouse", "")
	a.reads(t, "A's run waits for approval", func(s string) bool { return strings.Contains(s, "awaiting approval") && strings.Contains(s, "approve") })
	b.shows(t, "lighthouse", "awaiting approval", "B's list, left alone, shows A's run waiting")

	b.click(t, "lighthouse", "B opens A's run from its list")
	b.click(t, "approve", "B approves A's step")
	// B's card says it answered and who drives the run, until the run,
	// driven by A, moves on (which may come first).
	b.reads(t, "B's answer is taken", func(s string) bool {
		return answered.MatchString(s) || strings.Contains(s, "approved as asked in the window")
	})
	a.reads(t, "A's run view, left alone, reads the run completed", func(s string) bool {
		return strings.Contains(s, "completed") && !strings.Contains(s, "awaiting approval")
	})
	b.reads(t, "and so does B's", func(s string) bool {
		return strings.Contains(s, "completed") && !strings.Contains(s, "awaiting approval")
	})

	a.screen(t, bin, "runs")
	b.startTask(t, bin, "list the workspace for cobalt harbour", "sandboxed")
	a.shows(t, "harbour", "completed", "A's list, left alone, shows B's run completed")
	a.shows(t, "lighthouse", "completed", "beside its own")

	for _, w := range []*teamWindow{a, b} {
		require.NotContains(t, w.out.String(), "level=ERROR", "window %s logged no error", w.name)
	}
}

// screen brings the window forward on a screen (`ducklm open`, on its data
// directory) and waits for it to settle.
func (w *teamWindow) screen(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"open"}, args...)...)
	cmd.Env = w.env
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: ducklm open %v: %s", w.name, args, msg)
	w.settle(t, "screen-"+args[0])
}

// settle waits until two screenshots a moment apart are the same (but for
// ticking times) and returns the last.
func (w *teamWindow) settle(t *testing.T, what string) string {
	t.Helper()
	shot := filepath.Join(artifactDir(t), "team-"+w.name+"-"+what+".png")
	last := shot + ".prev.png"
	defer os.Remove(last)
	time.Sleep(700 * time.Millisecond)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		xdotool(t, "windowraise", w.wid)
		capture(t, w.wid, shot)
		if _, err := os.Stat(last); err == nil && difference(t, last, shot) < 0.002 || time.Now().After(deadline) {
			return shot
		}
		copyFile(t, shot, last)
	}
}

// startTask types a task into the window's New task screen, picks the
// approval mode whose label holds mode ("": the default, ask for risky
// steps) and presses Start run, as a person does: a click in the Task
// field, the keys, clicks on the mode and the button.
func (w *teamWindow) startTask(t *testing.T, bin, task, mode string) {
	t.Helper()
	w.screen(t, bin, "new")
	w.click(t, "summarise", "the Task field (its placeholder)")
	xdotool(t, "type", "--delay", "20", task)
	if mode != "" {
		w.click(t, mode, "the approval mode")
	}
	typed := w.settle(t, "typed")
	require.Contains(t, xwindow.Read(t, typed), task, "%s: the task is in its field", w.name)
	w.click(t, "start run", "Start run")
	w.reads(t, "Start run took the window to the run", func(s string) bool { return !strings.Contains(s, "start run") && strings.Contains(s, task) })
}

// click clicks, in the window, the word it reads on it.
func (w *teamWindow) click(t *testing.T, word, what string) {
	t.Helper()
	shot := w.settle(t, "click-"+word)
	x, y, ok := xwindow.Find(t, shot, word)
	require.True(t, ok, "%s: window %s shows no %q to click (%s); it reads:\n%s", what, w.name, word, shot, xwindow.Read(t, shot))
	xdotool(t, "windowraise", w.wid)
	xdotool(t, "windowfocus", "--sync", w.wid)
	xdotool(t, "mousemove", "--window", w.wid, strconv.Itoa(x), strconv.Itoa(y), "click", "1")
}

// reads waits (up to two minutes: a loaded machine) until what the window
// shows satisfies ok.
func (w *teamWindow) reads(t *testing.T, what string, ok func(text string) bool) {
	t.Helper()
	shot := filepath.Join(artifactDir(t), "team-"+w.name+"-reads.png")
	var text string
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		xdotool(t, "windowraise", w.wid)
		capture(t, w.wid, shot)
		if text = xwindow.Read(t, shot); ok(text) {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	t.Fatalf("%s: not so in window %s (%s); it read:\n%s\nits output:\n%s", what, w.name, shot, text, w.out.String())
}

// shows waits (up to two minutes) until one line of what the window shows
// holds word and status.
func (w *teamWindow) shows(t *testing.T, word, status, what string) {
	t.Helper()
	w.reads(t, what, func(text string) bool {
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, word) && strings.Contains(line, status) {
				return true
			}
		}
		return false
	})
}
