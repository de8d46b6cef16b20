package taskgraph

import (
	"encoding/json"
	"slices"

	"ducklm/backend"
)

// StepState is where one step of a running graph stands.
type StepState string

// The step states. A step absent from a states map is Pending.
const (
	Pending          StepState = "pending"
	Running          StepState = "running"
	AwaitingApproval StepState = "awaiting_approval"
	Done             StepState = "done"
	Failed           StepState = "failed"
	Skipped          StepState = "skipped"
	// InDoubt is a step that was running when the process stopped: it may or
	// may not have had its effect. It can run again, after a new approval.
	InDoubt StepState = "in_doubt"
)

// Terminal reports whether a step in state s will not change again.
func (s StepState) Terminal() bool { return s == Done || s == Failed || s == Skipped }

// Graph is a validated plan: a DAG of steps with a deterministic
// topological order. It is immutable; every accessor returns copies.
type Graph struct {
	nodes []backend.TaskNode
	index map[string]int // id -> position in the plan
	deps  [][]int        // plan positions each step depends on (existing, not itself)
	order []int          // plan positions in topological order
}

// newGraph builds the graph over nodes. When the dependencies hold a cycle,
// order is shorter than nodes.
func newGraph(nodes []backend.TaskNode, index map[string]int) *Graph {
	g := &Graph{nodes: nodes, index: index, deps: make([][]int, len(nodes))}
	indegree := make([]int, len(nodes))
	dependents := make([][]int, len(nodes))
	for i, n := range nodes {
		for _, d := range n.DependsOn {
			j, ok := index[d]
			if !ok || d == n.ID || slices.Contains(g.deps[i], j) {
				continue
			}
			g.deps[i] = append(g.deps[i], j)
			dependents[j] = append(dependents[j], i)
			indegree[i]++
		}
	}
	// Kahn's algorithm; among the steps free to go next, the one earliest in
	// the plan goes first, so the order never depends on map iteration.
	free := []int{}
	for i := range nodes {
		if indegree[i] == 0 {
			free = append(free, i)
		}
	}
	for len(free) > 0 {
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		i := free[k]
		free = slices.Delete(free, k, k+1)
		g.order = append(g.order, i)
		for _, d := range dependents[i] {
			if indegree[d]--; indegree[d] == 0 {
				free = append(free, d)
			}
		}
	}
	return g
}

