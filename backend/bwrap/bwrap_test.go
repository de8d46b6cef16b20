package bwrap_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
)

func TestRunReportsOutputExitAndEnvironment(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			spec := sh(t, `printf 'out:%s:%s:%s\n' "$(pwd)" "$HOME" "$DUCK"; read -r line; echo "in:$line"; echo err >&2; exit 3`)
			spec.Env = map[string]string{"DUCK": "quack"}
			spec.Stdin = []byte("hello\n")
			res, err := r.run(context.Background(), spec)
			require.NoError(t, err)
			require.Equal(t, 3, res.ExitCode)
			require.Equal(t, fmt.Sprintf("out:%s:%s:quack\nin:hello\n", spec.Workspace, spec.Workspace), string(res.Stdout))
			require.Equal(t, "err\n", string(res.Stderr))
			require.False(t, res.TimedOut)
			require.False(t, res.Truncated)
			require.Empty(t, res.Signal)
			require.Equal(t, r.name == "sandboxed", res.Sandboxed)
			require.Contains(t, res.Enforced, "timeout")
			t.Logf("enforced: %v", res.Enforced)
		})
	}
}

func TestRunScriptWithInterpreterAndArgs(t *testing.T) {
	t.Parallel()
	for _, r := range runners(t) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			spec := bwrap.Spec{
				Script:    []byte("echo \"script:$1:$2\"\n"),
				Argv:      []string{"a", "b"},
				Workspace: t.TempDir(),
				Limits:    limits(),
			}
			res, err := r.run(context.Background(), spec)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitCode, string(res.Stderr))
			require.Equal(t, "script:a:b\n", string(res.Stdout))
		})
	}
}

func TestRunEnvironmentIsClean(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	res, err := bwrap.Run(context.Background(), sh(t, "env"))
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		name, _, _ := strings.Cut(line, "=")
		require.Contains(t, []string{"PATH", "HOME", "LANG", "PWD"}, name)
	}
}

func TestRunRejectsBadSpecs(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	file := filepath.Join(ws, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for name, spec := range map[string]bwrap.Spec{
		"no command":         {Workspace: ws},
		"relative workspace": {Argv: []string{"true"}, Workspace: "ws"},
		"unclean workspace":  {Argv: []string{"true"}, Workspace: ws + "/../" + filepath.Base(ws)},
		"root workspace":     {Argv: []string{"true"}, Workspace: "/"},
		"missing workspace":  {Argv: []string{"true"}, Workspace: filepath.Join(ws, "missing")},
		"file workspace":     {Argv: []string{"true"}, Workspace: file},
		"bad env name":       {Argv: []string{"true"}, Workspace: ws, Env: map[string]string{"A=B": "c"}},
	} {
		for _, r := range []runner{sandboxed, unsandboxed} {
			_, err := r.run(context.Background(), spec)
			require.Error(t, err, name)
			require.Equal(t, backend.EINVALID, backend.ErrorCode(err), name)
		}
	}
}

func TestSandboxWritesOnlyItsWorkspace(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	home, _ := os.UserHomeDir()
	name := "ducklm-escape-" + strings.TrimPrefix(marker(), "1000.")
	targets := []string{
		"/etc/" + name,
		"/usr/" + name,
		filepath.Join(parent, name),
		"/tmp/" + name, // the sandbox's /tmp is private; the host's must stay untouched
		"/" + name,
	}
	if home != "" && home != "/" {
		targets = append(targets, filepath.Join(home, name))
	}
	script := ""
	for _, p := range targets {
		script += fmt.Sprintf("echo x > %q 2>/dev/null && echo wrote %s; ", p, p)
	}
	script += "echo ok > inside"
	res, err := bwrap.Run(context.Background(), bwrap.Spec{Argv: []string{"/bin/sh", "-c", script}, Workspace: ws, Limits: limits()})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, string(res.Stderr))
	for _, p := range targets {
		_, err := os.Lstat(p)
		require.ErrorIs(t, err, os.ErrNotExist, "the sandbox wrote %s on the host", p)
	}
	// Only the sandbox's private /tmp (which holds this test's temp dirs)
	// accepted writes, and they vanished with it.
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		require.True(t, strings.HasPrefix(line, "wrote /tmp/"), line)
	}
	got, err := os.ReadFile(filepath.Join(ws, "inside"))
	require.NoError(t, err)
	require.Equal(t, "ok\n", string(got))
}

func TestSandboxCannotReadOutsideSystemDirs(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	parent := t.TempDir()
	ws, sibling := filepath.Join(parent, "ws"), filepath.Join(parent, "sibling")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Mkdir(sibling, 0o755))
	secret := filepath.Join(sibling, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o644))
	other := t.TempDir() // a different temp dir altogether
	require.NoError(t, os.WriteFile(filepath.Join(other, "secret"), []byte("s3cret"), 0o644))

	home, _ := os.UserHomeDir()
	cwd, err := os.Getwd() // this source tree
	require.NoError(t, err)
	paths := []string{secret, filepath.Join(other, "secret"), "/root", "/home", "/var", "/run", "/srv", "/mnt", cwd}
	if home != "" {
		paths = append(paths, home)
	}
	script := "cat /etc/shadow; "
	for _, p := range paths {
		script += fmt.Sprintf("ls -A %q >/dev/null 2>&1 && echo visible %s; cat %q 2>/dev/null; ", p, p, p)
	}
	script += "test -r /usr/bin/env && test -r /etc/passwd && echo system-readable"
	res, err := bwrap.Run(context.Background(), bwrap.Spec{Argv: []string{"/bin/sh", "-c", script}, Workspace: ws, Limits: limits()})
	require.NoError(t, err)
	require.Equal(t, "system-readable\n", string(res.Stdout), "stderr: %s", res.Stderr)
}

func TestSandboxNetworkOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	requireCommand(t, "/bin/bash")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)

	spec := bwrap.Spec{Argv: []string{"/bin/bash", "-c", connect}, Workspace: t.TempDir(), Limits: limits()}
	res, err := bwrap.Run(context.Background(), spec)
	require.NoError(t, err)
	require.NotEqual(t, 0, res.ExitCode)
	require.Empty(t, string(res.Stdout))
	require.Empty(t, accepted)

	spec.Network = true
	res, err = bwrap.Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, string(res.Stderr))
	require.Equal(t, "connected\n", string(res.Stdout))
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the listener saw no connection")
	}
}

func TestSandboxHasNoCapabilities(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	res, err := bwrap.Run(context.Background(), sh(t, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; hostname"))
	require.NoError(t, err)
	require.Equal(t, "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nducklm-sandbox\n", string(res.Stdout))
}
