package tool

import (
	"encoding/json"
	"sort"

	"ducklm/backend"
)

// Registry is the catalogue of tools a run may use, by name.
type Registry struct {
	tools map[string]backend.Tool
}

// CatalogEntry describes one tool to a planning model and the window.
type CatalogEntry struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	ArgsSchema  json.RawMessage `json:"args_schema"`
	// Portable marks a tool whose calls are safe to run on the team's
	// workers (backend.Portable).
	Portable bool `json:"portable,omitempty"`
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
	t, ok := r.tools[name]
	if !ok {
		return nil, backend.Errorf(backend.ENOTFOUND, "there is no tool named %q", name)
	}
	return t, nil
}

// List returns the tools sorted by name.
func (r *Registry) List() []backend.Tool {
	out := make([]backend.Tool, 0, len(r.tools))
	for _, name := range r.ToolNames() {
		out = append(out, r.tools[name])
	}
	return out
}

// ToolNames returns the tools' names, sorted.
func (r *Registry) ToolNames() []string {
	names := make([]string, 0, len(r.tools))
	for name := range r.tools {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ArgsSchema returns the JSON Schema of the args of the tool named tool.
func (r *Registry) ArgsSchema(tool string) (json.RawMessage, bool) {
	t, ok := r.tools[tool]
	if !ok {
		return nil, false
	}
	return t.ArgsSchema(), true
}

// Catalog describes every tool, sorted by name, for a planning model.
func (r *Registry) Catalog() []CatalogEntry {
	out := make([]CatalogEntry, 0, len(r.tools))
	for _, t := range r.List() {
		out = append(out, CatalogEntry{Name: t.Name(), Description: t.Description(), ArgsSchema: t.ArgsSchema(),
			Portable: backend.IsPortable(t), Repeatable: backend.MayRepeat(t)})
	}
	return out
}
