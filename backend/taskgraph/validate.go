package taskgraph

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"ducklm/backend"
)

// MaxPlanBytes is the largest plan Parse reads.
const MaxPlanBytes = 4 << 20

// maxProblems is how many problems one validation message lists; the rest
// are counted.
const maxProblems = 10

// Parse validates a plan's JSON into a Graph. Every failure is a
// *backend.Error with code EINVALID whose message lists all problems found
// (up to ten) joined with "; ", each naming the step it is about, so a
// replan can fix them at once. A tool whose own args schema does not compile
// is a fault of the catalog, not of the plan: that is EINTERNAL.
func Parse(data []byte, cat Catalog) (*Graph, error) {
	return ParseMax(data, cat, MaxNodes)
}

// ParseMax is Parse with a plan of at most maxNodes steps (<= 0: MaxNodes).
func ParseMax(data []byte, cat Catalog, maxNodes int) (*Graph, error) {
	if maxNodes <= 0 {
		maxNodes = MaxNodes
	}
	if len(data) > MaxPlanBytes {
		return nil, backend.Errorf(backend.EINVALID, "the plan is %d bytes, more than the %d allowed", len(data), MaxPlanBytes)
	}
	key, memo := memoKey(data, cat, maxNodes)
	if memo {
		if g := validated.get(key); g != nil {
			return g, nil
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "the plan is not valid JSON: %v", err)
	}
	var c collector
	if err := compiledGraph().Validate(doc); err != nil {
		c.add(schemaProblems(err, doc)...)
	}
	nodes, ok := decodeNodes(data)
	if !ok {
		// The shape is too broken to reason about steps; the schema
		// problems say why.
		if len(c.problems) == 0 {
			c.add("the plan does not have the shape {\"nodes\": [...]}")
		}
		return nil, c.err()
	}
	if len(nodes) > maxNodes {
		c.add(TooManySteps(len(nodes), maxNodes))
	}
	g, err := build(nodes, cat, &c)
	if err == nil && memo {
		validated.put(key, g)
	}
	return g, err
}

// validated holds the graphs of the plans validated last. A run's plan is
// validated when it is submitted, when the planner takes it and when the
// run's driver takes it up: the same bytes against the same tools, a few
// milliseconds each for a plan of hundreds of steps. A Graph never changes
// once built, so each caller may hold the same one.
var validated = &graphMemo{m: map[[sha256.Size]byte]*Graph{}}

// graphMemo is a small cache of valid graphs by memoKey, the oldest
// dropped first.
type graphMemo struct {
	mu    sync.Mutex
	m     map[[sha256.Size]byte]*Graph
	order [][sha256.Size]byte
}

// memoKeep is how many graphs the memo holds.
const memoKeep = 16

func (m *graphMemo) get(key [sha256.Size]byte) *Graph {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[key]
}

func (m *graphMemo) put(key [sha256.Size]byte, g *Graph) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.m[key]; ok {
		return
	}
	if len(m.order) == memoKeep {
		delete(m.m, m.order[0])
		m.order = append(m.order[:0], m.order[1:]...)
	}
	m.m[key] = g
	m.order = append(m.order, key)
}

// memoKey digests everything a validation reads: the plan's bytes, the
// bound on its steps and every tool of the catalog with its args schema.
// false: the catalog cannot list its tools, so nothing is remembered.
func memoKey(data []byte, cat Catalog, maxNodes int) ([sha256.Size]byte, bool) {
	var key [sha256.Size]byte
	l, ok := cat.(ToolLister)
	if !ok || cat == nil {
		return key, false
	}
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(maxNodes))
	h.Write(n[:])
	for _, name := range l.ToolNames() {
		schema, _ := cat.ArgsSchema(name)
		binary.LittleEndian.PutUint64(n[:], uint64(len(name)))
		h.Write(n[:])
		h.Write([]byte(name))
		binary.LittleEndian.PutUint64(n[:], uint64(len(schema)))
		h.Write(n[:])
		h.Write(schema)
	}
	h.Write(data)
	h.Sum(key[:0])
	return key, true
}

