package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/river"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
	"ducklm/backend/settings"
	"ducklm/backend/starlark"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

// searchTask is a task of one world_search step, whose chosen line the
// task does not take (the step is the whole task): over the simulated
// world's run run, or ("") a grid of the task's own.
func searchTask(run string, budget int) runtime.TaskRequest {
	a := map[string]any{"strategy": "beam", "width": 64, "depth": 30, "seeds": 2, "budget": budget, "act": false}
	if run == "" {
		a["example"], a["seed"] = "branching_grid", 4
	} else {
		a["run"] = run
	}
	args, _ := json.Marshal(a)
	return runtime.TaskRequest{Task: "Search the grid.", ApprovalMode: runtime.AskRisky,
		Plan: &backend.TaskGraph{Nodes: []backend.TaskNode{{ID: "search", Kind: backend.KindToolStep, Tool: "world_search", Args: args}}}}
}

// searched is what a search step found, without the ids of the worlds it
// made (each task searches a world of its own): what must not depend on
// where its branches ran.
type searched struct {
	Chosen     json.RawMessage `json:"chosen"`
	Candidates []struct {
		Action json.RawMessage   `json:"action"`
		Score  float64           `json:"score"`
		Mean   float64           `json:"mean"`
		Visits int               `json:"visits"`
		Line   []json.RawMessage `json:"line"`
	} `json:"candidates"`
	Budget struct {
		Used, Steps, Deduplicated, Depth int
		Stopped                          string
	} `json:"budget"`
	Run string `json:"run"`
	// Scores are the scores of every branch of the round, sorted.
	Scores []float64 `json:"-"`
}

// runSearch runs the search task on svc to its end and returns its step's
// result, what it found and the step's events.
func runSearch(t *testing.T, ctx context.Context, svc *service.Service, world string, budget int) (*backend.Placement, searched, []backend.Event) {
	t.Helper()
	run, err := svc.Runtime.Submit(ctx, searchTask(world, budget))
	require.NoError(t, err)
	return waitSearch(t, ctx, svc, run.ID)
}

func waitSearch(t *testing.T, ctx context.Context, svc *service.Service, runID string) (*backend.Placement, searched, []backend.Event) {
	t.Helper()
	var st *runtime.RunState
	require.Eventually(t, func() bool {
		var err error
		st, _, err = svc.Runtime.Load(ctx, runID)
		require.NoError(t, err)
		return st.Status.Terminal()
	}, 3*time.Minute, 20*time.Millisecond)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	res := st.Steps["search"].Result
	require.NotNil(t, res)
	require.True(t, res.OK, res.Error+res.StderrTail)
	var s searched
	require.NoError(t, json.Unmarshal(res.Output, &s))
	rounds, err := svc.Deliberation.Rounds(ctx, s.Run)
	require.NoError(t, err)
	require.Len(t, rounds, 1)
	for _, v := range rounds[0].Scores {
		s.Scores = append(s.Scores, v)
	}
	slices.Sort(s.Scores)
	events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: runID})
	require.NoError(t, err)
	return res.Placement, s, events
}

// gridCopy creates a simulated grid on svc and a copy of it (its bundle:
// the same ids, so a search of it draws the same seeds) in a SQLite data
// directory of its own, where a search runs in one process.
func gridCopy(t *testing.T, ctx context.Context, svc *service.Service) (string, *service.Service) {
	t.Helper()
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 4})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "grid.ducklm")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = bundle.Export(ctx, svc.Bundles(), run.ID, f, bundle.ExportOptions{})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	local, err := service.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { local.Close() })
	_, err = local.ImportBundle(ctx, path, true, nil)
	require.NoError(t, err)
	return run.ID, local
}

func openTeam(t *testing.T, ctx context.Context, url string) *service.Service {
	t.Helper()
	svc, err := service.OpenWith(ctx, t.TempDir(), service.Options{DatabaseURL: url})
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	return svc
}

// A task's world_search step on a team's database runs its branches on the
// team's workers when one is alive, and finds exactly what the same search
// finds in this process; with no worker alive, or with Settings → Task
// steps set to here, it runs here and its record says why.
func TestATasksSearchRunsItsBranchesOnTheTeamsWorkers(t *testing.T) {
	t.Setenv("OLLAMA_HOST", deadHost)
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	svc := openTeam(t, ctx, url)
	grid, local := gridCopy(t, ctx, svc)

	where, _, _ := runSearch(t, ctx, svc, "", 60)
	require.Equal(t, &backend.Placement{Here: "No worker of the team was alive, so its branches ran here."}, where)

	other := openTeam(t, ctx, url) // the worker's own installation
	w, err := river.StartWorker(ctx, url, other.Worlds, river.Options{Slots: 2, Recorder: other.DB})
	require.NoError(t, err)
	defer w.Stop(context.Background())

	where, there, _ := runSearch(t, ctx, svc, grid, 120)
	require.Equal(t, &backend.Placement{Workers: 1, Branches: 120}, where)
	_, here, _ := runSearch(t, ctx, local, grid, 120)
	require.Equal(t, here, there, "the same chosen action, candidates and branches as the search of the copy in one process")

	require.NoError(t, settings.Save(svc.Dir, settings.Settings{TaskSteps: settings.TaskStepsHere}))
	where, _, _ = runSearch(t, ctx, svc, "", 60)
	require.Equal(t, &backend.Placement{Here: "Settings → Task steps keeps them on this machine, so its branches ran here."}, where)

	portable := map[string]bool{}
	for _, e := range svc.Tools.Catalog() {
		portable[e.Name] = e.Portable
	}
	require.Equal(t, map[string]bool{"browser": false, "file_read": false, "file_write": false, "shell_exec": false,
		"web_fetch": false, "world_search": true, "world_sim": false}, portable, "the catalog marks the tools that may run on workers")
}

