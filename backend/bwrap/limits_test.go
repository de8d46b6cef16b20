package bwrap_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/prereq"
)

// wallBound is how long a step that a limit ends may take on a loaded
// machine: far below the marker sleeps (over 1,000 s) a limit must cut
// short, far above a second so that a busy CI machine passes.
const wallBound = time.Minute

func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			m := marker()
			spec := sh(t, fmt.Sprintf("sleep %s & (sleep %s) & echo started; wait", m, m))
			spec.Limits.Timeout = time.Second
			start := time.Now()
			res, err := r.run(context.Background(), spec)
			require.NoError(t, err)
			require.Less(t, time.Since(start), wallBound)
			require.True(t, res.TimedOut)
			require.Equal(t, "started\n", string(res.Stdout))
			require.Equal(t, "SIGKILL", res.Signal)
			require.Equal(t, 137, res.ExitCode)
			requireGone(t, m)
		})
	}
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			m := marker()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Second, cancel)
			start := time.Now()
			res, err := r.run(ctx, sh(t, fmt.Sprintf("sleep %s & echo started; sleep %s", m, m)))
			require.Less(t, time.Since(start), wallBound)
			require.Error(t, err)
			require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
			require.True(t, errors.Is(err, context.Canceled))
			require.False(t, res.TimedOut)
			require.Equal(t, "started\n", string(res.Stdout))
			requireGone(t, m)
		})
	}
}

func TestCommandExitEndsItsBackgroundProcesses(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			m := marker()
			// The background sleep keeps stdout open; the step must still end
			// when the command does.
			start := time.Now()
			res, err := r.run(context.Background(), sh(t, fmt.Sprintf("sleep %s & echo done", m)))
			require.NoError(t, err)
			require.Less(t, time.Since(start), wallBound)
			require.Equal(t, 0, res.ExitCode)
			require.Equal(t, "done\n", string(res.Stdout))
			requireGone(t, m)
		})
	}
}

func TestSessionEscapeIsKilledByCgroup(t *testing.T) {
	t.Parallel()
	requireCommand(t, "/usr/bin/setsid")
	probe, err := bwrap.RunUnsandboxed(context.Background(), sh(t, "true"))
	require.NoError(t, err)
	if !slices.Contains(probe.Enforced, "cgroup pids") {
		prereq.Missing(t, "no cgroup here: an unsandboxed process that leaves its session survives the step")
	}
	m := marker()
	res, err := bwrap.RunUnsandboxed(context.Background(), sh(t, fmt.Sprintf("setsid sleep %s </dev/null >/dev/null 2>&1 & echo done", m)))
	require.NoError(t, err)
	require.Equal(t, "done\n", string(res.Stdout))
	requireGone(t, m)
}

func TestRunawayOutputIsCut(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			spec := sh(t, "yes | head -c 50000000; yes err | head -c 50000000 >&2; echo finished >&2")
			spec.Limits.OutputBytes = 100000
			start := time.Now()
			res, err := r.run(context.Background(), spec)
			require.NoError(t, err)
			require.Less(t, time.Since(start), wallBound)
			require.False(t, res.TimedOut)
			require.True(t, res.Truncated)
			require.Equal(t, 0, res.ExitCode)
			require.Len(t, res.Stdout, 100000)
			require.Len(t, res.Stderr, 100000)
			require.Equal(t, strings.Repeat("y\n", 50000), string(res.Stdout))
		})
	}
}

func TestEndlessOutputEndsAtTimeout(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			spec := sh(t, "yes")
			spec.Limits.Timeout = 500 * time.Millisecond
			spec.Limits.OutputBytes = 1000
			start := time.Now()
			res, err := r.run(context.Background(), spec)
			require.NoError(t, err)
			require.Less(t, time.Since(start), wallBound)
			require.True(t, res.TimedOut)
			require.True(t, res.Truncated)
			require.Len(t, res.Stdout, 1000)
		})
	}
}

func TestForkBombIsContained(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	m := "ducklm_bomb_" + strings.TrimPrefix(marker(), "1000.")
	// Every process of the bomb is "/bin/sh -c <script>", so the marker in
	// the script names them all. The top shell stays alive, so only the
	// limits end the step.
	spec := sh(t, fmt.Sprintf("%s() { %s | %s & }; %s; sleep 30", m, m, m, m))
	spec.Limits.Timeout = 2 * time.Second
	spec.Limits.Processes = 32

	// Count the bomb's processes while it runs.
	stop := make(chan struct{})
	peak := make(chan int, 1)
	go func() {
		most := 0
		for {
			select {
			case <-stop:
				peak <- most
				return
			case <-time.After(20 * time.Millisecond):
				most = max(most, len(withMarker(m)))
			}
		}
	}()
	start := time.Now()
	res, err := bwrap.Run(context.Background(), spec)
	close(stop)
	most := <-peak
	require.NoError(t, err)
	require.Less(t, time.Since(start), 25*time.Second) // the top shell's own sleep is 30 s
	// The step ends at the timeout, or sooner when the full process table
	// refused the top shell its own fork (it then exits 2: "Cannot fork");
	// either way the bomb is contained.
	require.True(t, res.TimedOut || (res.ExitCode != 0 && strings.Contains(string(res.Stderr), "fork")),
		"exit %d after %v, stderr %q, enforced %v", res.ExitCode, res.Duration, res.Stderr, res.Enforced)
	t.Logf("fork bomb: peak %d processes, exit %d, enforced %v, took %v", most, res.ExitCode, res.Enforced, res.Duration)
	if slices.Contains(res.Enforced, "cgroup pids") || slices.Contains(res.Enforced, "rlimit nproc") {
		require.LessOrEqual(t, most, 32+2)
	}
	requireGone(t, m)
	// The host can still start processes.
	out, err := bwrap.RunUnsandboxed(context.Background(), sh(t, "echo alive"))
	require.NoError(t, err)
	require.Equal(t, "alive\n", string(out.Stdout))
}

