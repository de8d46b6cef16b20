package mcpclient

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
	"ducklm/backend/settings"
)

// The states of a server.
const (
	stateIdle     = "not started"
	stateStarting = "starting"
	stateReady    = "ready"
	stateFailed   = "failed"
)

// connectWait bounds a server's start: the process up and its answer to
// initialize and tools/list.
const connectWait = 30 * time.Second

// server is one configured MCP server: its connections (one for listing
// and for the calls of a server with its own folder; one per run workspace
// for a server that works in the run's workspace) and its tools.
type server struct {
	m *Manager
	// startMu lets one start at a time happen: concurrent calls (a step,
	// the catalog, Settings → Tools) wait for it and share its process.
	startMu sync.Mutex

	mu      sync.Mutex
	cfg     settings.MCPServer
	st      string
	err     string
	tools   []toolDef
	refused []string
	conns   map[string]*conn // by workspace ("": the server's own folder)
}

func newServer(m *Manager, cfg settings.MCPServer) *server {
	return &server{m: m, cfg: cfg, st: stateIdle, conns: map[string]*conn{}}
}

func (s *server) config() settings.MCPServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

func (s *server) setConfig(c settings.MCPServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = c
}

func (s *server) state() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *server) toolList() []toolDef {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

func (s *server) safe(tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.cfg.Safe, tool)
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := ServerStatus{MCPServer: s.cfg, State: s.st, Error: s.err, Refused: s.refused, Tools: []ToolStatus{}}
	for _, t := range s.tools {
		out.Tools = append(out.Tools, ToolStatus{Name: t.name, Catalog: CatalogName(s.cfg.Name, t.name), Description: t.description,
			ReadOnlyHint: t.readOnly, Safe: slices.Contains(s.cfg.Safe, t.name)})
	}
	return out
}

// refresh connects the server's own connection when it has none and lists
// its tools.
func (s *server) refresh(ctx context.Context) error {
	s.mu.Lock()
	if s.st != stateReady {
		s.st, s.err = stateStarting, ""
	}
	s.mu.Unlock()
	c, err := s.conn(ctx, "", nil)
	if err == nil {
		err = s.list(ctx, c)
	}
	if err != nil {
		s.mu.Lock()
		s.st, s.err = stateFailed, backend.ErrorMessage(err)
		s.mu.Unlock()
	}
	return err
}

// list asks the server for its tools and keeps those ducklm can use.
func (s *server) list(ctx context.Context, c *conn) error {
	ctx, cancel := context.WithTimeout(ctx, connectWait)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return backend.Errorf(backend.EUNAVAILABLE, "MCP server %s did not list its tools: %s", s.config().Name, c.why(err))
		}
		tools = append(tools, t)
	}
	kept, refused := checkTools(s.config().Name, tools)
	s.mu.Lock()
	s.tools, s.refused, s.st, s.err = kept, refused, stateReady, ""
	s.mu.Unlock()
	for _, r := range refused {
		s.m.o.Log.Warn("mcp tool left out", "why", r)
	}
	return nil
}

// conn returns the live connection for workspace ws, starting the server
// when it has none (or the last one ended).
func (s *server) conn(ctx context.Context, ws string, wsID *backend.FolderID) (*conn, error) {
	key := connKey(ws, wsID)
	s.mu.Lock()
	c := s.conns[key]
	if c != nil && !c.ended() {
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	c = s.conns[key]
	if c != nil && !c.ended() {
		s.mu.Unlock()
		return c, nil // started meanwhile
	}
	cfg := s.cfg
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	if err := s.m.base.Err(); err != nil {
		return nil, backend.Errorf(backend.EUNAVAILABLE, "ducklm is closing, so MCP server %s was not started", cfg.Name)
	}
	cctx, cancel := context.WithTimeout(ctx, connectWait)
	defer cancel()
	onChange := func() {
		// tools/list_changed: list again, off the notification's goroutine.
		go func() {
			s.mu.Lock()
			own := s.conns[""]
			s.mu.Unlock()
			if own != nil && !own.ended() {
				_ = s.list(s.m.base, own)
			}
		}()
	}
	var err error
	if cfg.Stdio() {
		c, err = s.m.startStdio(cctx, cfg, ws, wsID, onChange)
	} else {
		c, err = s.m.connectURL(cctx, cfg, onChange)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	old := s.conns[key]
	s.conns[key] = c
	evict := s.evictLocked(key)
	s.mu.Unlock()
	if old != nil && old != c {
		old.close()
	}
	if evict != nil {
		evict.close()
	}
	return c, nil
}

// connKey names a server's connection: "" for its own folder, else the
// workspace's path and, when the run recorded it, the folder's identity,
// so a new folder at an old path never reaches the process that was given
// the old one.
func connKey(ws string, id *backend.FolderID) string {
	if ws == "" || id == nil {
		return ws
	}
	return fmt.Sprintf("%s\x00%d:%d", ws, id.Dev, id.Inode)
}

// maxWorkspaceConns bounds the processes a server that works in the runs'
// workspaces keeps, one per workspace: the one started longest ago goes.
const maxWorkspaceConns = 4

// evictLocked removes and returns the oldest workspace connection other
// than keep when there are too many (nil: none).
func (s *server) evictLocked(keep string) *conn {
	n, oldest := 0, ""
	for ws, c := range s.conns {
		if ws == "" {
			continue
		}
		n++
		if ws != keep && (oldest == "" || c.started.Before(s.conns[oldest].started)) {
			oldest = ws
		}
	}
	if n <= maxWorkspaceConns || oldest == "" {
		return nil
	}
	c := s.conns[oldest]
	delete(s.conns, oldest)
	return c
}

// drop forgets c (it ended or misbehaved) and stops it.
func (s *server) drop(ws string, c *conn) {
	s.mu.Lock()
	if s.conns[ws] == c {
		delete(s.conns, ws)
	}
	s.mu.Unlock()
	c.close()
}

func (s *server) closeAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns = map[string]*conn{}
	if s.st == stateReady {
		s.st = stateIdle
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// conn is one connection to a server: a session, and for a stdio server
// the sandboxed process behind it.
type conn struct {
	server  string
	started time.Time
	session *mcp.ClientSession
	// done is closed when the process ended (stdio) or the session did.
	done chan struct{}
	kill func()

	// calls counts the calls under way on this connection: a cancelled
	// call stops the process only when it was the only one.
	calls atomic.Int32

	mu   sync.Mutex
	exit string // how the process ended, as a clause
}

func (c *conn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// endsWithin reports whether the connection ends within d (a process
// that dies closes its output a moment before its exit is known).
func (c *conn) endsWithin(d time.Duration) bool {
	select {
	case <-c.done:
		return true
	case <-time.After(d):
		return false
	}
}

// close ends the session and the process, and waits for the process.
func (c *conn) close() {
	if c.session != nil {
		_ = c.session.Close()
	}
	if c.kill != nil {
		c.kill()
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
}

// exitClause says how the process ended ("" while it runs).
func (c *conn) exitClause() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exit
}

// why says what went wrong with the connection, for a sentence: how the
// process ended when it did, else the error.
func (c *conn) why(err error) string {
	select {
	case <-c.done:
	case <-time.After(500 * time.Millisecond):
	}
	if e := c.exitClause(); e != "" {
		return e
	}
	return fmt.Sprint(err)
}