// On this machine's own SQLite database a search records no placement:
// there is no team to lend it workers.
func TestASearchOnSQLiteSaysNothingOfWorkers(t *testing.T) {
	t.Setenv("OLLAMA_HOST", deadHost)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	svc, err := service.Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer svc.Close()
	where, found, _ := runSearch(t, ctx, svc, "", 20)
	require.Nil(t, where)
	require.Equal(t, 20, found.Budget.Used)
}

// TestTeamWorkerProcess is the worker process of
// TestAWorkerKilledMidStepLosesNoBranch; it does nothing in a normal run.
func TestTeamWorkerProcess(t *testing.T) {
	url := os.Getenv("DUCKLM_TEST_TEAM_WORKER_URL")
	if url == "" {
		return
	}
	svc, err := service.OpenWith(context.Background(), t.TempDir(), service.Options{DatabaseURL: url, Quiet: true})
	require.NoError(t, err)
	_, err = river.StartWorker(context.Background(), url, svc.Worlds, river.Options{Slots: 1,
		ID: os.Getenv("DUCKLM_TEST_TEAM_WORKER_ID"), Recorder: svc.DB})
	require.NoError(t, err)
	select {} // until killed
}

// A worker SIGKILLed while it runs a job of a task's search: the job goes
// back to the queue and another worker runs it, the step finishes once,
// and it finds what the same search finds in one process.
func TestAWorkerKilledMidStepLosesNoBranch(t *testing.T) {
	t.Setenv("OLLAMA_HOST", deadHost)
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	svc := openTeam(t, ctx, url)
	const budget = 400
	grid, local := gridCopy(t, ctx, svc)
	_, here, _ := runSearch(t, ctx, local, grid, budget) // the copy, in one process

	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	running := func(id string) (n int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job
			WHERE state = 'running' AND attempted_by[cardinality(attempted_by)] = $1`, id).Scan(&n))
		return n
	}
	// start starts a worker process that takes one job at a time.
	start := func(id string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTeamWorkerProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "DUCKLM_TEST_TEAM_WORKER_URL="+url, "DUCKLM_TEST_TEAM_WORKER_ID="+id)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	first := "victim-0-" + t.Name()
	victim := start(first)
	require.Eventually(t, func() bool {
		team, err := service.AliveWorkers(ctx, svc.DB)
		require.NoError(t, err)
		return team.Alive == 1
	}, 2*time.Minute, 20*time.Millisecond, "the worker process joined")

	run, err := svc.Runtime.Submit(ctx, searchTask(grid, budget))
	require.NoError(t, err)
	// A victim dies as soon as it runs a job of the step. A job of 8
	// branches takes milliseconds: one may end between the look and the
	// kill, so a victim that died between two jobs is followed by another,
	// until one dies with a job under way.
	midJob := false
	for i := 0; !midJob; i++ {
		require.Less(t, i, 10, "ten victims never died with a job under way")
		id := first
		if i > 0 {
			id = fmt.Sprintf("victim-%d-%s", i, t.Name())
			victim = start(id)
		}
		require.Eventually(t, func() bool { return running(id) > 0 }, 2*time.Minute, 2*time.Millisecond,
			"victim %s took a job of the step", id)
		require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
		victim.Wait()
		midJob = running(id) > 0 // left running: no live worker has reaped it yet
		st, _, err := svc.Runtime.Load(ctx, run.ID)
		require.NoError(t, err)
		require.False(t, st.Status.Terminal(), "the step was still waiting for its branches when the worker died")
	}

	other := openTeam(t, ctx, url)
	finisher, err := river.StartWorker(ctx, url, other.Worlds, river.Options{Slots: 2, Recorder: other.DB,
		ReapEvery: 200 * time.Millisecond})
	require.NoError(t, err)
	defer finisher.Stop(context.Background())

	where, there, events := waitSearch(t, ctx, svc, run.ID)
	require.Equal(t, budget, where.Branches)
	require.GreaterOrEqual(t, where.Workers, 1)
	require.Equal(t, here, there, "the same search as in one process")
	started, finished := 0, 0
	for _, e := range events {
		switch e.Type {
		case runtime.EvStepStarted:
			started++
		case runtime.EvStepFinished:
			finished++
		}
	}
	require.Equal(t, 1, started, "the step ran once")
	require.Equal(t, 1, finished, "the step finished once")
	var reruns int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE cardinality(errors) > 0`).Scan(&reruns))
	require.Positive(t, reruns, "the job the victim died in went back to the queue")
}