// TooManySteps is the sentence for a plan of got steps where a run allows
// allowed: it says how a run allows more (the run's own bound, the command
// line's --max-plan-steps; its step limit, --max-steps, must cover the plan
// too). The window's New task form sets neither, so it takes MaxNodes.
func TooManySteps(got, allowed int) string {
	return fmt.Sprintf("the plan has %d steps, more than the %d allowed; a run allows more when it says so: "+
		"ducklm run --plan FILE --max-plan-steps %d --max-steps %d (maxPlanSteps and maxSteps in a run request to the HTTP API; "+
		"the window's New task form takes plans of up to %d steps)", got, allowed, got, got, MaxNodes)
}

// Validate validates a task graph built in Go (an explicit plan, a restored
// run) exactly as Parse validates JSON.
func Validate(g backend.TaskGraph, cat Catalog) (*Graph, error) {
	return ValidateMax(g, cat, MaxNodes)
}

// ValidateMax is Validate with a plan of at most maxNodes steps (<= 0:
// MaxNodes).
func ValidateMax(g backend.TaskGraph, cat Catalog, maxNodes int) (*Graph, error) {
	type node struct {
		ID        string          `json:"id"`
		Kind      string          `json:"kind"`
		Tool      string          `json:"tool,omitempty"`
		Args      json.RawMessage `json:"args,omitempty"`
		DependsOn []string        `json:"depends_on"`
		Title     string          `json:"title,omitempty"`
		Retry     bool            `json:"retry_on_timeout,omitempty"`
	}
	var c collector
	nodes := make([]node, len(g.Nodes))
	for i, n := range g.Nodes {
		args := bytes.TrimSpace(n.Args)
		if string(args) == "null" {
			args = nil
		}
		if len(args) > 0 && !json.Valid(args) {
			c.add(stepName(n.ID, i) + " has args that are not valid JSON")
			args = nil
		}
		deps := n.DependsOn
		if deps == nil {
			deps = []string{}
		}
		nodes[i] = node{ID: n.ID, Kind: n.Kind, Tool: n.Tool, Args: args, DependsOn: deps, Title: n.Title, Retry: n.RetryOnTimeout}
	}
	if len(c.problems) > 0 {
		return nil, c.err()
	}
	data, err := json.Marshal(struct {
		Nodes []node `json:"nodes"`
	}{nodes})
	if err != nil {
		return nil, backend.Wrap(err, backend.EINVALID, "the plan cannot be encoded as JSON")
	}
	return ParseMax(data, cat, maxNodes)
}

// decodeNodes decodes the nodes of a plan into task nodes. It reports false
// when any node does not have the types a task node needs.
func decodeNodes(data []byte) ([]backend.TaskNode, bool) {
	var top struct {
		Nodes []json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal(data, &top); err != nil || len(top.Nodes) == 0 {
		return nil, false
	}
	nodes := make([]backend.TaskNode, len(top.Nodes))
	for i, raw := range top.Nodes {
		if err := json.Unmarshal(raw, &nodes[i]); err != nil {
			return nil, false
		}
		n := &nodes[i]
		if n.DependsOn == nil {
			n.DependsOn = []string{}
		}
		if len(n.Args) == 0 || string(n.Args) == "null" {
			n.Args = json.RawMessage("{}")
		}
	}
	return nodes, true
}

// build runs the checks that need the whole plan and, when nothing is
// wrong, returns the graph.
func build(nodes []backend.TaskNode, cat Catalog, c *collector) (*Graph, error) {
	index := make(map[string]int, len(nodes))
	count := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if n.ID == "" {
			continue
		}
		count[n.ID]++
		if _, seen := index[n.ID]; !seen {
			index[n.ID] = i
		}
	}
	for i, n := range nodes {
		if count[n.ID] > 1 && index[n.ID] == i {
			c.add(fmt.Sprintf("step id %s is used by %d steps, but every step needs its own id", quoteID(n.ID), count[n.ID]))
		}
	}

	schemas := map[string]*jsonschema.Schema{}
	for i, n := range nodes {
		if err := checkStep(n, stepName(n.ID, i), cat, schemas, c); err != nil {
			return nil, err
		}
	}

	// Edges to steps that exist, self-dependencies dropped: the graph the
	// cycle check and the topological order work on.
	for i, n := range nodes {
		name := stepName(n.ID, i)
		for k, d := range n.DependsOn {
			if slices.Contains(n.DependsOn[:k], d) {
				continue // the schema check reported the repeat
			}
			switch _, ok := index[d]; {
			case d == n.ID:
				c.add(name + " depends on itself")
			case !ok:
				c.add(fmt.Sprintf("%s depends on %s, which is not in the plan", name, quoteID(d)))
			}
		}
	}
	g := newGraph(nodes, index)
	if len(g.order) < len(g.nodes) {
		for _, cycle := range findCycles(g) {
			c.add("the steps form a cycle: " + strings.Join(cycle, " → ") + " (each depends on the next)")
		}
	}
	if len(c.problems) > 0 {
		return nil, c.err()
	}
	return g, nil
}

