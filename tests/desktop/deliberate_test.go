package desktop_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"ducklm/tests/xwindow"

	"github.com/stretchr/testify/require"
)

// TestDesktopNoTooltipOverTheDeliberateSeeds opens a world's Deliberate
// dialog in the real window, rests the pointer on its Seeds field (its label,
// then its box) and checks that GTK shows no tooltip window there: the
// fields' hints were title attributes, whose tooltips WebKitGTK drew over
// the Seeds field (issue 30, confusing 9). The hints are text in the dialog
// now. Native tooltips are drawn outside the page: no browser journey sees
// them.
func TestDesktopNoTooltipOverTheDeliberateSeeds(t *testing.T) {
	bin := binary(t)
	env := append(os.Environ(), "DUCKLM_HOME="+t.TempDir(), "OLLAMA_HOST=127.0.0.1:1", "GDK_BACKEND=x11")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	demoCmd := exec.CommandContext(ctx, bin, "world", "demo", "--json")
	demoCmd.Env = env
	out, err := demoCmd.Output()
	require.NoError(t, err, "ducklm world demo --json")
	var demo struct {
		Children []struct {
			Run string `json:"run"`
		} `json:"children"`
	}
	require.NoError(t, json.Unmarshal(out, &demo))
	require.NotEmpty(t, demo.Children)

	launch(t, bin, env)
	wid := mainWindow(t)
	open := exec.Command(bin, "open", demo.Children[len(demo.Children)-1].Run) // the noisy child: not at its goal
	open.Env = env
	msg, err := open.CombinedOutput()
	require.NoError(t, err, "ducklm open: %s", msg)

	click := func(word, what string) {
		t.Helper()
		shot := settle(t, wid, "deliberate-click-"+word)
		x, y, ok := xwindow.Find(t, shot, word)
		require.True(t, ok, "%s: the window shows no %q (%s); it reads:\n%s", what, word, shot, xwindow.Read(t, shot))
		xdotool(t, "mousemove", "--window", wid, strconv.Itoa(x), strconv.Itoa(y), "click", "1")
	}
	click("deliberate", "the world's Deliberate… button")
	dialog := settle(t, wid, "deliberate-dialog")
	x, y, ok := xwindow.Find(t, dialog, "seeds")
	require.True(t, ok, "the Deliberate dialog shows no Seeds field (%s); it reads:\n%s", dialog, xwindow.Read(t, dialog))

	// The label, then the box beside it; a small move first, as GTK shows a
	// tooltip once the pointer rests on what it moved onto.
	for _, at := range [][2]int{{x, y}, {x + 45, y}} {
		xdotool(t, "mousemove", "--window", wid, strconv.Itoa(at[0]-12), strconv.Itoa(at[1]))
		time.Sleep(200 * time.Millisecond)
		xdotool(t, "mousemove", "--window", wid, strconv.Itoa(at[0]), strconv.Itoa(at[1]))
		for until := time.Now().Add(4 * time.Second); time.Now().Before(until); time.Sleep(200 * time.Millisecond) {
			if tip := tooltip(t, wid); tip != "" {
				shot := filepath.Join(artifactDir(t), "deliberate-seeds-tooltip.png")
				capture(t, wid, shot)
				t.Fatalf("a tooltip (window %s) shows over the Seeds field at %d,%d of the window (see %s)", tip, at[0], at[1], shot)
			}
		}
	}
	capture(t, wid, filepath.Join(artifactDir(t), "deliberate-seeds-hover.png"))
}

// settle waits until two screenshots of the window a moment apart are the
// same (but for ticking times) and returns the last.
func settle(t *testing.T, wid, what string) string {
	t.Helper()
	shot := filepath.Join(artifactDir(t), what+".png")
	last := shot + ".prev.png"
	defer os.Remove(last)
	time.Sleep(700 * time.Millisecond)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		capture(t, wid, shot)
		if _, err := os.Stat(last); err == nil && difference(t, last, shot) < 0.002 || time.Now().After(deadline) {
			return shot
		}
		copyFile(t, shot, last)
	}
}
