package runtime_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/bundle"
	"ducklm/backend/deliberation"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/router"
	"ducklm/backend/runtime"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/tool"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

// withWorldTools adds world_sim and world_search, on the fixture's own
// database, to the tools.
func withWorldTools(worlds **world.Service) option {
	return func(d *runtime.Deps) {
		ledger := d.Events.(*store.Ledger)
		*worlds = world.New(d.Store.(*store.Worlds), ledger, d.Blobs.(*blob.Store), starlark.DefaultLimits(), worldproc.Shared())
		tools := append(d.Tools.List(), &tool.WorldSim{Worlds: *worlds},
			&tool.WorldSearch{Worlds: *worlds, Deliberation: deliberation.New(*worlds, ledger)})
		d.Tools = tool.NewRegistry(tools...)
	}
}

// nearGoal is the Branching Grid without noise, starting four moves from
// its goal (a shortest path: E, E, S, S... around the walls).
func nearGoal(t *testing.T) string {
	src := string(starlark.Examples()["branching_grid"])
	for old, repl := range map[string]string{`"pos": [0, 0]`: `"pos": [6, 6]`, `"noise": 0.2`: `"noise": 0`} {
		require.Contains(t, src, old)
		src = strings.Replace(src, old, repl, 1)
	}
	return src
}

// A task the planning model answers with a world_search deliberates for
// real: the simulated world is forked from the task's own world, the
// search's branches are forks of it, and the router turns the chosen line
// into steps that take it, which run before the step that waited for the
// search. The world reaches its goal in the fewest moves.
func TestATaskTakesItsSearchsChosenLine(t *testing.T) {
	t.Parallel()
	var worlds *world.Service
	program := nearGoal(t)
	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{testModel, "nomic-embed-text"}})
	plan, err := json.Marshal(map[string]any{"decision": "plan", "reason": "search the world, then report", "confidence": 0.9,
		"plan": map[string]any{"nodes": []map[string]any{
			{"id": "search", "kind": "tool", "tool": "world_search", "title": "Search the grid",
				"args": map[string]any{"program": program, "strategy": "beam", "width": 3, "depth": 6, "budget": 60}, "depends_on": []string{}},
			{"id": "report", "kind": "tool", "tool": "noop", "title": "Report", "args": map[string]any{}, "depends_on": []string{"search"}},
		}}})
	require.NoError(t, err)
	srv.OnChat(criticAnswers(func(int) ollamatest.Reply { return ollamatest.Reply{Content: string(plan)} }))
	f := setup(t, withModel(ollama.New(srv.URL(), nil)), withWorldTools(&worlds))

	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "Walk the grid to its goal the shortest way.", ApprovalMode: runtime.AskRisky})
	require.NoError(t, err)
	f.approveAll(t, run.ID) // noop is unknown to the risk policy, so it asks
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	// The search's output: the task's own world, and the line it chose.
	var out struct {
		World string            `json:"world"`
		Run   string            `json:"run"`
		Line  []json.RawMessage `json:"line"`
		Act   bool              `json:"act"`
	}
	require.NoError(t, json.Unmarshal(st.Steps["search"].Result.Output, &out))
	require.True(t, out.Act)
	require.Len(t, out.Line, 4, "the shortest way from (6,6) is four moves")

	// The simulated world is a child of the task's world in the lineage,
	// and the search's branches are its descendants.
	taskRun, err := f.store.GetRun(f.ctx, run.ID)
	require.NoError(t, err)
	sim, err := worlds.Spec(f.ctx, out.World)
	require.NoError(t, err)
	require.Equal(t, backend.DomainSimulated, sim.Domain)
	require.Equal(t, taskRun.WorldID, sim.ParentWorldID)
	fork, err := worlds.ForkOf(f.ctx, sim.ID)
	require.NoError(t, err)
	require.Equal(t, run.ID, fork.ParentRunID)
	require.Equal(t, backend.DivergeProgramChange, fork.Divergence)
	simRun, err := worlds.Run(f.ctx, out.Run)
	require.NoError(t, err)
	require.Positive(t, simRun.ParentTime, "the simulation began at the task's position")
	below, err := worlds.Descendants(f.ctx, taskRun.WorldID)
	require.NoError(t, err)
	require.Greater(t, len(below), 4, "the simulation and its branches are under the task's world")

	// The line became steps, one per move, taken in order after the search
	// and before the step that waited for the search.
	order := st.Order()
	idx := slices.Index(order, "search")
	for i := range out.Line {
		id := router.MoveStepID("search", i+1)
		require.Equal(t, id, order[idx+1+i])
		rec := st.Steps[id]
		require.Equal(t, runtime.StepDone, rec.State, id)
		require.Equal(t, router.ToolWorldSim, rec.Node.Tool)
	}
	require.Contains(t, st.Steps["report"].Node.DependsOn, router.MoveStepID("search", 4))
	events := f.events(t, run.ID)
	finished := func(step string) int64 {
		for _, e := range events {
			var p struct {
				Step string `json:"step"`
			}
			if e.Type == runtime.EvStepFinished && json.Unmarshal(e.Payload, &p) == nil && p.Step == step {
				return e.Seq
			}
		}
		t.Fatalf("step %s never finished", step)
		return 0
	}
	require.Less(t, finished(router.MoveStepID("search", 4)), finished("report"))

	// The moves walked the task's world to its goal, and it verifies.
	var last struct {
		Done bool `json:"done"`
	}
	require.NoError(t, json.Unmarshal(st.Steps[router.MoveStepID("search", 4)].Result.Output, &last))
	require.True(t, last.Done)
	simRun, err = worlds.Run(f.ctx, out.Run)
	require.NoError(t, err)
	require.EqualValues(t, 4, simRun.WorldLocalTime)
	rep, err := worlds.Verify(f.ctx, out.Run)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
	f.requireExactCheckpoints(t, run.ID)

	// The task exported with its descendants carries its simulation and
	// the search's branches, and they re-execute where they are imported.
	var buf bytes.Buffer
	local := bundle.Local{Store: f.store, Events: f.ledger, Blobs: f.blobs}
	_, err = bundle.Export(f.ctx, local, run.ID, &buf, bundle.ExportOptions{Descendants: true})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "task.ducklm")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
	to := setup(t)
	toLocal := bundle.Local{Store: to.store, Events: to.ledger, Blobs: to.blobs}
	_, err = bundle.ImportFile(to.ctx, toLocal, to.ledger, path, bundle.ImportOptions{AllowUnsigned: true})
	require.NoError(t, err)
	toWorlds := world.New(to.store, to.ledger, to.blobs, starlark.DefaultLimits(), worldproc.Shared())
	for _, w := range below {
		runs, err := toWorlds.Runs(to.ctx, w.ID)
		require.NoError(t, err)
		for _, r := range runs {
			rep, err := toWorlds.Verify(to.ctx, r.ID)
			require.NoError(t, err)
			require.True(t, rep.OK, "%s: %+v", r.ID, rep.Divergence)
		}
	}
}

