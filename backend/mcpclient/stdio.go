package mcpclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/settings"
	"ducklm/backend/tool"
	"ducklm/backend/webhost"
)

// MaxAnswer is the largest message ducklm reads from an MCP server: a call
// whose answer is larger fails with a sentence, and the server starts again.
const MaxAnswer = 50 << 20

// serverLimits bound a stdio server's process for its whole life.
var serverLimits = backend.Limits{
	Timeout:     12 * time.Hour,
	MemoryBytes: 2 << 30,
	CPUSeconds:  4 * 3600,
	FileBytes:   256 << 20,
	OutputBytes: 64 << 10, // what is kept of its stderr
	Processes:   64,
}

// sandboxAvailable is bwrap.Available; tests play a machine without it.
var sandboxAvailable = bwrap.Available

// stdioArgv runs the server with fds 4 and 5 (the pipes ducklm speaks
// through) as its standard input and output.
var stdioArgv = []string{"/bin/sh", "-c", `exec "$@" <&4 >&5 4<&- 5>&-`, "mcp-server"}

// startStdio starts a command's server in the sandbox and connects to it.
// A server that works in the run's workspace gets the folder the run was
// given (wsID), opened without following links: a workspace swapped for a
// link to elsewhere (the data directory, say) is refused, never bound.
func (m *Manager) startStdio(ctx context.Context, cfg settings.MCPServer, ws string, wsID *backend.FolderID, onChange func()) (*conn, error) {
	cmd, err := resolveCommand(cfg)
	if err != nil {
		return nil, err
	}
	if _, ok, why := sandboxAvailable(); !ok {
		return nil, backend.Errorf(backend.EUNAVAILABLE, "MCP server %s was not started: %s, and ducklm runs MCP servers only in its sandbox", cfg.Name, why)
	}
	home := ws
	if home == "" {
		home = filepath.Join(m.o.Dir, "mcp", cfg.Name)
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, backend.Wrap(err, backend.EUNAVAILABLE, "the folder of MCP server %s could not be made", cfg.Name)
		}
	}
	var wsDir *os.File
	if ws != "" {
		if wsDir, err = tool.OpenWorkspace(ws, wsID); err != nil {
			return nil, backend.Wrap(err, backend.ErrorCode(err), "MCP server %s was not started in the run's workspace", cfg.Name)
		}
	}
	toServerR, toServerW, err := os.Pipe()
	if err != nil {
		closeFile(wsDir)
		return nil, backend.Wrap(err, backend.EINTERNAL, "MCP server %s could not be started", cfg.Name)
	}
	fromServerR, fromServerW, err := os.Pipe()
	if err != nil {
		closeFile(wsDir)
		toServerR.Close()
		toServerW.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "MCP server %s could not be started", cfg.Name)
	}
	spec := bwrap.Spec{
		Argv:      append(append(append([]string{}, stdioArgv...), cmd), cfg.Args...),
		Workspace: home,
		// The folder itself, whatever has its name by the time bubblewrap binds it.
		WorkspaceDir: wsDir,
		Network:      cfg.Network,
		Limits:       serverLimits,
		ExtraFiles:   []*os.File{toServerR, fromServerW},
		ReadOnly:     packageTrees(cmd, cfg),
	}
	runCtx, kill := context.WithCancel(m.base)
	c := &conn{server: cfg.Name, started: time.Now(), done: make(chan struct{}), kill: kill}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		res, err := bwrap.Run(runCtx, spec)
		closeFile(wsDir)
		// The process is gone: its ends of the pipes close, so the session
		// reads the end of its output and stops.
		toServerR.Close()
		fromServerW.Close()
		c.mu.Lock()
		c.exit = exitClause(cfg.Name, res, err, runCtx.Err() != nil)
		c.mu.Unlock()
		close(c.done)
		kill()
	}()
	client := m.client(onChange)
	session, err := client.Connect(ctx, &mcp.IOTransport{Reader: fromServerR, Writer: toServerW, MaxLineLength: MaxAnswer}, nil)
	if err != nil {
		why := c.why(err)
		if garbled(err) {
			why = "it did not speak MCP on its standard output (" + err.Error() + ")"
		}
		kill()
		<-c.done
		toServerW.Close()
		fromServerR.Close()
		if ctx.Err() != nil && c.exitClause() == "" {
			why = "it did not answer MCP's initialize within " + connectWait.String()
		}
		return nil, backend.Errorf(backend.EUNAVAILABLE, "MCP server %s did not start: %s", cfg.Name, why)
	}
	c.session = session
	go func() {
		<-c.done
		toServerW.Close()
		fromServerR.Close()
	}()
	return c, nil
}

