package desktop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDesktopTooltipLeavesWithTheDialog hovers a button of the real window
// until GTK shows its tooltip (a small window of its own, titled ducklm
// like the main one), clicks it to open its dialog, and checks that no
// tooltip stays over the dialog, nor comes back when the pointer moves on
// the dialog's backdrop over the button (issue 18: "old tooltips over
// dialogs"). Native tooltips are drawn outside the page, so only the
// desktop window can show them; the browser journeys cannot.
func TestDesktopTooltipLeavesWithTheDialog(t *testing.T) {
	bin := binary(t)
	launch(t, bin, append(os.Environ(), "DUCKLM_HOME="+t.TempDir(), "OLLAMA_HOST=127.0.0.1:1", "GDK_BACKEND=x11"))
	wid := mainWindow(t)
	home := filepath.Join(artifactDir(t), "tooltip-home.png")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		capture(t, wid, home)
		if drawn(t, home) == nil || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(t, drawn(t, home))

	// The Runs card's "Import bundle…" (titled "Bring in worlds and runs
	// from a .ducklm file") in the 1280×820 window, empty data directory.
	const bx, by = "757", "150"
	tip := ""
	for deadline := time.Now().Add(30 * time.Second); tip == "" && time.Now().Before(deadline); {
		// A small move first: GTK shows a tooltip after the pointer rests
		// on a widget it has moved onto.
		xdotool(t, "mousemove", "--window", wid, "740", "150")
		time.Sleep(200 * time.Millisecond)
		xdotool(t, "mousemove", "--window", wid, bx, by)
		for until := time.Now().Add(4 * time.Second); tip == "" && time.Now().Before(until); time.Sleep(200 * time.Millisecond) {
			tip = tooltip(t, wid)
		}
	}
	require.NotEmpty(t, tip, "hovering Import bundle… showed no tooltip: the button is not where this test points (%s,%s of the window)", bx, by)
	shot := filepath.Join(artifactDir(t), "tooltip-shown.png")
	capture(t, wid, shot)

	xdotool(t, "click", "1")
	dialog := filepath.Join(artifactDir(t), "tooltip-dialog.png")
	var changed float64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		capture(t, wid, dialog)
		if changed = difference(t, home, dialog); changed > 0.3 {
			break
		}
	}
	require.Greater(t, changed, 0.3, "the import dialog (and its backdrop over the whole window) opened")

	// No tooltip over the dialog: not left from the hover, and none when
	// the pointer moves on the backdrop over where the button was.
	xdotool(t, "mousemove", "--window", wid, "760", "152")
	for until := time.Now().Add(3 * time.Second); time.Now().Before(until); time.Sleep(200 * time.Millisecond) {
		require.Empty(t, tooltip(t, wid), "a tooltip stays over the open dialog (see %s)", dialog)
	}
}

// tooltip returns a visible window titled ducklm, other than main and the
// 10×10 helpers GTK maps, small enough to be a tooltip ("" when none).
func tooltip(t *testing.T, main string) string {
	t.Helper()
	out, err := exec.Command("xdotool", "search", "--onlyvisible", "--name", "^ducklm$").Output()
	if err != nil {
		return "" // xdotool search exits 1 when nothing matches
	}
	for _, wid := range strings.Fields(string(out)) {
		if wid == main {
			continue
		}
		geo, err := exec.Command("xdotool", "getwindowgeometry", "--shell", wid).Output()
		if err != nil {
			continue // unmapped since the search
		}
		var w, h int
		for _, line := range strings.Split(string(geo), "\n") {
			if v, ok := strings.CutPrefix(line, "WIDTH="); ok {
				w, _ = strconv.Atoi(v)
			}
			if v, ok := strings.CutPrefix(line, "HEIGHT="); ok {
				h, _ = strconv.Atoi(v)
			}
		}
		if w > 20 && h > 10 && w < 800 && h < 300 {
			return wid
		}
	}
	return ""
}
