// Package package_test checks the Debian package as a user meets it: the
// linters' verdicts, an install with apt, the menu entry launched as a
// desktop launches it, and a removal that leaves the data directory alone.
// It installs into /usr, so it needs root (CI runs it as root).
package package_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/png"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/service"
	"ducklm/tests/xwindow"
)

// deb returns the package under test, or skips outside CI when it cannot run.
func deb(t *testing.T) string {
	t.Helper()
	ci := os.Getenv("CI") == "true"
	skipOrFail := func(why string) {
		if ci {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	if os.Geteuid() != 0 {
		skipOrFail("the package test installs into /usr and needs root")
	}
	path := os.Getenv("DUCKLM_DEB")
	if path == "" {
		skipOrFail("DUCKLM_DEB is not set: run through `make test-package`, which builds the package")
	}
	_, err := os.Stat(path)
	require.NoError(t, err, "the package %s", path)
	for _, tool := range []string{"lintian", "desktop-file-validate", "appstreamcli", "apt-get", "dpkg-deb", "gtk-launch", "xdotool", "import"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s is missing (make test installs it)", tool)
	}
	require.NotEmpty(t, os.Getenv("DISPLAY"), "the launch needs a display (scripts/with-display.sh starts Xvfb)")
	return path
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// apt runs apt-get as a user's package manager would, waiting for the dpkg
// lock when someone else holds it; home is the HOME it runs with.
func apt(t *testing.T, home string, args ...string) string {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("apt-get %s: %v", args[0], time.Since(start).Round(time.Millisecond)) }()
	return run(t, []string{"HOME=" + home, "DEBIAN_FRONTEND=noninteractive"}, "apt-get",
		append([]string{"-y", "-q", "-o", "DPkg::Lock::Timeout=120", "--no-install-recommends"}, args...)...)
}

// treeHash is a digest of every path, mode and byte under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}))
	sort.Strings(paths)
	for _, p := range paths {
		info, err := os.Lstat(p)
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %v %d\n", rel, info.Mode(), info.Size())
		if info.Mode().IsRegular() {
			f, err := os.Open(p)
			require.NoError(t, err)
			_, err = io.Copy(h, f)
			f.Close()
			require.NoError(t, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// newPaths lists the paths under dir that are not in before.
func newPaths(t *testing.T, dir string, before []string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range before {
		seen[p] = true
	}
	var added []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !seen[p] {
			added = append(added, p)
		}
		return err
	}))
	return added
}

// seed makes a data directory with a migrated database and a recorded run.
func seed(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	svc, err := service.Open(ctx, dir)
	require.NoError(t, err)
	defer svc.Close()
	_, err = svc.Ledger.Append(ctx, backend.NewID(backend.KindRun), 0,
		backend.Event{Type: "task.received", Payload: []byte(`{"task":"report the hostname"}`), Reality: backend.ExternalReal})
	require.NoError(t, err)
}

// The package version is the binary's git describe made a Debian version,
// ordered as releases are: an untagged commit below the first tag, a commit
// after a tag above it.
func TestPackageDebianVersion(t *testing.T) {
	script, err := filepath.Abs("../../scripts/package.sh")
	require.NoError(t, err)
	date := strings.TrimSpace(run(t, nil, "git", "log", "-1", "--format=%cd", "--date=format:%Y%m%d"))
	for describe, want := range map[string]string{
		"v1.2.0":                 "1.2.0",
		"v1.2.0-3-gabc1234":      "1.2.0+3.gabc1234",
		"1.2.0-3-gabc1234-dirty": "1.2.0+3.gabc1234.dirty",
		"abc1234":                "0.0~git" + date + ".abc1234",
		"abc1234-dirty":          "0.0~git" + date + ".abc1234.dirty",
		"52f116a":                "0.0~git" + date + ".52f116a", // a commit that starts with a digit is no tag
		"1234567-dirty":          "0.0~git" + date + ".1234567.dirty",
	} {
		got := strings.TrimSpace(run(t, nil, script, "--debian-version", describe))
		require.Equal(t, want, got, describe)
		run(t, nil, "dpkg", "--validate-version", got)
	}
	for _, order := range [][2]string{{"0.0~git20261201.abc1234", "1.2.0"}, {"1.2.0", "1.2.0+3.gabc1234"}, {"1.2.0+3.gabc1234", "1.2.1"}} {
		run(t, nil, "dpkg", "--compare-versions", order[0], "lt", order[1])
	}
}

func TestPackageLintersPass(t *testing.T) {
	pkg := deb(t)
	// lintian: errors fail; warnings are printed for the reader.
	start := time.Now()
	out := run(t, nil, "lintian", "--fail-on", "error", "--tag-display-limit", "0", pkg)
	require.NotContains(t, out, "\nE: ", out)
	t.Logf("lintian (%v):\n%s", time.Since(start).Round(time.Millisecond), out)

	root := t.TempDir()
	run(t, nil, "dpkg-deb", "-x", pkg, root)
	run(t, nil, "desktop-file-validate", filepath.Join(root, "usr/share/applications/ducklm.desktop"))
	// The component id stays "ducklm" (the name of the desktop file and the
	// binary) until the project has a domain of its own for a reverse-DNS id.
	run(t, nil, "appstreamcli", "validate", "--no-net", "--override=cid-desktopapp-is-not-rdns=info",
		filepath.Join(root, "usr/share/metainfo/ducklm.metainfo.xml"))

	for s := 16; s <= 512; s *= 2 {
		f, err := os.Open(filepath.Join(root, fmt.Sprintf("usr/share/icons/hicolor/%dx%d/apps/ducklm.png", s, s)))
		require.NoError(t, err)
		cfg, err := png.DecodeConfig(f)
		f.Close()
		require.NoError(t, err)
		require.Equal(t, [2]int{s, s}, [2]int{cfg.Width, cfg.Height})
	}
	for _, p := range []string{"usr/bin/ducklm", "usr/share/man/man1/ducklm.1.gz", "usr/share/bash-completion/completions/ducklm"} {
		_, err := os.Stat(filepath.Join(root, p))
		require.NoError(t, err, p)
	}

	// Depends names the WebKitGTK and GTK the binary links, and bubblewrap.
	control := run(t, nil, "dpkg-deb", "-f", pkg, "Depends", "Recommends", "Version")
	for _, want := range []string{"libwebkit2gtk-4.1-0", "libgtk-3-0", "bubblewrap", "Recommends: chromium"} {
		require.Contains(t, control, want)
	}
	// The version is the one the binary prints.
	printed := strings.Fields(run(t, nil, filepath.Join(root, "usr/bin/ducklm"), "version"))[1]
	version := strings.TrimSpace(run(t, nil, "dpkg-deb", "-f", pkg, "Version"))
	sha := strings.TrimSuffix(printed, "-dirty")
	if i := strings.LastIndex(sha, "-g"); i >= 0 {
		sha = sha[i+2:]
	}
	sha = strings.TrimPrefix(sha, "v")
	require.Contains(t, version, sha[:min(7, len(sha))], "package %s, binary %s", version, printed)
	// No maintainer scripts: nothing runs at install or removal.
	ctrl := t.TempDir()
	run(t, nil, "dpkg-deb", "-e", pkg, ctrl)
	for _, script := range []string{"preinst", "postinst", "prerm", "postrm"} {
		_, err := os.Stat(filepath.Join(ctrl, script))
		require.True(t, os.IsNotExist(err), "the package has a %s", script)
	}
}

// upgraded is the same package with a higher version, as the next release
// would be: dpkg-deb repacks it with only the Version changed.
func upgraded(t *testing.T, pkg string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	run(t, nil, "dpkg-deb", "-R", pkg, dir)
	control := filepath.Join(dir, "DEBIAN", "control")
	b, err := os.ReadFile(control)
	require.NoError(t, err)
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "Version: "); ok {
			line = "Version: " + v + "+1"
		}
		lines = append(lines, line)
	}
	require.NoError(t, os.WriteFile(control, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	out := filepath.Join(t.TempDir(), "ducklm_next.deb")
	run(t, nil, "dpkg-deb", "--root-owner-group", "-Znone", "-b", dir, out)
	return out
}

func TestPackageInstallLaunchRemove(t *testing.T) {
	pkg := deb(t)
	next := upgraded(t, pkg)

	// The user's data: a fake home for apt's runs, and a DUCKLM_HOME.
	home := t.TempDir()
	userData := filepath.Join(home, ".local", "share", "ducklm")
	seed(t, userData)
	data := filepath.Join(t.TempDir(), "data")
	seed(t, data)
	userHash, dataHash := treeHash(t, userData), treeHash(t, data)
	userBefore := newPaths(t, userData, nil)

	t.Cleanup(func() {
		// Leave the machine as it was, whatever failed.
		exec.Command("apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=120", "purge", "ducklm").Run()
	})
	apt(t, home, "install", "--reinstall", "--allow-downgrades", pkg)
	require.Equal(t, dataHash, treeHash(t, data), "install changed the data directory")
	require.Equal(t, userHash, treeHash(t, userData), "install changed ~/.local/share/ducklm")
	out := apt(t, home, "install", next)
	require.Contains(t, out, "Unpacking ducklm", out)
	require.Equal(t, dataHash, treeHash(t, data), "upgrade changed the data directory")
	require.Equal(t, userHash, treeHash(t, userData), "upgrade changed ~/.local/share/ducklm")
	require.Contains(t, run(t, nil, "/usr/bin/ducklm", "version"), "ducklm ")

	// Launch the installed entry as a desktop does, on the data directory.
	env := []string{"HOME=" + home, "DUCKLM_HOME=" + data}
	start := time.Now()
	launch(t, env)
	wid := xwindow.Main(t)
	t.Logf("window %s after %v", wid, time.Since(start).Round(time.Millisecond))
	pid := windowPID(t, wid)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	require.NoError(t, err)
	require.Equal(t, "/usr/bin/ducklm", exe, "the window is the installed binary")
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	require.NoError(t, err)
	require.Contains(t, string(environ), "\x00DUCKLM_HOME="+data+"\x00")
	shot := filepath.Join(t.TempDir(), "launched.png")
	require.Eventually(t, func() bool {
		xwindow.Capture(t, wid, shot)
		return xwindow.Drawn(t, shot) == nil
	}, 30*time.Second, time.Second, "the launched window stays blank")

	// The entry's actions run `ducklm open …`: with the window open they
	// hand their screen to it and exit at once, and the window shows it.
	prev := shot
	for i, action := range desktopActions(t, "/usr/share/applications/ducklm.desktop") {
		fields := strings.Fields(action)
		require.Equal(t, "ducklm", fields[0])
		run(t, env, fields[0], fields[1:]...)
		next := filepath.Join(t.TempDir(), fmt.Sprintf("action-%d.png", i))
		require.Eventually(t, func() bool {
			xwindow.Capture(t, wid, next)
			return xwindow.Difference(t, prev, next) > 0.02
		}, 20*time.Second, 500*time.Millisecond, "the window did not change to the screen of %q", action)
		prev = next
	}
	require.NoError(t, syscall.Kill(pid, 0), "the window is still running after the actions")

	// A second launch from the menu raises the running window: the new
	// process hands over and exits, and one window stays.
	launch(t, env)
	require.Eventually(t, func() bool {
		pids := instances(t, data)
		return len(pids) == 1 && pids[0] == pid
	}, 20*time.Second, 200*time.Millisecond, "a second launch left another process running: %v", instances(t, data))
	require.Len(t, strings.Fields(xwindow.Xdotool(t, "search", "--onlyvisible", "--name", "^ducklm$")), len(strings.Fields(xwindow.Xdotool(t, "search", "--onlyvisible", "--pid", strconv.Itoa(pid), "--name", "^ducklm$"))),
		"every ducklm window belongs to the first process")

	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 20*time.Second, 100*time.Millisecond, "the window did not exit")
	// The app used its data directory, and the session's own data under
	// HOME (WebKit's); from here on nothing may change either.
	dataHash, userHash = treeHash(t, data), treeHash(t, userData)
	for _, p := range newPaths(t, userData, userBefore) {
		t.Logf("the window wrote %s", p)
	}

	apt(t, home, "remove", "ducklm")
	_, err = os.Stat("/usr/bin/ducklm")
	require.True(t, os.IsNotExist(err), "remove left /usr/bin/ducklm")
	require.Equal(t, dataHash, treeHash(t, data), "remove changed the data directory")
	require.Equal(t, userHash, treeHash(t, userData), "remove changed ~/.local/share/ducklm")
}

// launch runs `gtk-launch ducklm` as a menu click does. The window it
// starts inherits gtk-launch's output, so that goes to a file, not a pipe
// that would stay open as long as the window.
func launch(t *testing.T, env []string) {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), "gtk-launch.log"))
	require.NoError(t, err)
	defer log.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "gtk-launch", "ducklm")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Run()
	out, _ := os.ReadFile(log.Name())
	require.NoError(t, err, "gtk-launch ducklm: %s", out)
}

// instances lists the running /usr/bin/ducklm processes on the data
// directory dir.
func instances(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || exe != "/usr/bin/ducklm" {
			continue
		}
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && strings.Contains(string(environ), "\x00DUCKLM_HOME="+dir+"\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// desktopActions returns the Exec lines of the entry's actions.
func desktopActions(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var execs []string
	inAction := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "[") {
			inAction = strings.HasPrefix(line, "[Desktop Action ")
		}
		if v, ok := strings.CutPrefix(line, "Exec="); ok && inAction {
			execs = append(execs, v)
		}
	}
	require.Len(t, execs, 2, "the entry has the actions New task and Runs")
	return execs
}

func windowPID(t *testing.T, wid string) int {
	t.Helper()
	pid, err := strconv.Atoi(xwindow.Xdotool(t, "getwindowpid", wid))
	require.NoError(t, err)
	return pid
}
