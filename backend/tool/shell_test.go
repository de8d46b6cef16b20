package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/prereq"
	"ducklm/backend/tool"
)

func TestShellReportsResultAndChangedFiles(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	f := setup(t)
	f.write(t, "keep.txt", "same")
	f.write(t, "edit.txt", "before")
	f.write(t, "gone.txt", "bye")
	past := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(f.ws, "edit.txt"), past, past))

	cmd := "echo after > edit.txt; rm gone.txt; mkdir -p out/deep; echo x > out/deep/new.txt; ln -s keep.txt link; echo done; echo warn >&2; exit 4"
	res, err := (&tool.Shell{}).Run(context.Background(), f.call(t, "shell_exec", map[string]any{"command": cmd}))
	require.NoError(t, err)
	require.Equal(t, 4, res.ExitCode)
	require.Equal(t, "done\n", string(res.Stdout))
	require.Equal(t, "warn\n", string(res.Stderr))
	require.True(t, res.Sandboxed)
	require.False(t, res.TimedOut)
	require.Equal(t, []string{"edit.txt", "gone.txt", "link", "out/deep/new.txt"}, res.FilesChanged)
	var out struct {
		Enforced []string `json:"enforced"`
	}
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.Contains(t, out.Enforced, "timeout")
}

func TestShellTimeoutSecondsShortensTheLimit(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	f := setup(t)
	start := time.Now()
	res, err := (&tool.Shell{}).Run(context.Background(), f.call(t, "shell_exec", map[string]any{"command": "echo hi; sleep 30", "timeout_seconds": 1}))
	require.NoError(t, err)
	require.True(t, res.TimedOut)
	require.Equal(t, "hi\n", string(res.Stdout))
	require.Less(t, time.Since(start), 20*time.Second, "the command sleeps 30 s")

	// It cannot lengthen it.
	call := f.call(t, "shell_exec", map[string]any{"command": "sleep 30", "timeout_seconds": 60})
	call.Limits.Timeout = 300 * time.Millisecond
	res, err = (&tool.Shell{}).Run(context.Background(), call)
	require.NoError(t, err)
	require.True(t, res.TimedOut)
	require.Less(t, res.Duration, 5*time.Second)
}

func TestShellNetworkFollowsTheCall(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	if _, err := os.Stat("/bin/bash"); err != nil {
		prereq.Missing(t, "bash is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	f := setup(t)
	cmd := fmt.Sprintf("bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d' 2>/dev/null && echo connected || echo refused", ln.Addr().(*net.TCPAddr).Port)
	call := f.call(t, "shell_exec", map[string]any{"command": cmd})
	res, err := (&tool.Shell{}).Run(context.Background(), call)
	require.NoError(t, err)
	require.Equal(t, "refused\n", string(res.Stdout))

	call.Network = true
	res, err = (&tool.Shell{}).Run(context.Background(), call)
	require.NoError(t, err)
	require.Equal(t, "connected\n", string(res.Stdout))
}

func TestShellCancelIsAnError(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	res, err := (&tool.Shell{Sandbox: tool.AllowUnsandboxed}).Run(ctx, f.call(t, "shell_exec", map[string]any{"command": "echo started; sleep 30"}))
	require.Error(t, err)
	require.True(t, errors.Is(err, context.Canceled))
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
	require.Equal(t, "started\n", string(res.Stdout))
}

func TestShellRejectsBadArgs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, raw := range []string{
		``,
		`{}`,
		`{"command": ""}`,
		`{"command": 3}`,
		`{"command": "true", "cwd": "/"}`,
		`{"command": "true", "timeout_seconds": 0}`,
		`{"command": "true", "timeout_seconds": 1.5}`,
		`{"command": "true"} {"command": "true"}`,
		`[]`,
	} {
		call := f.call(t, "shell_exec", nil)
		call.Args = json.RawMessage(raw)
		_, err := (&tool.Shell{}).Run(context.Background(), call)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%s: %v", raw, err)
	}
	call := f.call(t, "shell_exec", map[string]any{"command": "true"})
	call.Workspace = "relative"
	_, err := (&tool.Shell{}).Run(context.Background(), call)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

// Not parallel: it plays a machine without bubblewrap for the package.
func TestShellWithoutSandbox(t *testing.T) {
	defer tool.SetSandboxUnavailable()()
	f := setup(t)
	call := f.call(t, "shell_exec", map[string]any{"command": "echo hi > out.txt; cat out.txt"})

	_, err := (&tool.Shell{}).Run(context.Background(), call)
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "not installed")
	_, err = os.Stat(filepath.Join(f.ws, "out.txt"))
	require.ErrorIs(t, err, os.ErrNotExist, "a refused call ran")

	res, err := (&tool.Shell{Sandbox: tool.AllowUnsandboxed}).Run(context.Background(), call)
	require.NoError(t, err)
	require.False(t, res.Sandboxed)
	require.Equal(t, "hi\n", string(res.Stdout))
	require.Equal(t, []string{"out.txt"}, res.FilesChanged)
}

// Not parallel: it plays a machine without bubblewrap for the package. A
// Shell whose mode comes from SandboxFrom asks for it when a command
// runs, not when the Shell is made: the service probes bubblewrap when a
// step first needs it, so commands that run no step never pay the probe.
func TestShellTakesItsModeWhenACommandRuns(t *testing.T) {
	defer tool.SetSandboxUnavailable()()
	f := setup(t)
	call := f.call(t, "shell_exec", map[string]any{"command": "echo hi"})
	asked, mode := 0, tool.RequireSandbox
	sh := &tool.Shell{SandboxFrom: func() tool.SandboxMode { asked++; return mode }}
	require.Zero(t, asked, "making the Shell asked for its mode")

	_, err := sh.Run(context.Background(), call)
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err), "RequireSandbox refuses without bubblewrap")
	require.Equal(t, 1, asked)

	mode = tool.AllowUnsandboxed
	res, err := sh.Run(context.Background(), call)
	require.NoError(t, err)
	require.Equal(t, "hi\n", string(res.Stdout))
	require.Equal(t, 2, asked)
}
