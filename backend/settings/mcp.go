package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"ducklm/backend"
)

// MCPServer is one MCP server whose tools ducklm's runs may use: a command
// it starts over stdio (under bubblewrap), or a URL it reaches over
// streamable HTTP (through web_fetch's host checks). They are kept in
// mcp-servers.json in the data directory, apart from settings.json, which
// the window saves whole.
type MCPServer struct {
	// Name is how the server's tools are named: mcp__NAME__TOOL.
	Name string `json:"name"`
	// Command and Args start a stdio server; URL names an HTTP one. A
	// server has one or the other.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	URL     string   `json:"url,omitempty"`
	// Network lets a stdio server reach the network (off: it has none).
	Network bool `json:"network,omitempty"`
	// Workspace runs a stdio server in the run's workspace, writable;
	// otherwise it writes only a folder of its own in the data directory.
	Workspace bool `json:"workspace,omitempty"`
	// Private approves the private or loopback addresses a URL server's
	// host resolves to (localhost, 10.x, …), which web steps need approved.
	Private bool `json:"private,omitempty"`
	// Safe are the server's tools the user marked safe: in ask_risky mode
	// their calls run without asking.
	Safe []string `json:"safe,omitempty"`
}

// MCPFile is the file in the data directory that keeps the MCP servers.
const MCPFile = "mcp-servers.json"

// serverName is a server's name: lower case, digits, - and single _.
var serverName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Stdio reports whether the server is started from a command.
func (s MCPServer) Stdio() bool { return s.URL == "" }

// Check says what is wrong with s, in one sentence; nil when it can be saved.
func (s MCPServer) Check() error {
	switch {
	case !serverName.MatchString(s.Name) || strings.Contains(s.Name, "__"):
		return backend.Errorf(backend.EINVALID, "an MCP server's name is 1 to 32 lower-case letters, digits, - or _ (never two _ in a row), starting with a letter or digit, not %q", s.Name)
	case s.Command == "" && s.URL == "":
		return backend.Errorf(backend.EINVALID, "MCP server %s needs a command to start or a URL to reach", s.Name)
	case s.Command != "" && s.URL != "":
		return backend.Errorf(backend.EINVALID, "MCP server %s has both a command and a URL; give one", s.Name)
	}
	for _, a := range append([]string{s.Command}, s.Args...) {
		if strings.ContainsRune(a, 0) {
			return backend.Errorf(backend.EINVALID, "the command of MCP server %s holds a NUL byte", s.Name)
		}
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return backend.Errorf(backend.EINVALID, "the URL of MCP server %s must be an http or https URL, not %q", s.Name, s.URL)
		}
		if s.Network || s.Workspace {
			return backend.Errorf(backend.EINVALID, "MCP server %s is reached by URL, so it has no network or workspace to allow", s.Name)
		}
	} else if s.Private {
		return backend.Errorf(backend.EINVALID, "MCP server %s is a command, so it has no private address to approve", s.Name)
	}
	for _, t := range s.Safe {
		if t == "" || strings.ContainsAny(t, " \t\n") {
			return backend.Errorf(backend.EINVALID, "MCP server %s marks %q safe, which is not a tool name", s.Name, t)
		}
	}
	return nil
}

// LoadMCP reads the MCP servers of data directory dir; a missing file is none.
func LoadMCP(dir string) ([]MCPServer, error) {
	data, err := os.ReadFile(filepath.Join(dir, MCPFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read the MCP servers in %s", dir)
	}
	var f struct {
		Servers []MCPServer `json:"servers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, backend.Errorf(backend.ECORRUPT, "%s is not valid MCP server JSON; fix or delete it", filepath.Join(dir, MCPFile))
	}
	if err := checkServers(f.Servers); err != nil {
		return nil, backend.Errorf(backend.ECORRUPT, "%s: %s", filepath.Join(dir, MCPFile), backend.ErrorMessage(err))
	}
	return f.Servers, nil
}

// SaveMCP writes the MCP servers atomically, after checking every one.
func SaveMCP(dir string, servers []MCPServer) error {
	if err := checkServers(servers); err != nil {
		return err
	}
	data, err := json.MarshalIndent(struct {
		Servers []MCPServer `json:"servers"`
	}{servers}, "", "  ")
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot encode the MCP servers")
	}
	if err := replaceFile(dir, MCPFile, append(data, '\n')); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the MCP servers in %s", dir)
	}
	return nil
}

func checkServers(servers []MCPServer) error {
	var names []string
	for _, s := range servers {
		if err := s.Check(); err != nil {
			return err
		}
		if slices.Contains(names, s.Name) {
			return backend.Errorf(backend.ECONFLICT, "two MCP servers are named %s", s.Name)
		}
		names = append(names, s.Name)
	}
	return nil
}

// AddMCP adds server to dir's MCP servers; a name in use is refused.
func AddMCP(dir string, server MCPServer) error {
	if err := server.Check(); err != nil {
		return err
	}
	all, err := LoadMCP(dir)
	if err != nil {
		return err
	}
	for _, s := range all {
		if s.Name == server.Name {
			return backend.Errorf(backend.ECONFLICT, "an MCP server is already named %s; remove it first or choose another name", server.Name)
		}
	}
	return SaveMCP(dir, append(all, server))
}

// RemoveMCP removes the server named name.
func RemoveMCP(dir, name string) error {
	return UpdateMCP(dir, name, nil)
}

// UpdateMCP replaces the server named name with what change makes of it
// (nil change: removes it). An unknown name is ENOTFOUND.
func UpdateMCP(dir, name string, change func(*MCPServer) error) error {
	all, err := LoadMCP(dir)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(all, func(s MCPServer) bool { return s.Name == name })
	if i < 0 {
		return backend.Errorf(backend.ENOTFOUND, "there is no MCP server named %q%s", name, known(all))
	}
	if change == nil {
		return SaveMCP(dir, slices.Delete(all, i, i+1))
	}
	if err := change(&all[i]); err != nil {
		return err
	}
	return SaveMCP(dir, all)
}

func known(all []MCPServer) string {
	if len(all) == 0 {
		return " (none is added: ducklm mcp add adds one)"
	}
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name
	}
	return fmt.Sprintf(" (the servers are %s)", strings.Join(names, ", "))
}
