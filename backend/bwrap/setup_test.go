package bwrap_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/prereq"
)

// runner is Run or RunUnsandboxed, so a behaviour can be checked on both.
type runner struct {
	name string
	run  func(context.Context, bwrap.Spec) (bwrap.Result, error)
}

var (
	sandboxed   = runner{"sandboxed", bwrap.Run}
	unsandboxed = runner{"unsandboxed", bwrap.RunUnsandboxed}
)

// requireSandbox skips the test where bubblewrap cannot run (in CI, fails it).
func requireSandbox(t *testing.T) {
	t.Helper()
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "%s", why)
	}
}

// runners returns the runners that can run here.
func runners(t *testing.T) []runner {
	if _, ok, _ := bwrap.Available(); ok {
		return []runner{sandboxed, unsandboxed}
	}
	return []runner{unsandboxed}
}

// limits are small enough that a test ends in seconds.
func limits() backend.Limits {
	return backend.Limits{
		Timeout:     10 * time.Second,
		MemoryBytes: 256 << 20,
		CPUSeconds:  10,
		FileBytes:   16 << 20,
		OutputBytes: 64 << 10,
		Processes:   64,
	}
}

// sh is a spec running script with /bin/sh -c in a fresh workspace.
func sh(t *testing.T, script string) bwrap.Spec {
	return bwrap.Spec{Argv: []string{"/bin/sh", "-c", script}, Workspace: t.TempDir(), Limits: limits()}
}

// marker returns a sleep argument no other process on the machine has, so
// that a process can be found by its command line.
func marker() string {
	return fmt.Sprintf("1000.%09d", rand.IntN(1e9))
}

// requireGone waits briefly for every process whose command line holds
// marker to be gone, and fails if one survives.
func requireGone(t *testing.T, marker string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		left = withMarker(marker)
		if len(left) == 0 {
			return
		}
	}
	require.Empty(t, left, "processes survived the step")
}

func withMarker(marker string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		out = append(out, filepath.Base(d)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

func requireCommand(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		prereq.Missing(t, "%s is not installed", path)
	}
}
