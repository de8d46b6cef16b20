package taskgraph_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/taskgraph"
)

type states = map[string]taskgraph.StepState

const (
	pending  = taskgraph.Pending
	running  = taskgraph.Running
	awaiting = taskgraph.AwaitingApproval
	done     = taskgraph.Done
	failed   = taskgraph.Failed
	skipped  = taskgraph.Skipped
	inDoubt  = taskgraph.InDoubt
)

// diamond: a → (b, c) → d, plus an independent e.
func diamond(t *testing.T) *taskgraph.Graph {
	return mustParse(t, plan(t,
		shell("d", "x", "c", "b"),
		shell("b", "x", "a"),
		shell("c", "x", "a"),
		shell("a", "x"),
		shell("e", "x"),
	))
}

func TestOrderBreaksTiesByPlanOrder(t *testing.T) {
	t.Parallel()
	// d and b come first in the plan but wait for a; e is free from the
	// start but comes after a in the plan.
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, diamond(t).Order())

	g := mustParse(t, plan(t, shell("z", "x"), shell("y", "x"), shell("x", "x", "z"), shell("w", "x")))
	require.Equal(t, []string{"z", "y", "x", "w"}, g.Order())

	chain := mustParse(t, plan(t, shell("s3", "x", "s2"), shell("s2", "x", "s1"), shell("s1", "x")))
	require.Equal(t, []string{"s1", "s2", "s3"}, chain.Order())
}

func TestOrderIsDeterministic(t *testing.T) {
	t.Parallel()
	p := plan(t, shell("f", "x", "a", "b"), shell("b", "x"), shell("c", "x", "b"), shell("a", "x"), shell("e", "x", "c", "a"), shell("g", "x"))
	want := mustParse(t, p).Order()
	for range 50 {
		require.Equal(t, want, mustParse(t, p).Order())
	}
	require.Equal(t, []string{"b", "c", "a", "f", "e", "g"}, want)
}

func TestReady(t *testing.T) {
	t.Parallel()
	g := diamond(t)
	tests := []struct {
		name   string
		states states
		want   []string
	}{
		{"start", nil, []string{"a", "e"}},
		{"a running", states{"a": running}, []string{"e"}},
		{"a done: both branches", states{"a": done}, []string{"b", "c", "e"}},
		{"one branch done", states{"a": done, "b": done, "e": done}, []string{"c"}},
		{"join waits for both", states{"a": done, "b": done, "c": running, "e": done}, nil},
		{"join", states{"a": done, "b": done, "c": done, "e": done}, []string{"d"}},
		{"awaiting approval is not ready", states{"a": awaiting}, []string{"e"}},
		{"in doubt is ready again", states{"a": inDoubt}, []string{"a", "e"}},
		{"failed dependency", states{"a": failed}, []string{"e"}},
		{"skipped dependency", states{"a": done, "b": skipped, "c": done}, []string{"e"}},
		{"empty state means pending", states{"a": ""}, []string{"a", "e"}},
		{"unknown ids ignored", states{"zzz": done}, []string{"a", "e"}},
		{"all done", states{"a": done, "b": done, "c": done, "d": done, "e": done}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, g.Ready(tt.states))
			// ReadyIn, over the same states by plan position, agrees.
			byPos := make([]taskgraph.StepState, g.Len())
			for i := range byPos {
				byPos[i] = tt.states[g.IDAt(i)]
			}
			var ids []string
			for _, i := range g.ReadyIn(byPos) {
				ids = append(ids, g.IDAt(i))
			}
			require.Equal(t, tt.want, ids)
		})
	}
}

func TestParallelBranchesReadyInTopologicalOrder(t *testing.T) {
	t.Parallel()
	g := mustParse(t, plan(t,
		shell("root", "x"),
		shell("l2", "x", "l1"), shell("r2", "x", "r1"),
		shell("l1", "x", "root"), shell("r1", "x", "root"),
	))
	// l2 precedes r1 in the plan, so once l1 is placed it goes before r1.
	require.Equal(t, []string{"root", "l1", "l2", "r1", "r2"}, g.Order())
	require.Equal(t, []string{"l1", "r1"}, g.Ready(states{"root": done}))
	require.Equal(t, []string{"l2", "r2"}, g.Ready(states{"root": done, "l1": done, "r1": done}))
}

func TestBlocked(t *testing.T) {
	t.Parallel()
	g := mustParse(t, plan(t,
		shell("a", "x"), shell("b", "x", "a"), shell("c", "x", "b"),
		shell("d", "x"), shell("e", "x", "d", "c"), shell("f", "x", "d"),
	))
	tests := []struct {
		name   string
		states states
		want   []string
	}{
		{"nothing failed", states{"a": done}, nil},
		{"transitively", states{"a": failed}, []string{"b", "c", "e"}},
		{"skipped blocks too", states{"a": done, "b": skipped}, []string{"c", "e"}},
		{"only pending steps", states{"a": failed, "b": skipped, "c": skipped}, []string{"e"}},
		{"one failed dependency is enough", states{"a": done, "b": done, "c": done, "d": failed}, []string{"e", "f"}},
		{"running steps are not blocked", states{"a": failed, "b": running}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, g.Blocked(tt.states))
		})
	}
}

func TestFinishedAndSummary(t *testing.T) {
	t.Parallel()
	g := diamond(t)
	require.False(t, g.Finished(nil))
	require.Equal(t, taskgraph.Summary{Total: 5, Pending: 5}, g.Summary(nil))

	s := states{"a": done, "b": failed, "c": running, "d": pending, "e": inDoubt}
	require.False(t, g.Finished(s))
	require.Equal(t, taskgraph.Summary{Total: 5, Pending: 1, Running: 1, Done: 1, Failed: 1, InDoubt: 1}, g.Summary(s))

	s = states{"a": done, "b": failed, "c": done, "d": skipped, "e": awaiting}
	require.False(t, g.Finished(s))
	s["e"] = done
	require.True(t, g.Finished(s))
	require.Equal(t, taskgraph.Summary{Total: 5, Done: 3, Failed: 1, Skipped: 1}, g.Summary(s))

	s["e"] = "bogus"
	require.False(t, g.Finished(s), "an unknown state is not terminal")
	require.Equal(t, taskgraph.Summary{Total: 5, Done: 2, Failed: 1, Skipped: 1}, g.Summary(s))
}

func TestGraphIsImmutable(t *testing.T) {
	t.Parallel()
	g := diamond(t)
	nodes := g.Nodes()
	nodes[0].ID = "changed"
	nodes[0].DependsOn[0] = "changed"
	nodes[0].Args[2] = 'X'
	order := g.Order()
	order[0] = "changed"
	n, _ := g.Node("b")
	n.DependsOn[0] = "changed"

	again := g.Nodes()
	require.Equal(t, "d", again[0].ID)
	require.Equal(t, []string{"c", "b"}, again[0].DependsOn)
	require.True(t, json.Valid(again[0].Args))
	require.Equal(t, "a", g.Order()[0])
	n, _ = g.Node("b")
	require.Equal(t, []string{"a"}, n.DependsOn)
}

func TestStepStateTerminal(t *testing.T) {
	t.Parallel()
	for s, want := range map[taskgraph.StepState]bool{
		pending: false, running: false, awaiting: false, inDoubt: false, done: true, failed: true, skipped: true,
	} {
		require.Equal(t, want, s.Terminal(), s)
	}
}
