package api_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
)

func TestParseOpen(t *testing.T) {
	run, other, world := backend.NewID(backend.KindRun), backend.NewID(backend.KindRun), backend.NewID(backend.KindWorld)
	good := map[string]struct {
		args []string
		want api.OpenRequest
	}{
		"nothing":        {nil, api.OpenRequest{}},
		"screen":         {[]string{"lineage"}, api.OpenRequest{Screen: "lineage"}},
		"runs is home":   {[]string{"runs"}, api.OpenRequest{Screen: "home"}},
		"workers":        {[]string{"workers"}, api.OpenRequest{Screen: "workers"}},
		"tools":          {[]string{"tools"}, api.OpenRequest{Screen: "settings", Section: "tools"}},
		"run":            {[]string{run}, api.OpenRequest{Screen: "run", ID: run}},
		"world":          {[]string{world}, api.OpenRequest{Screen: "world", ID: world}},
		"timeline":       {[]string{"timeline", run}, api.OpenRequest{Screen: "timeline", ID: run}},
		"timeline + seq": {[]string{"timeline", run, "42"}, api.OpenRequest{Screen: "timeline", ID: run, Seq: 42}},
		"compare":        {[]string{"compare", run, other}, api.OpenRequest{Screen: "compare", ID: run, Other: other}},
	}
	for name, c := range good {
		got, err := api.ParseOpen(c.args)
		require.NoError(t, err, name)
		require.Equal(t, c.want, got, name)
	}
	bad := map[string][]string{
		"unknown word":     {"dashboard"},
		"two things":       {"lineage", "worlds"},
		"checkpoint id":    {backend.NewID(backend.KindCheckpoint)},
		"timeline no run":  {"timeline"},
		"timeline a world": {"timeline", world},
		"timeline bad seq": {"timeline", run, "0"},
		"compare one run":  {"compare", run},
		"compare a world":  {"compare", run, world},
	}
	for name, args := range bad {
		_, err := api.ParseOpen(args)
		require.Error(t, err, name)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), name)
		require.Contains(t, backend.ErrorMessage(err), "usage: ducklm open", name)
	}
}

func TestTakeOpenResolvesOnce(t *testing.T) {
	a := setup(t)
	none, err := a.TakeOpen()
	require.NoError(t, err)
	require.Equal(t, api.Opened{}, none, "nothing asked: nothing to show")

	c, err := a.CreateWorld(api.WorldInput{Name: "grid", Example: "branching_grid", Seed: 7})
	require.NoError(t, err)
	task, err := a.SubmitTask(api.TaskInput{Plan: `{"nodes":[{"id":"a","kind":"tool","tool":"file_read","args":{"path":"x"}}]}`})
	require.NoError(t, err)

	cases := []struct {
		req  api.OpenRequest
		want api.OpenRoute
	}{
		{api.OpenRequest{Screen: "settings"}, api.OpenRoute{Screen: "settings"}},
		{api.OpenRequest{Screen: "settings", Section: "tools"}, api.OpenRoute{Screen: "settings", Section: "tools"}},
		{api.OpenRequest{Screen: "run", ID: c.Run.ID}, api.OpenRoute{Screen: "world", RunID: c.Run.ID}},
		{api.OpenRequest{Screen: "run", ID: task.ID}, api.OpenRoute{Screen: "run", RunID: task.ID}},
		{api.OpenRequest{Screen: "world", ID: c.World.ID}, api.OpenRoute{Screen: "lineage", Select: c.World.ID}},
		{api.OpenRequest{Screen: "timeline", ID: c.Run.ID, Seq: 3}, api.OpenRoute{Screen: "timeline", RunID: c.Run.ID, Seq: 3, World: true}},
		{api.OpenRequest{Screen: "timeline", ID: task.ID}, api.OpenRoute{Screen: "timeline", RunID: task.ID}},
		{api.OpenRequest{Screen: "compare", ID: c.Run.ID, Other: task.ID}, api.OpenRoute{Screen: "lineage", Compare: []string{c.Run.ID, task.ID}}},
	}
	for _, tc := range cases {
		api.SetOpen(a, tc.req)
		got, err := a.TakeOpen()
		require.NoError(t, err)
		require.Equal(t, api.Opened{Route: tc.want}, got, "%+v", tc.req)
		again, err := a.TakeOpen()
		require.NoError(t, err)
		require.Equal(t, api.Opened{}, again, "a request is shown once")
	}

	api.SetOpen(a, api.OpenRequest{Screen: "run", ID: backend.NewID(backend.KindRun)})
	got, err := a.TakeOpen()
	require.NoError(t, err)
	require.Equal(t, "home", got.Route.Screen)
	require.Contains(t, got.Error, "run_")

	// A comparison of a run that does not exist says so, on the home screen.
	api.SetOpen(a, api.OpenRequest{Screen: "compare", ID: c.Run.ID, Other: backend.NewID(backend.KindRun)})
	got, err = a.TakeOpen()
	require.NoError(t, err)
	require.Equal(t, "home", got.Route.Screen)
	require.Contains(t, got.Error, "run_")
}
