package starlark_test

import (
	"context"
	"fmt"

	"ducklm/backend/starlark"
)

// Example runs the Branching Grid for a few steps with null actions (move
// along a shortest path), then forks it from a checkpoint: the fork continues
// exactly as the original does.
func Example() {
	prog, err := starlark.Compile("branching_grid.star", starlark.BranchingGrid, starlark.Limits{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	w := prog.New()
	if _, err := w.Initialize(ctx, 1); err != nil {
		panic(err)
	}
	for range 2 {
		res, _ := w.Step(ctx, nil)
		fmt.Printf("t=%d %s\n", res.WorldLocalTime, res.Emitted[0])
	}

	ckpt, _ := w.CheckpointBytes()
	fork := prog.New()
	if err := fork.RestoreBytes(ckpt); err != nil {
		panic(err)
	}
	a, _ := w.Step(ctx, nil)
	b, _ := fork.Step(ctx, nil)
	fmt.Println(string(a.State) == string(b.State), fork.Time())
	// Output:
	// t=1 {"blocked":false,"direction":"E","from":[0,0],"intended":"E","slipped":false,"to":[1,0],"type":"moved"}
	// t=2 {"blocked":false,"direction":"S","from":[1,0],"intended":"S","slipped":false,"to":[1,1],"type":"moved"}
	// true 3
}
