package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"ducklm/backend"
	"ducklm/backend/world"
)

// taskSimulation is the simulated world a call works in. Called by a task
// run, it is the task's own: the newest world of this program and seed that
// the task already started (so a later step continues where the earlier
// ones left it) when reuse is true, else a new one forked from the task's
// world at its latest checkpoint, so it stands in the task's lineage.
// Called outside a task run (the CLI, a test), it is a new root world.
func taskSimulation(ctx context.Context, worlds *world.Service, call backend.ToolCall, name string, source []byte, seed int64, reuse bool) (backend.WorldRun, error) {
	from := ""
	if backend.CheckID(call.RunID, backend.KindRun) == nil {
		switch _, err := worlds.Run(ctx, call.RunID); {
		case err == nil:
			from = call.RunID
		case backend.ErrorCode(err) != backend.ENOTFOUND:
			return backend.WorldRun{}, err
		}
	}
	if from != "" && reuse {
		run, ok, err := worlds.Simulation(ctx, from, source, seed)
		if err != nil || ok {
			return run, err
		}
	}
	_, run, err := worlds.Create(ctx, world.NewWorld{Name: name + " (for " + call.RunID + ")", Program: source, Seed: seed, From: from})
	return run, err
}

// sameAction reports whether two JSON actions are the same value.
func sameAction(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return reflect.DeepEqual(x, y)
}