// findCycles returns dependency cycles as id paths that start and end at the
// same step ("a", "b", "a": a depends on b, b on a). It walks the steps the
// topological order could not place, in plan order, so the result is
// deterministic; it finds at least one cycle in every cyclic component.
func findCycles(g *Graph) [][]string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(g.nodes))
	for _, i := range g.order {
		color[i] = black
	}
	var cycles [][]string
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		for _, j := range g.deps[i] {
			switch color[j] {
			case grey:
				start := slices.Index(stack, j)
				path := make([]string, 0, len(stack)-start+1)
				for _, k := range stack[start:] {
					path = append(path, g.nodes[k].ID)
				}
				cycles = append(cycles, append(path, g.nodes[j].ID))
			case white:
				visit(j)
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range g.nodes {
		if color[i] == white && len(cycles) < maxProblems {
			visit(i)
		}
	}
	return cycles
}

// Len returns the number of steps.
func (g *Graph) Len() int { return len(g.nodes) }

// Nodes returns the steps in plan order. Missing depends_on is [] and
// missing args are {}.
func (g *Graph) Nodes() []backend.TaskNode {
	out := make([]backend.TaskNode, len(g.nodes))
	for i, n := range g.nodes {
		out[i] = cloneNode(n)
	}
	return out
}

// Node returns the step with the given id.
func (g *Graph) Node(id string) (backend.TaskNode, bool) {
	i, ok := g.index[id]
	if !ok {
		return backend.TaskNode{}, false
	}
	return cloneNode(g.nodes[i]), true
}

// TaskGraph returns the graph as the plan it was validated from.
func (g *Graph) TaskGraph() backend.TaskGraph { return backend.TaskGraph{Nodes: g.Nodes()} }

// Order returns the step ids in topological order: Kahn's algorithm with
// ties broken by the steps' order in the plan.
func (g *Graph) Order() []string {
	out := make([]string, len(g.order))
	for k, i := range g.order {
		out[k] = g.nodes[i].ID
	}
	return out
}

// Ready returns, in topological order, the steps that can start now: every
// dependency is Done and the step itself is Pending, or InDoubt (an in-doubt
// step runs again once the user approves it anew; the router asks).
func (g *Graph) Ready(states map[string]StepState) []string {
	var out []string
	for _, i := range g.order {
		if s := stateOf(states, g.nodes[i].ID); s != Pending && s != InDoubt {
			continue
		}
		ready := true
		for _, j := range g.deps[i] {
			if stateOf(states, g.nodes[j].ID) != Done {
				ready = false
				break
			}
		}
		if ready {
			out = append(out, g.nodes[i].ID)
		}
	}
	return out
}

// IDAt returns the id of the plan's i-th step.
func (g *Graph) IDAt(i int) string { return g.nodes[i].ID }

// ReadyIn is Ready over states held by plan position (states[i] is the
// state of the plan's i-th step, "" for Pending): the plan positions of the
// steps ready to run, in topological order. It reads no map, so a loop that
// asks at every step of a long plan pays a few array reads a step.
func (g *Graph) ReadyIn(states []StepState) []int {
	var out []int
	for _, i := range g.order {
		if s := states[i]; s != Pending && s != InDoubt && s != "" {
			continue
		}
		ready := true
		for _, j := range g.deps[i] {
			if states[j] != Done {
				ready = false
				break
			}
		}
		if ready {
			out = append(out, i)
		}
	}
	return out
}

// Blocked returns, in topological order, the Pending steps that can never
// run because a dependency, directly or through other steps, Failed or was
// Skipped. The runtime marks them Skipped.
func (g *Graph) Blocked(states map[string]StepState) []string {
	dead := make([]bool, len(g.nodes))
	var out []string
	for _, i := range g.order {
		s := stateOf(states, g.nodes[i].ID)
		if s == Failed || s == Skipped {
			dead[i] = true
			continue
		}
		if s != Pending {
			continue
		}
		for _, j := range g.deps[i] {
			if dead[j] {
				dead[i] = true
				out = append(out, g.nodes[i].ID)
				break
			}
		}
	}
	return out
}

// Finished reports whether every step is Done, Failed or Skipped.
func (g *Graph) Finished(states map[string]StepState) bool {
	for _, n := range g.nodes {
		if !stateOf(states, n.ID).Terminal() {
			return false
		}
	}
	return true
}

// Summary counts the steps of a graph by state.
type Summary struct {
	Total            int `json:"total"`
	Pending          int `json:"pending"`
	Running          int `json:"running"`
	AwaitingApproval int `json:"awaitingApproval"`
	Done             int `json:"done"`
	Failed           int `json:"failed"`
	Skipped          int `json:"skipped"`
	InDoubt          int `json:"inDoubt"`
}

// Summary counts the graph's steps by state. A state value that is not one
// of the StepState constants counts in Total only.
func (g *Graph) Summary(states map[string]StepState) Summary {
	s := Summary{Total: len(g.nodes)}
	for _, n := range g.nodes {
		switch stateOf(states, n.ID) {
		case Pending:
			s.Pending++
		case Running:
			s.Running++
		case AwaitingApproval:
			s.AwaitingApproval++
		case Done:
			s.Done++
		case Failed:
			s.Failed++
		case Skipped:
			s.Skipped++
		case InDoubt:
			s.InDoubt++
		}
	}
	return s
}

func stateOf(states map[string]StepState, id string) StepState {
	if s, ok := states[id]; ok && s != "" {
		return s
	}
	return Pending
}

func cloneNode(n backend.TaskNode) backend.TaskNode {
	n.Args = json.RawMessage(slices.Clone([]byte(n.Args)))
	n.DependsOn = slices.Clone(n.DependsOn)
	return n
}