// checkStep checks one step's kind, tool and args.
func checkStep(n backend.TaskNode, name string, cat Catalog, schemas map[string]*jsonschema.Schema, c *collector) error {
	var sch *jsonschema.Schema
	var what string
	switch n.Kind {
	case backend.KindToolStep:
		if n.Tool == "" {
			c.add(name + " is a tool step but names no tool")
			return nil
		}
		raw, ok := lookup(cat, n.Tool)
		if !ok {
			c.add(fmt.Sprintf("%s uses tool %q, which is not available%s", name, n.Tool, available(cat)))
			return nil
		}
		sch = schemas[n.Tool]
		if sch == nil {
			var err error
			if sch, err = compile(raw); err != nil {
				return backend.Wrap(err, backend.EINTERNAL, "the args schema of tool %q does not compile", n.Tool)
			}
			schemas[n.Tool] = sch
		}
		what = "tool " + n.Tool
	case backend.KindCoderStep:
		if n.Tool != "" && n.Tool != CoderTool {
			c.add(fmt.Sprintf("%s is a coder step, so its tool must be empty or %q, not %q", name, CoderTool, n.Tool))
		}
		sch, what = compiledCoder(), "a coder step"
	default:
		return nil // the schema check already reported the kind
	}
	args := checkRefs(nodeRefs{Tool: n.Tool, Args: n.Args, DependsOn: n.DependsOn}, name, c)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if _, isObject := inst.(map[string]any); err != nil || !isObject {
		return nil // the schema check already reported the args
	}
	if err := sch.Validate(inst); err != nil {
		c.add(fmt.Sprintf("%s has invalid args for %s: %s", name, what, describe(violations(err))))
	}
	return nil
}

// stepName names a step in a message: by id, or by position when it has none.
func stepName(id string, i int) string {
	if id == "" {
		return fmt.Sprintf("step #%d (no valid id)", i+1)
	}
	return "step " + quoteID(id)
}

func lookup(cat Catalog, tool string) (json.RawMessage, bool) {
	if cat == nil {
		return nil, false
	}
	return cat.ArgsSchema(tool)
}

// available lists the catalog's tools for an unknown-tool message.
func available(cat Catalog) string {
	l, ok := cat.(ToolLister)
	if !ok {
		return ""
	}
	names := l.ToolNames()
	if len(names) == 0 {
		return " (no tools are available)"
	}
	return " (available tools: " + strings.Join(names, ", ") + ")"
}

// collector gathers problems in the order they are found.
type collector struct {
	problems []string
}

func (c *collector) add(p ...string) { c.problems = append(c.problems, p...) }

func (c *collector) err() error {
	ps := c.problems
	if len(ps) > maxProblems {
		more := len(ps) - maxProblems
		ps = append(ps[:maxProblems:maxProblems], fmt.Sprintf("and %d more problem%s", more, plural(more)))
	}
	return backend.Errorf(backend.EINVALID, "%s", strings.Join(ps, "; "))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
