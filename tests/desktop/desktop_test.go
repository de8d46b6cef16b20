// Package desktop holds the smoke test of the real desktop binary: it runs
// under an X display (Xvfb in CI), finds the window with xdotool, takes a
// screenshot and checks the window shows the app.
package desktop_test

import (
	"bufio"
	"bytes"
	"context"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/service"
	"ducklm/tests/xwindow"
)

// binary returns the built app, or skips outside `make test` (which always
// sets DUCKLM_BIN; in CI a missing binary is a failure).
func binary(t *testing.T) string {
	bin := os.Getenv("DUCKLM_BIN")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("DUCKLM_BIN is not set: make test builds the binary and sets it")
		}
		t.Skip("DUCKLM_BIN is not set; run through `make test-desktop`")
	}
	require.NotEmpty(t, os.Getenv("DISPLAY"), "the desktop test needs a display (scripts/with-display.sh starts Xvfb)")
	return bin
}

func artifactDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "artifacts"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// launch starts the app with env, stops it on cleanup (SIGTERM, then a
// kill if it has not exited in 20 s) and waits until its window is up and
// its first screen has been served.
func launch(t *testing.T, bin string, env []string) (*exec.Cmd, *lineWatcher) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Start())
	out := watch(stderr)
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})
	out.waitFor(t, "window ready", 90*time.Second)
	out.waitFor(t, "overview served", 60*time.Second)
	return cmd, out
}

// lineWatcher collects a process's stderr and tells when a line appears.
type lineWatcher struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func watch(r io.Reader) *lineWatcher {
	w := &lineWatcher{lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w.mu.Lock()
			w.buf.WriteString(sc.Text() + "\n")
			w.mu.Unlock()
			select {
			case w.lines <- sc.Text():
			default:
			}
		}
		close(w.lines)
	}()
	return w
}

func (w *lineWatcher) waitFor(t *testing.T, substr string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				t.Fatalf("the app exited before logging %q; its output:\n%s", substr, w.String())
			}
			if strings.Contains(line, substr) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q within %s; output so far:\n%s", substr, timeout, w.String())
		}
	}
}

// String is everything the app printed. When it crashed, the crash's first
// lines (the signal and the goroutine that took it) come again at the end:
// CI shows the tail of a failure, and a Go crash ends with register dumps.
func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := w.buf.String()
	lines := strings.Split(all, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "SIG") && strings.Contains(line, ": ") || strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			end := min(i+30, len(lines))
			return all + "\n--- the crash, from its start ---\n" + strings.Join(lines[i:end], "\n")
		}
	}
	return all
}

// seed records a few events so the first screen has real ledger data to show.
func seed(t *testing.T, dir string) {
	ctx := context.Background()
	svc, err := service.Open(ctx, dir)
	require.NoError(t, err)
	defer svc.Close()
	run := backend.NewID(backend.KindRun)
	_, err = svc.Ledger.Append(ctx, run, 0,
		backend.Event{Type: "task.received", Payload: []byte(`{"task":"report the hostname"}`), Reality: backend.ExternalReal},
		backend.Event{Type: "step.finished", Payload: []byte(`{"tool":"shell_exec","exit":0}`), Reality: backend.ExternalReal},
	)
	require.NoError(t, err)
}

