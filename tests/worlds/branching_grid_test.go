// Package worlds_test is the Branching Grid integration test of the world
// kernel: one parent run, a checkpoint, two children forked from it with
// different divergences, a shared prefix, divergent post-fork states, and
// lineage and events that survive reopening the data directory.
package worlds_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/cli"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/world"
)

// gridState is the part of a Branching Grid state the test looks at.
type gridState struct {
	Pos    [2]int `json:"pos"`
	Steps  int    `json:"steps"`
	Params struct {
		Noise float64 `json:"noise"`
	} `json:"params"`
}

func decodeState(t *testing.T, raw json.RawMessage) gridState {
	t.Helper()
	var s gridState
	require.NoError(t, json.Unmarshal(raw, &s))
	return s
}

func ids(events []backend.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func TestBranchingGridParentCheckpointTwoChildren(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	svc, err := service.Open(ctx, dir)
	require.NoError(t, err)
	w := svc.Worlds

	// One parent run: six steps along the shortest path, then a checkpoint.
	parent, run, err := w.Create(ctx, world.NewWorld{Name: "branching grid", Program: starlark.BranchingGrid, Seed: 7})
	require.NoError(t, err)
	for range 6 {
		_, err := w.Step(ctx, run.ID, nil)
		require.NoError(t, err)
	}
	cp, err := w.Checkpoint(ctx, run.ID)
	require.NoError(t, err)
	require.EqualValues(t, 6, cp.WorldLocalTime)
	atFork, err := w.State(ctx, run.ID)
	require.NoError(t, err)
	// The parent goes on; its later events are no part of the children's history.
	_, err = w.RunSteps(ctx, run.ID, world.RunOptions{Steps: 3})
	require.NoError(t, err)
	prefix, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: run.ID, ToSeq: cp.LedgerSeq})
	require.NoError(t, err)
	require.Len(t, prefix, int(cp.LedgerSeq))

	// Two children from that checkpoint: no noise, and another seed.
	forkA, a, aRun, err := w.Fork(ctx, world.ForkRequest{
		CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{"params":{"noise":0}}`), Name: "calm",
	})
	require.NoError(t, err)
	forkB, b, bRun, err := w.Fork(ctx, world.ForkRequest{
		CheckpointID: cp.ID, Divergence: backend.DivergeSeedChange, Delta: json.RawMessage(`{"seed":99}`), Name: "reseeded",
	})
	require.NoError(t, err)
	require.NotEqual(t, a.ID, b.ID)
	require.EqualValues(t, 99, b.Seed)
	require.Equal(t, parent.Seed, a.Seed)

	endA, err := w.RunSteps(ctx, aRun.ID, world.RunOptions{Steps: 60, CheckpointEvery: 10})
	require.NoError(t, err)
	endB, err := w.RunSteps(ctx, bRun.ID, world.RunOptions{Steps: 60, CheckpointEvery: 10})
	require.NoError(t, err)

	// Divergent post-fork states: the calm child walks the shortest path to
	// the goal; the reseeded one slips on its way.
	sa, sb := decodeState(t, endA.State), decodeState(t, endB.State)
	require.True(t, endA.Done)
	require.Equal(t, backend.RunCompleted, endA.Run.Status)
	require.Equal(t, [2]int{8, 8}, sa.Pos)
	require.EqualValues(t, 0, sa.Params.Noise)
	require.EqualValues(t, 0.2, sb.Params.Noise)
	require.NotEqual(t, sa, sb)
	require.NotEqual(t, string(endA.State), string(endB.State))

	// The shared prefix: each child's full history starts with exactly the
	// parent's events up to the checkpoint (by id), then its own stream.
	histories := map[string][]backend.Event{}
	for _, r := range []backend.WorldRun{aRun, bRun} {
		h, err := w.History(ctx, r.ID)
		require.NoError(t, err)
		require.Greater(t, len(h), len(prefix))
		require.Equal(t, ids(prefix), ids(h[:len(prefix)]))
		require.Equal(t, world.EventForked, h[len(prefix)].Type)
		for _, e := range h[len(prefix):] {
			require.Equal(t, r.ID, e.Stream)
			require.Equal(t, backend.WorldLocal, e.Reality)
			require.EqualValues(t, 6, e.ParentTime)
		}
		histories[r.ID] = h
	}
	postA, postB := histories[aRun.ID][len(prefix):], histories[bRun.ID][len(prefix):]
	require.NotEqual(t, ids(postA), ids(postB))
	moved := func(events []backend.Event) []string {
		var out []string
		for _, e := range events {
			if e.Type == world.EventEmitted {
				out = append(out, string(e.Payload))
			}
		}
		return out
	}
	require.NotEqual(t, moved(postA), moved(postB), "the children moved differently after the fork")

	d, err := w.Diff(ctx, aRun.ID, bRun.ID)
	require.NoError(t, err)
	require.Equal(t, parent.ID, d.CommonWorldID)
	require.Equal(t, cp.LedgerSeq, d.SharedEvents)

	// Persisted: a fresh service on the same directory sees the same lineage,
	// forks, events and states, and re-executes every run to its record.
	wantHistA := ids(histories[aRun.ID])
	stateB := string(endB.State)
	require.NoError(t, svc.Close())
	svc, err = service.Open(ctx, dir)
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	w = svc.Worlds

	dag, err := w.Lineage(ctx)
	require.NoError(t, err)
	require.Len(t, dag.Nodes, 3)
	require.Len(t, dag.Edges, 2)
	for _, e := range dag.Edges {
		require.Equal(t, parent.ID, e.Fork.ParentWorldID)
		require.Equal(t, run.ID, e.Fork.ParentRunID)
		require.Equal(t, cp.ID, e.Fork.CheckpointID)
		require.EqualValues(t, 6, e.At)
	}
	for _, child := range []backend.WorldSpec{a, b} {
		anc, err := w.Ancestors(ctx, child.ID)
		require.NoError(t, err)
		require.Len(t, anc, 1)
		require.Equal(t, parent.ID, anc[0].ID)
	}
	desc, err := w.Descendants(ctx, parent.ID)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{a.ID, b.ID}, []string{desc[0].ID, desc[1].ID})
	common, err := w.CommonAncestor(ctx, a.ID, b.ID)
	require.NoError(t, err)
	require.Equal(t, parent.ID, common.ID)

	reg := store.NewWorlds(svc.DB, svc.Ledger)
	gotA, err := reg.ForkOf(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, forkA.ID, gotA.ID)
	require.Equal(t, backend.DivergeStatePatch, gotA.Divergence)
	require.JSONEq(t, `{"params":{"noise":0}}`, string(gotA.Delta))
	gotB, err := reg.ForkOf(ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, forkB.ID, gotB.ID)
	require.Equal(t, backend.DivergeSeedChange, gotB.Divergence)
	require.Equal(t, backend.SeedInherit, gotB.SeedPolicy)

	h, err := w.History(ctx, aRun.ID)
	require.NoError(t, err)
	require.Equal(t, wantHistA, ids(h))
	got, err := w.State(ctx, bRun.ID)
	require.NoError(t, err)
	require.Equal(t, stateB, string(got), "a reopened run restores its exact state")
	parentState, err := w.State(ctx, run.ID)
	require.NoError(t, err)
	require.NotEqual(t, string(atFork), string(parentState), "the parent moved on after the checkpoint")

	for _, id := range []string{run.ID, aRun.ID, bRun.ID} {
		rep, err := w.Verify(ctx, id)
		require.NoError(t, err)
		require.True(t, rep.OK, "%s: %+v", id, rep.Divergence)
	}
}

// demoOutput runs `ducklm world demo` and returns its "label: value" lines.
func demoOutput(t *testing.T) map[string]string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(cli.Env{Ctx: context.Background(), Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader("")}, []string{"world", "demo"})
	require.Equal(t, cli.ExitOK, code, "stdout: %s\nstderr: %s", out.String(), errOut.String())
	fields := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			fields[k] = v
		}
	}
	return fields
}

func TestBranchingGridDemoCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DUCKLM_HOME", dir)
	f := demoOutput(t)

	for label, kind := range map[string]backend.IDKind{
		"parent world": backend.KindWorld, "parent run": backend.KindRun, "checkpoint": backend.KindCheckpoint,
		"child A world": backend.KindWorld, "child A run": backend.KindRun, "child A fork": backend.KindFork,
		"child B world": backend.KindWorld, "child B run": backend.KindRun, "child B fork": backend.KindFork,
	} {
		require.NoError(t, backend.CheckID(f[label], kind), label)
	}
	require.Equal(t, "6", f["checkpoint time"])
	require.Equal(t, "pos [8,8], steps 26, done true, status completed", f["child A terminal"])
	require.NotEqual(t, f["child A terminal"], f["child B terminal"])
	require.Contains(t, f["child B terminal"], "done false")
	for _, label := range []string{"verified parent", "verified child A", "verified child B"} {
		require.Regexp(t, `^\d+ events, \d+ steps, \d+ checkpoints$`, f[label])
	}

	// What the demo printed is what the data directory holds.
	ctx := context.Background()
	svc, err := service.Open(ctx, dir)
	require.NoError(t, err)
	defer svc.Close()
	reg := store.NewWorlds(svc.DB, svc.Ledger)
	cp, err := reg.GetCheckpoint(ctx, f["checkpoint"])
	require.NoError(t, err)
	require.Equal(t, f["parent run"], cp.RunID)
	shared, err := strconv.Atoi(strings.TrimSuffix(f["shared prefix"], " events"))
	require.NoError(t, err)
	require.EqualValues(t, cp.LedgerSeq, shared)
	parentEvents, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: f["parent run"], ToSeq: cp.LedgerSeq})
	require.NoError(t, err)
	for _, c := range []string{"A", "B"} {
		spec, err := reg.GetSpec(ctx, f["child "+c+" world"])
		require.NoError(t, err)
		require.Equal(t, f["parent world"], spec.ParentWorldID)
		require.Equal(t, f["child "+c+" fork"], spec.ForkID)
		fork, err := reg.ForkOf(ctx, spec.ID)
		require.NoError(t, err)
		require.Equal(t, f["checkpoint"], fork.CheckpointID)
		h, err := svc.Worlds.History(ctx, f["child "+c+" run"])
		require.NoError(t, err)
		require.Equal(t, ids(parentEvents), ids(h[:shared]))
	}

	// The demo is reproducible: a second run in a fresh directory ends the same.
	t.Setenv("DUCKLM_HOME", t.TempDir())
	again := demoOutput(t)
	require.Equal(t, f["child A terminal"], again["child A terminal"])
	require.Equal(t, f["child B terminal"], again["child B terminal"])
	require.NotEqual(t, f["parent world"], again["parent world"])
}
