package starlark_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"ducklm/backend"
	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

type moved struct {
	Type      string `json:"type"`
	From      [2]int `json:"from"`
	To        [2]int `json:"to"`
	Intended  string `json:"intended"`
	Direction string `json:"direction"`
	Slipped   bool   `json:"slipped"`
	Blocked   bool   `json:"blocked"`
}

// runGrid drives w with null actions until done or max steps, checking each
// step's events; it returns the steps taken and the number of slips.
func runGrid(t *testing.T, w *starlark.World, max int) (steps, slips int) {
	t.Helper()
	for !w.Done() && steps < max {
		res := step(t, w, `null`)
		steps++
		require.EqualValues(t, steps, res.WorldLocalTime)
		require.NotEmpty(t, res.Emitted)
		var m moved
		require.NoError(t, json.Unmarshal(res.Emitted[0], &m))
		require.Equal(t, "moved", m.Type)
		dist := abs(m.To[0]-m.From[0]) + abs(m.To[1]-m.From[1])
		if m.Blocked {
			require.Zero(t, dist)
		} else {
			require.Equal(t, 1, dist)
		}
		require.Equal(t, m.Slipped, m.Direction != m.Intended)
		if m.Slipped {
			slips++
		}
		if res.Done {
			require.Len(t, res.Emitted, 2)
			require.JSONEq(t, `{"type":"goal_reached","at":[8,8],"steps":`+itoa(steps)+`}`, string(res.Emitted[1]))
		} else {
			require.Len(t, res.Emitted, 1)
		}
	}
	return steps, slips
}

func TestGridReachesGoalWithNullActions(t *testing.T) {
	t.Parallel()
	p := compile(t, string(starlark.BranchingGrid), starlark.Limits{})
	totalSlips := 0
	for seed := range uint64(10) {
		w := p.New()
		_, err := w.Initialize(context.Background(), seed)
		require.NoError(t, err)
		steps, slips := runGrid(t, w, 300)
		require.True(t, w.Done(), "seed %d did not reach the goal in 300 steps", seed)
		require.GreaterOrEqual(t, steps, 24, "no path is shorter than the shortest path")
		totalSlips += slips
		_, err = w.Step(context.Background(), nil)
		requireCode(t, err, backend.EINVALID, "world is terminal")
	}
	require.Positive(t, totalSlips, "noise 0.2 slips sometimes")
}

func TestGridForkWithoutNoiseTakesTheShortestPath(t *testing.T) {
	t.Parallel()
	w := newWorld(t, string(starlark.BranchingGrid), 4)
	patched := strings.Replace(string(w.State()), `"noise":0.2`, `"noise":0.0`, 1)
	require.NoError(t, w.ReplaceState(json.RawMessage(patched)))
	steps, slips := runGrid(t, w, 300)
	require.True(t, w.Done())
	require.Zero(t, slips)
	require.Equal(t, 24, steps, "the shortest path around the walls")

	requireCode(t, w.ReplaceState(json.RawMessage(`{`)), backend.EINVALID, "not valid JSON")
}

func TestGridActions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, string(starlark.BranchingGrid), 1)
	patched := strings.Replace(string(w.State()), `"noise":0.2`, `"noise":0`, 1)
	require.NoError(t, w.ReplaceState(json.RawMessage(patched)))

	res := step(t, w, `"N"`) // off the edge: blocked
	require.Contains(t, string(res.Emitted[0]), `"blocked":true`)
	res = step(t, w, `{"move":"E"}`)
	require.Contains(t, string(res.Emitted[0]), `"to":[1,0]`)
	res = step(t, w, `"E"`) // into the wall at (2,0)
	require.Contains(t, string(res.Emitted[0]), `"blocked":true,"direction":"E","from":[1,0]`)

	for _, bad := range []string{`"up"`, `{"go":"N"}`, `7`} {
		_, err := w.Step(context.Background(), json.RawMessage(bad))
		requireCode(t, err, backend.EINVALID, "action must be one of N, S, E, W", "(in step)")
	}
	require.EqualValues(t, 3, w.Time())
}

func TestExamples(t *testing.T) {
	t.Parallel()
	ex := starlark.Examples()
	require.Equal(t, starlark.BranchingGrid, ex["branching_grid"])
	ex["branching_grid"][0] = 'X'
	require.NotEqual(t, byte('X'), starlark.Examples()["branching_grid"][0])
	for name, src := range starlark.Examples() {
		_, err := starlark.Compile(name, src, starlark.Limits{})
		require.NoError(t, err, name)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
