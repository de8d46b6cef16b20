package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
	"ducklm/backend/settings"
	"ducklm/backend/taskgraph"
	"ducklm/backend/web"
)

// Options configure a Manager.
type Options struct {
	// Dir is the data directory: its mcp-servers.json names the servers,
	// and each stdio server gets a folder of its own under Dir/mcp.
	Dir   string
	Blobs backend.BlobStore
	// Net dials URL servers (nil: the system's resolver, the usual checks).
	Net *web.Net
	Log *slog.Logger
	// StartWait bounds how long the first catalog waits for the servers to
	// list their tools (0: 20 seconds).
	StartWait time.Duration
}

// Manager keeps the MCP servers' connections and their tools.
type Manager struct {
	o    Options
	base context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	servers map[string]*server
	started bool
	ready   chan struct{} // closed when the first start of every server ended
	waited  sync.Once     // only the first catalog waits for the servers
	// loaded is the modification time of mcp-servers.json when it was last
	// read; reloading is set while a reload it set off runs.
	loaded    time.Time
	reloading bool
	wg        sync.WaitGroup
}

// New returns a manager of the servers configured in o.Dir. It starts none
// of them until their tools are first asked for.
func New(o Options) *Manager {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.StartWait <= 0 {
		o.StartWait = 20 * time.Second
	}
	if o.Net == nil {
		o.Net = &web.Net{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{o: o, base: ctx, stop: cancel, servers: map[string]*server{}, ready: make(chan struct{})}
}

// Close stops every server (its whole process group) and waits for them.
func (m *Manager) Close() error {
	m.mu.Lock()
	servers := m.servers
	m.servers = map[string]*server{}
	m.mu.Unlock()
	for _, s := range servers {
		s.closeAll()
	}
	m.stop()
	m.wg.Wait()
	return nil
}

// Tools implements tool.Source: the tools the servers listed, as they are
// now. The first call starts the servers and waits for them a while.
func (m *Manager) Tools() []backend.Tool {
	m.ensureStarted()
	m.followFile()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []backend.Tool
	for _, name := range slices.Sorted(mapKeys(m.servers)) {
		s := m.servers[name]
		for _, t := range s.toolList() {
			out = append(out, &Tool{m: m, s: s, t: t})
		}
	}
	return out
}

func mapKeys[V any](mm map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range mm {
			if !yield(k) {
				return
			}
		}
	}
}

// ensureStarted starts every configured server once and waits, up to
// StartWait, for their tools.
func (m *Manager) ensureStarted() {
	m.mu.Lock()
	if !m.started {
		m.started = true
		m.mu.Unlock()
		go func() {
			m.Reload(m.base)
			close(m.ready)
		}()
		m.mu.Lock()
	}
	m.mu.Unlock()
	m.waited.Do(func() {
		select {
		case <-m.ready:
		case <-time.After(m.o.StartWait):
		case <-m.base.Done():
		}
	})
}

// Reload reads the configured servers again: a removed one is stopped, a
// changed one restarted, a new one started; it returns when each has listed
// its tools or failed to.
func (m *Manager) Reload(ctx context.Context) error {
	mod := m.fileTime()
	cfgs, err := settings.LoadMCP(m.o.Dir)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.loaded = mod
	var start, stop []*server
	seen := map[string]bool{}
	for _, c := range cfgs {
		seen[c.Name] = true
		old := m.servers[c.Name]
		if old != nil && sameLaunch(old.config(), c) {
			old.setConfig(c) // safe marks change nothing of the process
			if st := old.state(); st == stateIdle || st == stateStarting {
				start = append(start, old) // a start under way is waited for
			}
			continue
		}
		if old != nil {
			stop = append(stop, old)
		}
		s := newServer(m, c)
		m.servers[c.Name] = s
		start = append(start, s)
	}
	for name, s := range m.servers {
		if !seen[name] {
			stop = append(stop, s)
			delete(m.servers, name)
		}
	}
	m.mu.Unlock()
	for _, s := range stop {
		s.closeAll()
	}
	var wg sync.WaitGroup
	for _, s := range start {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.refresh(ctx); err != nil {
				m.o.Log.Warn("mcp server", "server", s.config().Name, "err", backend.ErrorMessage(err))
			}
		}()
	}
	wg.Wait()
	return nil
}