// closeFile closes f, if any.
func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// garbled reports whether err is the SDK's refusal of what is not JSON-RPC.
func garbled(err error) bool {
	why := err.Error()
	return strings.Contains(why, "invalid character") || strings.Contains(why, "unmarshal") || strings.Contains(why, "JSON")
}

// exitClause says how a server's process ended.
func exitClause(name string, res bwrap.Result, err error, stopped bool) string {
	stderr := strings.TrimSpace(string(res.Stderr))
	if i := strings.LastIndexByte(stderr, '\n'); i >= 0 {
		stderr = strings.TrimSpace(stderr[i+1:])
	}
	if len(stderr) > 300 {
		stderr = stderr[:300] + "…"
	}
	var b strings.Builder
	switch {
	case stopped:
		b.WriteString("it was stopped")
	case err != nil && res.Duration == 0:
		fmt.Fprintf(&b, "it could not be started (%s)", backend.ErrorMessage(err))
	case res.TimedOut:
		fmt.Fprintf(&b, "it ran past its time limit of %s and was stopped", serverLimits.Timeout)
	case res.Signal != "":
		fmt.Fprintf(&b, "it was killed by %s", res.Signal)
	default:
		fmt.Fprintf(&b, "it exited with code %d", res.ExitCode)
	}
	if stderr != "" && !stopped {
		fmt.Fprintf(&b, "; its last message: %q", stderr)
	}
	return b.String()
}

// resolveCommand finds a server's command and refuses one that is not an
// executable file.
func resolveCommand(cfg settings.MCPServer) (string, error) {
	path, err := exec.LookPath(cfg.Command)
	if err != nil {
		if fi, serr := os.Stat(cfg.Command); serr == nil && fi.Mode().IsRegular() {
			return "", backend.Errorf(backend.EINVALID, "the command %s of MCP server %s is not executable (chmod +x it, or name its interpreter first)", cfg.Command, cfg.Name)
		}
		return "", backend.Errorf(backend.ENOTFOUND, "the command %s of MCP server %s was not found (give its full path, or a command on PATH)", cfg.Command, cfg.Name)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", backend.Wrap(err, backend.EINVALID, "the command %s of MCP server %s has no absolute path", cfg.Command, cfg.Name)
	}
	return abs, nil
}

// packageTrees are what the sandbox shows of the server's own files: for
// its command and each argument that is a file, the outermost node_modules
// folder above it (where Node's packages keep their dependencies) or the
// file itself; symbolic links are followed to what they name.
func packageTrees(cmd string, cfg settings.MCPServer) []string {
	var out []string
	add := func(p string) {
		for _, q := range out {
			if q == p || strings.HasPrefix(p, q+"/") {
				return
			}
		}
		out = append(out, p)
	}
	candidates := []string{cmd}
	for _, a := range cfg.Args {
		if filepath.IsAbs(a) {
			candidates = append(candidates, filepath.Clean(a))
		}
	}
	for _, p := range candidates {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue // folders (a server's allowed paths) are never shown
		}
		for _, q := range []string{p, realPath(p)} {
			if q != "" {
				add(packageTree(q))
			}
		}
	}
	return out
}

func realPath(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// packageTree is the outermost node_modules folder above file, or file.
func packageTree(file string) string {
	parts := strings.Split(file, "/")
	for i := 1; i < len(parts); i++ {
		if parts[i] == "node_modules" {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return file
}

// client is the MCP client of one server's connections.
func (m *Manager) client(onChange func()) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "ducklm", Version: backend.Version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { onChange() },
	})
}

// connectURL connects to a server reached by URL, through the checked
// dialer: its own host only, and its private addresses only when the user
// approved them for it.
func (m *Manager) connectURL(ctx context.Context, cfg settings.MCPServer, onChange func()) (*conn, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "the URL of MCP server %s cannot be read", cfg.Name)
	}
	host := webhost.Host(u.Hostname())
	grant := webhost.Grant{Hosts: []string{host}}
	if cfg.Private {
		grant.Private = []string{host}
	}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return m.o.Net.DialContext(ctx, grant, network, addr)
		},
	}
	hc := &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	client := m.client(onChange)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		why := backend.ErrorMessage(err)
		if !cfg.Private && strings.Contains(why, "needs its own approval") {
			why += " (for this server: add it with --private, or approve its private addresses in Settings → Tools)"
		}
		return nil, backend.Errorf(backend.EUNAVAILABLE, "MCP server %s at %s did not answer: %s", cfg.Name, cfg.URL, why)
	}
	c := &conn{server: cfg.Name, started: time.Now(), session: session, done: make(chan struct{})}
	go func() {
		_ = session.Wait()
		close(c.done)
	}()
	return c, nil
}
