package taskgraph

import (
	"encoding/json"
	"slices"
)

// Catalog is what validation needs to know about the tools a plan may use:
// whether a tool exists and the JSON Schema of its args. The tool registry
// satisfies it.
type Catalog interface {
	ArgsSchema(tool string) (json.RawMessage, bool)
}

// ToolLister is an optional extension of Catalog. When a catalog implements
// it, an unknown-tool message lists the tools that are available, so a
// replan can pick one of them.
type ToolLister interface {
	ToolNames() []string
}

// MapCatalog is a Catalog held in a map from tool name to args schema.
type MapCatalog map[string]json.RawMessage

var (
	_ Catalog    = MapCatalog(nil)
	_ ToolLister = MapCatalog(nil)
)

// ArgsSchema implements Catalog.
func (m MapCatalog) ArgsSchema(tool string) (json.RawMessage, bool) {
	s, ok := m[tool]
	return s, ok
}

// ToolNames implements ToolLister; the names are sorted.
func (m MapCatalog) ToolNames() []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
