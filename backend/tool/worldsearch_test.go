package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/tool"
	"ducklm/backend/world"
)

func TestWorldSearchRanksTheNextActions(t *testing.T) {
	t.Parallel()
	f := setup(t)
	worlds, ledger := newWorlds(t)
	ws := &tool.WorldSearch{Worlds: worlds, Deliberation: deliberation.New(worlds, ledger)}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ws.ArgsSchema()))
	require.NoError(t, err)
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	require.NoError(t, comp.AddResource("urn:test:world_search", doc))
	sch, err := comp.Compile("urn:test:world_search")
	require.NoError(t, err)
	for v, ok := range map[string]bool{
		`{"example":"branching_grid","depth":3}`:         true,
		`{"run":"run_0123456789abcdef0123456789abcdef"}`: true,
		`{}`: false,
		`{"example":"branching_grid","program":"x"}`:       false,
		`{"example":"branching_grid","strategy":"greedy"}`: false,
		`{"run":"wld_0123456789abcdef0123456789abcdef"}`:   false,
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(v)))
		require.NoError(t, err)
		require.Equal(t, ok, sch.Validate(inst) == nil, v)
	}

	res, err := ws.Run(context.Background(), f.call(t, "world_search", map[string]any{"example": "branching_grid", "seed": 3, "depth": 3, "budget": 30}))
	require.NoError(t, err)
	require.Zero(t, res.ExitCode, string(res.Stderr))
	var out struct {
		Hypothesis        bool            `json:"hypothesis"`
		World             string          `json:"world"`
		Run               string          `json:"run"`
		DeliberationIndex int64           `json:"deliberationIndex"`
		Chosen            json.RawMessage `json:"chosen"`
		Candidates        []struct {
			Action json.RawMessage   `json:"action"`
			Line   []json.RawMessage `json:"line"`
			State  json.RawMessage   `json:"state"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.True(t, out.Hypothesis)
	require.EqualValues(t, 1, out.DeliberationIndex)
	require.Len(t, out.Candidates, 2, "E and S are open at the start")
	require.JSONEq(t, string(out.Chosen), string(out.Candidates[0].Action))
	require.Empty(t, out.Candidates[0].State)

	// The branches are forks of the world it searched, in its lineage, and
	// the world itself did not move.
	forks, err := worlds.Descendants(context.Background(), out.World)
	require.NoError(t, err)
	require.NotEmpty(t, forks)
	run, err := worlds.Run(context.Background(), out.Run)
	require.NoError(t, err)
	require.Zero(t, run.WorldLocalTime)

	// Searching a run the task already has continues its deliberations.
	res, err = ws.Run(context.Background(), f.call(t, "world_search", map[string]any{"run": out.Run, "strategy": "mcts", "depth": 3, "budget": 20}))
	require.NoError(t, err)
	require.Zero(t, res.ExitCode, string(res.Stderr))
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.EqualValues(t, 2, out.DeliberationIndex)

	// A program without actions and score is a failed step with the reason.
	_, plain, err := worlds.Create(context.Background(), world.NewWorld{Name: "plain", Seed: 1, Program: []byte(
		"def init(seed):\n    return {}\ndef step(state, action, rng):\n    return state\ndef observe(state, role):\n    return state\n")})
	require.NoError(t, err)
	res, err = ws.Run(context.Background(), f.call(t, "world_search", map[string]any{"run": plain.ID}))
	require.NoError(t, err)
	require.Equal(t, 1, res.ExitCode)
	require.Contains(t, string(res.Stderr), "must define actions(state) and score(state)")

	for _, bad := range []map[string]any{
		{},
		{"example": "branching_grid", "run": plain.ID},
		{"example": "branching_grid", "strategy": "greedy"},
		{"example": "nope"},
		{"example": "branching_grid", "bogus": 1},
	} {
		_, err := ws.Run(context.Background(), f.call(t, "world_search", bad))
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%v: %v", bad, err)
	}
}
