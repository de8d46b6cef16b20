package tool

import (
	"encoding/json"
	"sort"
	"sync"

	"ducklm/backend"
)

// Registry is the catalogue of tools a run may use, by name: ducklm's own,
// fixed at wiring, and those of its sources (the MCP servers' tools), as
// they are at each call.
type Registry struct {
	tools   map[string]backend.Tool
	mu      sync.RWMutex
	sources []Source
}

// Source is a changing set of tools that joins a registry, such as the
// tools of the MCP servers the user added. A source's tool that takes the
// name of one of the registry's own is left out.
type Source interface {
	Tools() []backend.Tool
}

// Attach adds a source whose tools the registry lists beside its own.
func (r *Registry) Attach(s Source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sources = append(r.sources, s)
}

// all is every tool by name, now.
func (r *Registry) all() map[string]backend.Tool {
	r.mu.RLock()
	sources := r.sources
	r.mu.RUnlock()
	if len(sources) == 0 {
		return r.tools
	}
	out := make(map[string]backend.Tool, len(r.tools))
	for _, s := range sources {
		for _, t := range s.Tools() {
			if _, dup := out[t.Name()]; !dup {
				out[t.Name()] = t
			}
		}
	}
	for name, t := range r.tools {
		out[name] = t // ducklm's own win a name
	}
	return out
}

// CatalogEntry describes one tool to a planning model and the window.
type CatalogEntry struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	ArgsSchema  json.RawMessage `json:"args_schema"`
	// Portable marks a tool whose calls are safe to run on the team's
	// workers (backend.Portable).
	Portable bool `json:"portable,omitempty"`
	// MCP says which MCP server serves the tool (nil: one of ducklm's own).
	MCP *backend.MCPTool `json:"mcp,omitempty"`
	// Repeatable marks a tool whose calls that only read are safe to
	// repeat (backend.Repeatable): file_read's, web_fetch's GETs.
	Repeatable bool `json:"repeatable,omitempty"`
}

// NewRegistry returns a registry of tools. Two tools with one name, or a
// tool with none, is a wiring mistake and panics.
func NewRegistry(tools ...backend.Tool) *Registry {
	r := &Registry{tools: make(map[string]backend.Tool, len(tools))}
	for _, t := range tools {
		name := t.Name()
		if name == "" {
			panic("tool: a tool has no name")
		}
		if _, dup := r.tools[name]; dup {
			panic("tool: two tools are named " + name)
		}
		r.tools[name] = t
	}
	return r
}

// Get returns the tool with name, or an ENOTFOUND error.
func (r *Registry) Get(name string) (backend.Tool, error) {
	if t, ok := r.tools[name]; ok {
		return t, nil // ducklm's own are found without asking the sources
	}
	t, ok := r.all()[name]
	if !ok {
		return nil, backend.Errorf(backend.ENOTFOUND, "there is no tool named %q", name)
	}
	return t, nil
}

// List returns the tools sorted by name.
func (r *Registry) List() []backend.Tool {
	all := r.all()
	out := make([]backend.Tool, 0, len(all))
	for _, name := range names(all) {
		out = append(out, all[name])
	}
	return out
}

// ToolNames returns the tools' names, sorted.
func (r *Registry) ToolNames() []string { return names(r.all()) }

func names(tools map[string]backend.Tool) []string {
	out := make([]string, 0, len(tools))
	for name := range tools {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ArgsSchema returns the JSON Schema of the args of the tool named tool.
func (r *Registry) ArgsSchema(tool string) (json.RawMessage, bool) {
	t, ok := r.tools[tool]
	if !ok {
		t, ok = r.all()[tool]
	}
	if !ok {
		return nil, false
	}
	return t.ArgsSchema(), true
}

// Catalog describes every tool, sorted by name, for a planning model.
func (r *Registry) Catalog() []CatalogEntry {
	list := r.List()
	out := make([]CatalogEntry, 0, len(list))
	for _, t := range list {
		e := CatalogEntry{Name: t.Name(), Description: t.Description(), ArgsSchema: t.ArgsSchema(),
			Portable: backend.IsPortable(t), Repeatable: backend.MayRepeat(t)}
		if m, ok := backend.MCPOf(t); ok {
			e.MCP = &m
		}
		out = append(out, e)
	}
	return out
}
