package starlark

import (
	"bytes"
	_ "embed"
	"fmt"
)

// BranchingGrid is the source of the Branching Grid example: an agent on a
// 9x9 grid with walls moves towards a goal, slipping with probability
// state["params"]["noise"]; a null action moves along a shortest path, so a
// run can be driven without a policy. See examples/branching_grid.star for its
// actions, events and roles.
//
//go:embed examples/branching_grid.star
var BranchingGrid []byte

// BranchingGridOfSize is the Branching Grid example on an n×n grid with
// its goal in the far corner (n = 9: the example as it is). A branch's
// cost is mostly its shortest-path score, which grows with the grid: the
// workers' benchmark uses a large one as a world whose branches cost their
// simulation more than their bookkeeping.
func BranchingGridOfSize(n int) ([]byte, error) {
	if n < 2 {
		return nil, fmt.Errorf("a grid is at least 2x2, not %dx%d", n, n)
	}
	src := bytes.Clone(BranchingGrid)
	for _, r := range [][2]string{{`"size": 9,`, fmt.Sprintf(`"size": %d,`, n)}, {`"goal": [8, 8],`, fmt.Sprintf(`"goal": [%d, %d],`, n-1, n-1)}} {
		if !bytes.Contains(src, []byte(r[0])) {
			return nil, fmt.Errorf("the example no longer sets %s", r[0])
		}
		src = bytes.Replace(src, []byte(r[0]), []byte(r[1]), 1)
	}
	return src, nil
}

// Examples returns the shipped example programs by name. The map and the
// byte slices are fresh copies, so a caller cannot change what others see.
func Examples() map[string][]byte {
	return map[string][]byte{
		"branching_grid": bytes.Clone(BranchingGrid),
	}
}