func TestProcessLimitIsEnforced(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	requireCommand(t, "/usr/bin/perl")
	spec := bwrap.Spec{
		Argv: []string{"/usr/bin/perl", "-e", `
			my $n = 0;
			for (1..200) { my $p = fork; last unless defined $p; if ($p == 0) { sleep 30; exit } $n++ }
			print "$n\n";`},
		Workspace: t.TempDir(),
		Limits:    limits(),
	}
	spec.Limits.Processes = 20
	res, err := bwrap.Run(context.Background(), spec)
	require.NoError(t, err)
	if !slices.Contains(res.Enforced, "cgroup pids") && !slices.Contains(res.Enforced, "rlimit nproc") {
		prereq.Missing(t, "no process limit can be enforced here (enforced: %v)", res.Enforced)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	require.NoError(t, err, "stdout %q stderr %q", res.Stdout, res.Stderr)
	require.Less(t, n, 20, "the step started %d processes", n)
	require.Greater(t, n, 5)
}

func TestMemoryLimitStopsABigAllocation(t *testing.T) {
	t.Parallel()
	requireCommand(t, "/usr/bin/perl")
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			spec := bwrap.Spec{
				Argv:      []string{"/usr/bin/perl", "-e", `my $x = "x" x (512 * 1024 * 1024); print "allocated\n"`},
				Workspace: t.TempDir(),
				Limits:    limits(),
			}
			spec.Limits.MemoryBytes = 64 << 20
			res, err := r.run(context.Background(), spec)
			require.NoError(t, err)
			require.NotEqual(t, 0, res.ExitCode)
			require.False(t, res.TimedOut)
			require.Empty(t, string(res.Stdout))
			t.Logf("memory: exit %d signal %q enforced %v stderr %q", res.ExitCode, res.Signal, res.Enforced, res.Stderr)
		})
	}
}

func TestFileSizeLimitStopsABigWrite(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			spec := sh(t, "head -c 3000000 /dev/zero > big")
			spec.Limits.FileBytes = 1000000
			res, err := r.run(context.Background(), spec)
			require.NoError(t, err)
			require.NotEqual(t, 0, res.ExitCode)
			fi, err := os.Stat(filepath.Join(spec.Workspace, "big"))
			require.NoError(t, err)
			require.LessOrEqual(t, fi.Size(), int64(1000000))
		})
	}
}

func TestCPULimitStopsABusyLoop(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			spec := sh(t, "while :; do :; done")
			spec.Limits.CPUSeconds = 1
			// Only the CPU limit may end it: on a loaded machine one CPU
			// second can take many seconds of wall time.
			spec.Limits.Timeout = 5 * time.Minute
			res, err := r.run(context.Background(), spec)
			require.NoError(t, err)
			require.False(t, res.TimedOut)
			// SIGXCPU (24) at the soft limit, SIGKILL at the hard one.
			require.Contains(t, []int{128 + 24, 128 + 9}, res.ExitCode)
		})
	}
}

// A process that bounds its own memory (a ducklm worker: a Go program sets
// RLIMIT_DATA itself) runs under no RLIMIT_AS, which counts the address
// space a Go runtime and its race detector reserve and never use; every
// other process does, unless a memory cgroup holds it.
func TestAProcessThatBoundsItsOwnMemoryGetsNoAddressLimit(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			addressLimit := func(own bool) (string, []string) {
				spec := sh(t, "grep 'Max address space' /proc/self/limits")
				spec.Limits.MemoryBytes = 64 << 20
				spec.OwnMemoryLimit = own
				res, err := r.run(context.Background(), spec)
				require.NoError(t, err)
				require.Equal(t, 0, res.ExitCode, "stderr %q", res.Stderr)
				return strings.Fields(string(res.Stdout))[3], res.Enforced
			}
			own, enforced := addressLimit(true)
			require.Equal(t, "unlimited", own)
			require.NotContains(t, enforced, "rlimit as")
			other, enforced := addressLimit(false)
			if slices.Contains(enforced, "rlimit as") {
				require.Equal(t, strconv.Itoa(64<<20), other)
			} else {
				require.Contains(t, enforced, "cgroup memory")
			}
		})
	}
}
