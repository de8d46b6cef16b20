package bwrap

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scriptProbes replaces the probe with results in order (the last one
// repeats) and returns how many probes ran.
func scriptProbes(t *testing.T, results ...probeResult) *int {
	n := new(int)
	oldFn, oldPause, oldAfter := probeFn, probePause, reprobeAfter
	probeMu.Lock()
	oldProbed, oldAt := probed, probedAt
	probedAt = time.Time{}
	probeMu.Unlock()
	probeFn = func() probeResult {
		r := results[min(*n, len(results)-1)]
		*n++
		return r
	}
	probePause = time.Millisecond
	t.Cleanup(func() {
		probeFn, probePause, reprobeAfter = oldFn, oldPause, oldAfter
		probeMu.Lock()
		probed, probedAt = oldProbed, oldAt
		probeMu.Unlock()
	})
	return n
}

// A sandbox that could not start once on a loaded machine does not make
// every later step of the process unsandboxed.
func TestAFailedProbeIsTriedAgain(t *testing.T) {
	failed := probeResult{path: "/usr/bin/bwrap", why: "bubblewrap at /usr/bin/bwrap could not be started: fork/exec: resource temporarily unavailable"}
	works := probeResult{path: "/usr/bin/bwrap", ok: true}

	n := scriptProbes(t, failed, works)
	_, ok, _ := Available()
	require.True(t, ok, "the second try answered")
	require.Equal(t, 2, *n)
	_, ok, _ = Available()
	require.True(t, ok)
	require.Equal(t, 2, *n, "a success is remembered")

	n = scriptProbes(t, failed)
	_, ok, why := Available()
	require.False(t, ok)
	require.Equal(t, failed.why, why)
	require.Equal(t, probeTries, *n, "tried %d times before giving up", probeTries)
	_, ok, _ = Available()
	require.False(t, ok)
	require.Equal(t, probeTries, *n, "a failure is remembered for a while")
	reprobeAfter = 0
	scriptedAgain := *n
	_, _, _ = Available()
	require.Equal(t, scriptedAgain+probeTries, *n, "and probed again after it")

	n = scriptProbes(t, probeResult{why: "bubblewrap (bwrap) is not installed, so steps cannot be sandboxed", lasting: true})
	reprobeAfter = 0
	Available()
	Available()
	require.Equal(t, 2, *n, "a missing bubblewrap is not retried within a probe")
}
