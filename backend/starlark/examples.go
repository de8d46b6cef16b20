package starlark

import (
	"bytes"
	_ "embed"
)

// BranchingGrid is the source of the Branching Grid example: an agent on a
// 9x9 grid with walls moves towards a goal, slipping with probability
// state["params"]["noise"]; a null action moves along a shortest path, so a
// run can be driven without a policy. See examples/branching_grid.star for its
// actions, events and roles.
//
//go:embed examples/branching_grid.star
var BranchingGrid []byte

// Examples returns the shipped example programs by name. The map and the
// byte slices are fresh copies, so a caller cannot change what others see.
func Examples() map[string][]byte {
	return map[string][]byte{
		"branching_grid": bytes.Clone(BranchingGrid),
	}
}
