package service_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/service"
	"ducklm/backend/tool"
)

// Opening a data directory probes no sandbox (the probe starts bubblewrap
// in a fresh cgroup: tens of milliseconds that `ducklm world ls` and most
// commands never need). The first question probes once, and the service,
// the runtime, the shell tool and web_fetch all go by that one answer.
func TestOpeningProbesNoSandboxUntilAsked(t *testing.T) {
	t.Parallel()
	for _, found := range []bool{true, false} {
		probes := 0
		probe := func() bool { probes++; return found }
		svc, err := service.OpenWith(context.Background(), filepath.Join(t.TempDir(), "home"), service.WithSandboxProbe(service.Options{}, probe))
		require.NoError(t, err)
		_, err = svc.Worlds.Lineage(context.Background()) // what `ducklm world ls` reads
		require.NoError(t, err)
		require.Zero(t, probes, "opening the data directory and listing worlds probed the sandbox")

		require.Equal(t, found, svc.Sandboxed())
		require.Equal(t, found, svc.Sandboxed())
		sh, err := svc.Tools.Get("shell_exec")
		require.NoError(t, err)
		want := tool.RequireSandbox
		if !found {
			want = tool.AllowUnsandboxed // the router asks before every shell step
		}
		require.Equal(t, want, sh.(*tool.Shell).SandboxFrom())
		wf, err := svc.Tools.Get("web_fetch")
		require.NoError(t, err)
		require.Equal(t, want, wf.(*tool.WebFetch).SandboxFrom(), "web_fetch's worker runs a process: the same rule")
		require.Equal(t, 1, probes, "the sandbox was probed more than once")
		require.NoError(t, svc.Close())
	}
}

// A command that will drive a run starts the probe early, beside its own
// work (opening the database, recording the task); the first question
// waits for that probe instead of starting another, and Close waits for it
// so no probe is cut off half-way (it leaves a cgroup and a folder behind).
func TestAnEarlyProbeIsTheOneAnswerAndCloseWaitsForIt(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	probes := 0
	probe := func() bool { probes++; <-release; return true }
	svc, err := service.OpenWith(context.Background(), filepath.Join(t.TempDir(), "home"), service.WithSandboxProbe(service.Options{}, probe))
	require.NoError(t, err)
	svc.ProbeSandboxSoon()
	closed := make(chan error)
	go func() { closed <- svc.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while the probe was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-closed)
	require.True(t, svc.Sandboxed())
	require.Equal(t, 1, probes)
}
