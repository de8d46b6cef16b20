// Package startup checks what ducklm does before a command does its job:
// the work its packages do when the process starts, and what a headless
// command touches. scripts/bench.sh startup times it against the floor the
// dynamic loader sets.
package startup

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// ducklmBin is $DUCKLM_BIN, or the ducklm binary built from this checkout
// (once for the package's tests).
func ducklmBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DUCKLM_BIN"); bin != "" {
		return bin
	}
	bin, err := built()
	require.NoError(t, err)
	return bin
}

var buildDir string

var built = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(buildDir, "ducklm")
	build := exec.Command("go", "build", "-tags", "webkit2_41", "-o", bin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ducklm: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ducklm-startup-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// initAllowance is what one of ducklm's own packages may allocate while the
// process starts. Every command pays for every package's init, so work a
// package needs only sometimes (compiling schemas and patterns) is done on
// first use. The command table (backend/cli) and the tool catalog's small
// tables fit; a compiled JSON Schema or a set of regular expressions does
// not.
const initAllowance = 64 << 10

// initLine is one line of GODEBUG=inittrace=1.
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

type packageInit struct {
	path          string
	bytes, allocs int
}

// TestDucklmPackagesDoLittleAtStart runs `ducklm version` with the
// runtime's init trace and holds each of ducklm's packages to the
// allowance.
func TestDucklmPackagesDoLittleAtStart(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(ducklmBin(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "DUCKLM_HOME="+filepath.Join(t.TempDir(), "home"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), stderr.String())

	var ours []packageInit
	total := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		b, _ := strconv.Atoi(m[2])
		a, _ := strconv.Atoi(m[3])
		total += b
		if m[1] == "ducklm" || len(m[1]) > 7 && m[1][:7] == "ducklm/" {
			ours = append(ours, packageInit{m[1], b, a})
		}
	}
	require.NotEmpty(t, ours, "no init trace of ducklm's packages in:\n%s", stderr.String())
	sort.Slice(ours, func(i, j int) bool { return ours[i].bytes > ours[j].bytes })
	t.Logf("every package's init allocates %d KB; the most of ducklm's: %s %d KB", total>>10, ours[0].path, ours[0].bytes>>10)
	for _, p := range ours {
		require.LessOrEqual(t, p.bytes, initAllowance,
			"%s allocates %d KB (%d allocations) when the process starts, for every command: do that work on first use", p.path, p.bytes>>10, p.allocs)
	}
}

// TestVersionTouchesNoDataDirectory: `ducklm version` answers from the
// binary alone; it neither creates nor opens the data directory.
func TestVersionTouchesNoDataDirectory(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	cmd := exec.Command(ducklmBin(t), "version")
	cmd.Env = append(os.Environ(), "DUCKLM_HOME="+home)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Regexp(t, `^ducklm \S+ \(go\S+, schema \d+\)\n$`, string(out))
	_, err = os.Stat(home)
	require.ErrorIs(t, err, os.ErrNotExist, "ducklm version made the data directory")
}

// TestNoCollectionBeforeMain: the packages' init allocates past the first
// collection's threshold; backend/boot holds the collector off until main,
// so `ducklm version` (which allocates nothing after) runs none.
func TestNoCollectionBeforeMain(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(ducklmBin(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1", "GOGC=", "DUCKLM_HOME="+filepath.Join(t.TempDir(), "home"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotRegexp(t, `(?m)^gc \d+ @`, string(out), "a collection ran before ducklm version printed")
	require.Regexp(t, `(?m)^ducklm \S+ \(go`, string(out))
}