func TestDesktopWindowOpensOnHome(t *testing.T) {
	bin := binary(t)
	dataDir := t.TempDir()
	seed(t, dataDir)

	cmd := exec.Command(bin)
	// WebKit keeps its storage where XDG_DATA_HOME says: the window must
	// point it into the data directory, never beside the default one.
	xdgData := t.TempDir()
	cmd.Env = append(os.Environ(), "DUCKLM_HOME="+dataDir, "OLLAMA_HOST=127.0.0.1:1", "GDK_BACKEND=x11", "XDG_DATA_HOME="+xdgData)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Start())
	out := watch(stderr)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})

	out.waitFor(t, "window ready", 90*time.Second)
	wid := mainWindow(t)
	require.Equal(t, "ducklm", xdotool(t, "getwindowname", wid))

	// The first screen asks the backend for the overview; once it is served,
	// give the page a moment to paint, looking again on a busy machine.
	out.waitFor(t, "overview served", 60*time.Second)
	time.Sleep(1500 * time.Millisecond)
	shot := filepath.Join(artifactDir(t), "desktop-home.png")
	deadline := time.Now().Add(60 * time.Second)
	for {
		capture(t, wid, shot)
		if drawn(t, shot) == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	require.NoError(t, drawn(t, shot))
	_, err = os.Stat(filepath.Join(dataDir, "webview", "ducklm", "localstorage"))
	require.NoError(t, err, "the web view's storage is in the data directory")
	_, err = os.Stat(filepath.Join(xdgData, "ducklm"))
	require.True(t, os.IsNotExist(err), "nothing written to $XDG_DATA_HOME/ducklm: %v", err)

	// A click on the sidebar's Worlds entry (xdotool, as a person would)
	// opens the Worlds screen: the page changes and the entry is selected.
	xdotool(t, "mousemove", "--window", wid, "60", "134", "click", "1")
	worlds := filepath.Join(artifactDir(t), "desktop-worlds.png")
	var changed float64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		capture(t, wid, worlds)
		if changed = difference(t, shot, worlds); changed > 0.05 {
			break
		}
	}
	require.Greater(t, changed, 0.05, "the Worlds screen replaced the home screen")
	require.NoError(t, drawn(t, worlds))
	require.NotEqual(t, pixel(t, shot, 40, 134), pixel(t, worlds, 40, 134), "the Worlds entry is now the selected one")

	// A second launch on the same data directory does not open a second
	// window on it: it brings the first forward and says so.
	second := exec.Command(bin)
	second.Env = cmd.Env
	msg, err := second.CombinedOutput()
	require.NoError(t, err, "second launch: %s", msg)
	require.Contains(t, string(msg), "already running")

	// `ducklm open settings` brings it forward on the Settings screen.
	open := exec.Command(bin, "open", "settings")
	open.Env = cmd.Env
	msg, err = open.CombinedOutput()
	require.NoError(t, err, "ducklm open: %s", msg)
	settingsShot := filepath.Join(artifactDir(t), "desktop-settings.png")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		capture(t, wid, settingsShot)
		if changed = difference(t, worlds, settingsShot); changed > 0.05 {
			break
		}
	}
	require.Greater(t, changed, 0.05, "the Settings screen replaced the Worlds screen")
	require.NoError(t, drawn(t, settingsShot))

	// SIGTERM closes the window cleanly and releases the data directory.
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "clean exit; output:\n%s", out.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the app did not exit on SIGTERM; output:\n%s", out.String())
	}
	lock, err := service.AcquireLock(dataDir)
	require.NoError(t, err, "the lock is released after exit")
	lock.Release()
}

// The window helpers are shared with tests/package (tests/xwindow).
func xdotool(t *testing.T, args ...string) string         { return xwindow.Xdotool(t, args...) }
func capture(t *testing.T, wid, path string)              { xwindow.Capture(t, wid, path) }
func mainWindow(t *testing.T) string                      { return xwindow.Main(t) }
func geometry(t *testing.T, wid string) map[string]string { return xwindow.Geometry(t, wid) }
func drawn(t *testing.T, path string) error               { return xwindow.Drawn(t, path) }
func key(img image.Image, x, y int) uint32                { return xwindow.Key(img, x, y) }
func decode(t *testing.T, path string) image.Image        { return xwindow.Decode(t, path) }

func difference(t *testing.T, a, b string) float64 { return xwindow.Difference(t, a, b) }

func pixel(t *testing.T, path string, x, y int) uint32 {
	t.Helper()
	return key(decode(t, path), x, y)
}
