package taskgraph_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/taskgraph"
)

// chain is a plan of n file_read steps, each after the one before.
func chain(n int) backend.TaskGraph {
	nodes := make([]backend.TaskNode, n)
	for i := range nodes {
		deps := []string{}
		if i > 0 {
			deps = []string{fmt.Sprintf("s%d", i-1)}
		}
		nodes[i] = backend.TaskNode{ID: fmt.Sprintf("s%d", i), Kind: backend.KindToolStep, Tool: "file_read",
			Args: json.RawMessage(`{"path":"f.txt"}`), DependsOn: deps}
	}
	return backend.TaskGraph{Nodes: nodes}
}

// A plan is validated when it is submitted, when the planner takes it and
// when the run's driver takes it up: the same plan against the same tools.
// Each validation after the first gives the same graph without the work,
// and any change to what the validation read (the plan, a tool's schema,
// the bound on steps) validates again.
func TestAPlanValidatedAgainGivesTheSameGraph(t *testing.T) {
	plan := chain(50)
	first, err := taskgraph.ValidateMax(plan, catalog, 100)
	require.NoError(t, err)
	again, err := taskgraph.ValidateMax(plan, catalog, 100)
	require.NoError(t, err)
	require.Equal(t, first.TaskGraph(), again.TaskGraph())
	require.Equal(t, first.Order(), again.Order())
	allocs := testing.AllocsPerRun(20, func() { _, _ = taskgraph.ValidateMax(plan, catalog, 100) })
	require.Less(t, allocs, 200.0, "validating the same plan again is not a whole validation (%d steps)", len(plan.Nodes))

	// The bound on steps is read again.
	_, err = taskgraph.ValidateMax(plan, catalog, 10)
	require.ErrorContains(t, err, "50 steps")

	// So is each tool's schema: one that asks for more now refuses the plan.
	stricter := maps.Clone(catalog)
	stricter["file_read"] = json.RawMessage(`{"type":"object","required":["path","why"],"properties":{"path":{"type":"string"},"why":{"type":"string"}}}`)
	_, err = taskgraph.ValidateMax(plan, stricter, 100)
	require.ErrorContains(t, err, "why")
	withoutIt := maps.Clone(catalog)
	delete(withoutIt, "file_read")
	_, err = taskgraph.ValidateMax(plan, withoutIt, 100)
	require.ErrorContains(t, err, `uses tool "file_read", which is not available`)

	// And the plan: one changed argument is checked.
	changed := chain(50)
	changed.Nodes[7].Args = json.RawMessage(`{"path":7}`)
	_, err = taskgraph.ValidateMax(changed, catalog, 100)
	require.ErrorContains(t, err, `step "s7" has invalid args`)
}