// fileTime is mcp-servers.json's modification time (zero: none).
func (m *Manager) fileTime() time.Time {
	fi, err := os.Stat(filepath.Join(m.o.Dir, settings.MCPFile))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// followFile reads the servers again, in the background, when another
// process (ducklm mcp add, rm, safe) changed mcp-servers.json: the window
// follows the command line without a restart.
func (m *Manager) followFile() {
	mod := m.fileTime()
	m.mu.Lock()
	if mod.Equal(m.loaded) || m.reloading || m.base.Err() != nil {
		m.mu.Unlock()
		return
	}
	m.reloading = true
	m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.Reload(m.base); err != nil {
			m.o.Log.Warn("mcp servers", "err", backend.ErrorMessage(err))
		}
		m.mu.Lock()
		m.reloading = false
		m.mu.Unlock()
	}()
}

func sameLaunch(a, b settings.MCPServer) bool {
	a.Safe, b.Safe = nil, nil
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// ServerStatus is one server as `ducklm mcp ls` and Settings → Tools show it.
type ServerStatus struct {
	settings.MCPServer
	// State is "ready", "starting", "failed" or "not started".
	State string `json:"state"`
	// Error says why the server failed, in a sentence.
	Error string       `json:"error,omitempty"`
	Tools []ToolStatus `json:"tools"`
	// Refused says which of the server's tools were left out, and why.
	Refused []string `json:"refused,omitempty"`
}

// ToolStatus is one of a server's tools.
type ToolStatus struct {
	Name         string `json:"name"` // as the server names it
	Catalog      string `json:"catalog"`
	Description  string `json:"description,omitempty"`
	ReadOnlyHint bool   `json:"readOnlyHint,omitempty"`
	Safe         bool   `json:"safe,omitempty"`
}

// Servers starts the configured servers (when they are not running) and
// says how each stands.
func (m *Manager) Servers(ctx context.Context) ([]ServerStatus, error) {
	if err := m.Reload(ctx); err != nil {
		return nil, err
	}
	m.mu.Lock()
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.mu.Unlock()
	sort.Slice(servers, func(i, j int) bool { return servers[i].config().Name < servers[j].config().Name })
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		out = append(out, s.status())
	}
	return out, nil
}

// Test starts the server named name afresh and lists its tools, or says
// why it could not.
func (m *Manager) Test(ctx context.Context, name string) (ServerStatus, error) {
	if err := m.Reload(ctx); err != nil {
		return ServerStatus{}, err
	}
	m.mu.Lock()
	s := m.servers[name]
	m.mu.Unlock()
	if s == nil {
		return ServerStatus{}, backend.Errorf(backend.ENOTFOUND, "there is no MCP server named %q", name)
	}
	s.closeAll()
	err := s.refresh(ctx)
	return s.status(), err
}

// toolName is a server's tool name ducklm can carry in its own.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// CatalogName is the name a server's tool has in ducklm's catalog.
func CatalogName(server, tool string) string { return "mcp__" + server + "__" + tool }

// toolDef is one tool a server listed and ducklm took.
type toolDef struct {
	name, description string
	schema            json.RawMessage
	readOnly          bool
}

// checkTools keeps the tools ducklm can use and says why each other one
// was left out: a name ducklm cannot carry, or a schema that is not JSON
// Schema.
func checkTools(server string, tools []*mcp.Tool) (kept []toolDef, refused []string) {
	for _, t := range tools {
		if t == nil {
			continue
		}
		if !toolName.MatchString(t.Name) {
			refused = append(refused, fmt.Sprintf("MCP server %s's tool %q was left out: its name is not 1 to 64 letters, digits, _, . or -", server, t.Name))
			continue
		}
		raw, err := json.Marshal(t.InputSchema)
		if err == nil && t.InputSchema == nil {
			err = fmt.Errorf("it has none")
		}
		if err == nil {
			err = taskgraph.CheckArgsSchema(raw)
		}
		if err != nil {
			refused = append(refused, fmt.Sprintf("MCP server %s's tool %s was left out: its input schema cannot be used, because %s", server, t.Name, err))
			continue
		}
		d := toolDef{name: t.Name, description: strings.TrimSpace(t.Description), schema: raw}
		if t.Annotations != nil {
			d.readOnly = t.Annotations.ReadOnlyHint
		}
		kept = append(kept, d)
	}
	return kept, refused
}