// A second search in the same task continues the task's world where the
// first one's line left it, instead of starting a new world.
func TestASecondSearchContinuesTheTasksWorld(t *testing.T) {
	t.Parallel()
	var worlds *world.Service
	program := nearGoal(t)
	search := func(id string, deps ...string) map[string]any {
		return map[string]any{"id": id, "kind": "tool", "tool": "world_search", "depends_on": append([]string{}, deps...),
			"args": map[string]any{"program": program, "depth": 2, "budget": 20}}
	}
	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{testModel, "nomic-embed-text"}})
	plan, err := json.Marshal(map[string]any{"decision": "plan", "reason": "two short searches", "confidence": 0.9,
		"plan": map[string]any{"nodes": []map[string]any{search("first"), search("second", "first")}}})
	require.NoError(t, err)
	srv.OnChat(criticAnswers(func(int) ollamatest.Reply { return ollamatest.Reply{Content: string(plan)} }))
	f := setup(t, withModel(ollama.New(srv.URL(), nil)), withWorldTools(&worlds))
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "Walk the grid in two searches.", ApprovalMode: runtime.AskRisky})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed, backend.RunPaused)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	var first, second struct {
		Run  string            `json:"run"`
		Line []json.RawMessage `json:"line"`
	}
	require.NoError(t, json.Unmarshal(st.Steps["first"].Result.Output, &first))
	require.NoError(t, json.Unmarshal(st.Steps["second"].Result.Output, &second))
	require.Equal(t, first.Run, second.Run, "the second search searched the task's world")
	require.Len(t, first.Line, 2)
	require.Len(t, second.Line, 2, "two moves were left after the first line")
	require.Contains(t, st.Steps["second"].Node.DependsOn, router.MoveStepID("first", 2))
	simRun, err := worlds.Run(f.ctx, first.Run)
	require.NoError(t, err)
	require.EqualValues(t, 4, simRun.WorldLocalTime, "four moves in all reached the goal")
}
