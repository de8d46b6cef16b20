package desktop_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/prereq"
	"ducklm/backend/service"
	"ducklm/backend/settings"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/tests/xwindow"
)

// localDatabase is Home's Database line on a data directory under /tmp.
var localDatabase = regexp.MustCompile(`database\s+/tmp/`)

// TestDesktopRestartNowOpensTheSavedDatabase: a window on a team's
// PostgreSQL whose data directory holds a local world says so on Home
// ("This machine's data"); "Switch back to the local database" and then
// "Restart now", clicked where the window shows those words, close the
// window and start ducklm again (the same process, re-executed once the
// data directory is free), whose new window opens on this machine's
// database: Home no longer offers the local data, and the world made
// before the switch is there.
func TestDesktopRestartNowOpensTheSavedDatabase(t *testing.T) {
	bin := binary(t)
	if _, err := exec.LookPath("tesseract"); err != nil {
		prereq.Missing(t, "tesseract (Debian's tesseract-ocr) reads what the window shows: %v", err)
	}
	url := pgtest.URL(t)
	home := t.TempDir()
	env := append(os.Environ(), "DUCKLM_HOME="+home, "OLLAMA_HOST="+startFakeOllama(t), "GDK_BACKEND=x11",
		"XDG_DATA_HOME="+t.TempDir(), service.DatabaseURLEnv+"=")

	// A world on this machine's database, then the team's address saved for the next start.
	world := exec.Command(bin, "world", "new", "--example", "branching_grid", "--name", "amber lighthouse")
	world.Env = env
	out, err := world.CombinedOutput()
	require.NoError(t, err, "ducklm world new: %s", out)
	require.NoError(t, settings.SaveDatabase(home, url))

	w := &teamWindow{name: "restart", env: env}
	w.cmd, w.out = launch(t, bin, env)
	pid := w.cmd.Process.Pid
	w.wid = xwindow.OfProcess(t, pid)
	w.reads(t, "Home says where the local data is", func(s string) bool {
		return strings.Contains(s, "machine") && strings.Contains(s, "untouched")
	})
	w.click(t, "switch", "Switch back to the local database")
	w.reads(t, "the switch is saved and the window offers its restart", func(s string) bool {
		return strings.Contains(s, "saved") && strings.Contains(s, "restart now")
	})
	old := w.wid
	w.click(t, "restart", "Restart now")

	// The same process starts again: a new window, on the local database.
	w.out.waitFor(t, "starting again", 30*time.Second)
	w.out.waitFor(t, "window ready", 90*time.Second)
	w.out.waitFor(t, "overview served", 60*time.Second)
	require.Nil(t, w.cmd.ProcessState, "the process was re-executed, not ended")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if w.wid = xwindow.OfProcess(t, pid); w.wid != old || time.Now().After(deadline) {
			break
		}
	}
	w.screen(t, bin, "worlds")
	w.reads(t, "the new window lists the local world", func(s string) bool {
		return strings.Contains(s, "amber lighthouse")
	})
	w.screen(t, bin, "runs")
	// The Database line names the file in the data directory (cut to the panel's width), not postgres://.
	w.reads(t, "Home's database is the data directory's, and it no longer offers the local data", func(s string) bool {
		return localDatabase.MatchString(s) && !strings.Contains(s, "postgres://") && !strings.Contains(s, "untouched")
	})
	got, err := settings.LoadDatabase(home)
	require.NoError(t, err)
	require.Empty(t, got, "switched back")
	require.NotContains(t, w.out.String(), "level=ERROR")
}
