package mcpclient

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
