package mcpclient

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/prereq"
)

// TestAServerKeepsAFewWorkspaceProcesses: a server that works in the
// runs' workspaces keeps at most maxWorkspaceConns of them; the one
// started longest ago goes, never its own connection or the one just made.
func TestAServerKeepsAFewWorkspaceProcesses(t *testing.T) {
	s := &server{conns: map[string]*conn{}}
	done := make(chan struct{})
	close(done)
	t0 := time.Now()
	s.conns[""] = &conn{started: t0.Add(-time.Hour), done: done}
	for i := range maxWorkspaceConns {
		s.conns[fmt.Sprintf("/ws/%d", i)] = &conn{started: t0.Add(time.Duration(i) * time.Second), done: done}
	}
	require.Nil(t, s.evictLocked("/ws/3"))
	s.conns["/ws/new"] = &conn{started: t0.Add(time.Minute), done: done}
	evicted := s.evictLocked("/ws/new")
	require.NotNil(t, evicted)
	require.Equal(t, t0, evicted.started, "the workspace process started first goes")
	require.Len(t, s.conns, maxWorkspaceConns+1)
	require.Contains(t, s.conns, "")
	require.Contains(t, s.conns, "/ws/new")
}

// TestOnlyTheFirstCatalogWaitsForTheServers: a server that does not answer
// delays the first catalog by StartWait at most, and no later one.
func TestOnlyTheFirstCatalogWaitsForTheServers(t *testing.T) {
	if _, ok, why := sandboxAvailable(); !ok {
		prereq.Missing(t, "MCP servers run only in the sandbox: %s", why)
	}
	dir := t.TempDir()
	// A server that never answers initialize.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mcp-servers.json"),
		[]byte(`{"servers":[{"name":"mute","command":"/bin/sleep","args":["600"]}]}`), 0o600))
	m := New(Options{Dir: dir, StartWait: 300 * time.Millisecond})
	defer m.Close()
	start := time.Now()
	require.Empty(t, m.Tools())
	first := time.Since(start)
	require.GreaterOrEqual(t, first, 300*time.Millisecond)
	start = time.Now()
	for range 5 {
		require.Empty(t, m.Tools())
	}
	require.Less(t, time.Since(start), 100*time.Millisecond, "later catalogs waited again")
}
