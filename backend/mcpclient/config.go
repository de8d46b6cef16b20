package mcpclient

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"ducklm/backend"
	"ducklm/backend/settings"
)

// Prepare checks a server the user is adding and returns it as it is
// stored: a command found and executable, at its absolute path (the window
// may start with another PATH), and arguments that name files here made
// absolute (the server runs in a folder of its own).
func Prepare(cfg settings.MCPServer) (settings.MCPServer, error) {
	cfg.Command = strings.TrimSpace(cfg.Command)
	cfg.URL = strings.TrimSpace(cfg.URL)
	if err := cfg.Check(); err != nil {
		return cfg, err
	}
	if !cfg.Stdio() {
		return cfg, nil
	}
	cmd, err := resolveCommand(cfg)
	if err != nil {
		return cfg, err
	}
	cfg.Command = cmd
	args := slices.Clone(cfg.Args)
	for i, a := range args {
		if a == "" || filepath.IsAbs(a) || strings.HasPrefix(a, "-") {
			continue
		}
		if fi, err := os.Stat(a); err == nil && fi.Mode().IsRegular() {
			if abs, err := filepath.Abs(a); err == nil {
				args[i] = abs
			}
		}
	}
	cfg.Args = args
	return cfg, nil
}

// Add checks and stores a new server, then starts it and lists its tools;
// the server is kept even when it cannot start (its status says why).
func (m *Manager) Add(ctx context.Context, cfg settings.MCPServer) (ServerStatus, error) {
	cfg, err := Prepare(cfg)
	if err != nil {
		return ServerStatus{}, err
	}
	if err := settings.AddMCP(m.o.Dir, cfg); err != nil {
		return ServerStatus{}, err
	}
	return m.status(ctx, cfg.Name)
}

// Remove stops and forgets the server named name.
func (m *Manager) Remove(ctx context.Context, name string) error {
	if err := settings.RemoveMCP(m.o.Dir, name); err != nil {
		return err
	}
	return m.Reload(ctx)
}

// MarkSafe marks (or unmarks) one of a server's tools safe: in ask_risky
// mode its calls then run without asking. The tool must be one the server
// lists.
func (m *Manager) MarkSafe(ctx context.Context, server, tool string, safe bool) (ServerStatus, error) {
	st, err := m.status(ctx, server)
	if err != nil {
		return ServerStatus{}, err
	}
	if safe && !slices.ContainsFunc(st.Tools, func(t ToolStatus) bool { return t.Name == tool }) {
		if st.State != stateReady {
			return st, backend.Errorf(backend.EUNAVAILABLE, "MCP server %s did not list its tools, so %q cannot be checked and marked safe: %s", server, tool, st.Error)
		}
		names := make([]string, len(st.Tools))
		for i, t := range st.Tools {
			names[i] = t.Name
		}
		return st, backend.Errorf(backend.ENOTFOUND, "MCP server %s has no tool named %q (its tools: %s)", server, tool, strings.Join(names, ", "))
	}
	err = settings.UpdateMCP(m.o.Dir, server, func(s *settings.MCPServer) error {
		s.Safe = slices.DeleteFunc(s.Safe, func(t string) bool { return t == tool })
		if safe {
			s.Safe = append(s.Safe, tool)
			slices.Sort(s.Safe)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	return m.status(ctx, server)
}

// status reloads the servers and says how the one named name stands.
func (m *Manager) status(ctx context.Context, name string) (ServerStatus, error) {
	all, err := m.Servers(ctx)
	if err != nil {
		return ServerStatus{}, err
	}
	for _, s := range all {
		if s.Name == name {
			return s, nil
		}
	}
	return ServerStatus{}, backend.Errorf(backend.ENOTFOUND, "there is no MCP server named %q", name)
}
