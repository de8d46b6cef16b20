// Package bundles_test exports runs from one data directory and imports
// them into fresh ones: every fact, checkpoint and lineage edge must arrive
// intact, and hostile bundles must be refused with the database untouched.
package bundles_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/store"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

// source is one data directory with a forked Branching Grid and a finished
// task run, exported once for every test of the package.
type source struct {
	dir                            string
	parentWorld, parentRun         string
	checkpoint                     string
	childA, childB                 string // runs
	taskRun                        string
	taskState                      *runtime.RunState
	worldBundle, childBundle, task string // files
	unsignedTask                   string
	state                          map[string]runState // by run
	lineage                        world.Lineage
	histories                      map[string][]backend.Event
}

var src source

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ducklm-bundles-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = build(context.Background(), dir)
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the source data directory:", err)
	} else {
		code = m.Run()
	}
	pgtest.Shutdown()
	os.RemoveAll(dir)
	os.Exit(code)
}

func build(ctx context.Context, dir string) error {
	src = source{dir: dir, state: map[string]runState{}, histories: map[string][]backend.Event{}}
	svc, err := service.Open(ctx, filepath.Join(dir, "home"))
	if err != nil {
		return err
	}
	defer svc.Close()
	w := svc.Worlds

	// The Branching Grid: a parent, a checkpoint at time 6, two children.
	parent, run, err := w.Create(ctx, world.NewWorld{Name: "branching grid", Program: starlark.BranchingGrid, Seed: 7})
	if err != nil {
		return err
	}
	src.parentWorld, src.parentRun = parent.ID, run.ID
	for range 6 {
		if _, err := w.Step(ctx, run.ID, nil); err != nil {
			return err
		}
	}
	cp, err := w.Checkpoint(ctx, run.ID)
	if err != nil {
		return err
	}
	src.checkpoint = cp.ID
	if _, err := w.RunSteps(ctx, run.ID, world.RunOptions{Steps: 3}); err != nil {
		return err
	}
	_, _, a, err := w.Fork(ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch,
		Delta: json.RawMessage(`{"params":{"noise":0}}`), Name: "calm"})
	if err != nil {
		return err
	}
	_, _, b, err := w.Fork(ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeSeedChange,
		Delta: json.RawMessage(`{"seed":99}`), Name: "reseeded"})
	if err != nil {
		return err
	}
	src.childA, src.childB = a.ID, b.ID
	for _, id := range []string{a.ID, b.ID} {
		if _, err := w.RunSteps(ctx, id, world.RunOptions{Steps: 60, CheckpointEvery: 10}); err != nil {
			return err
		}
	}

	// A task run with an explicit plan, run to completion.
	plan := &backend.TaskGraph{Nodes: []backend.TaskNode{
		{ID: "write", Kind: backend.KindToolStep, Tool: "file_write", DependsOn: []string{},
			Args: json.RawMessage(`{"path":"notes/hello.txt","content":"hello <bundles> & \"friends\"\n"}`)},
		{ID: "read", Kind: backend.KindToolStep, Tool: "file_read", DependsOn: []string{"write"},
			Args: json.RawMessage(`{"path":"notes/hello.txt"}`)},
	}}
	task, err := svc.Runtime.Submit(ctx, runtime.TaskRequest{Task: "write a note", ApprovalMode: runtime.AutoSandboxed, Plan: plan})
	if err != nil {
		return err
	}
	src.taskRun = task.ID
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _, err := svc.Runtime.Load(ctx, task.ID)
		if err != nil {
			return err
		}
		if st.Status.Terminal() {
			if st.Status != backend.RunCompleted {
				return fmt.Errorf("the task run ended %s: %s", st.Status, st.StatusReason)
			}
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the task run is still %s", st.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := svc.Runtime.Wait(ctx, task.ID); err != nil {
		return err
	}
	if src.taskState, _, err = svc.Runtime.Load(ctx, task.ID); err != nil {
		return err
	}

	// What the imports must reproduce.
	reg := store.NewWorlds(svc.DB, svc.Ledger)
	for _, id := range []string{run.ID, a.ID, b.ID, task.ID} {
		if src.state[id], err = readRun(ctx, reg, svc.Ledger, id); err != nil {
			return err
		}
		if src.histories[id], err = w.History(ctx, id); err != nil {
			return err
		}
	}
	if src.lineage, err = w.Lineage(ctx); err != nil {
		return err
	}

	key, err := bundle.LoadOrCreateKey(svc.Dir)
	if err != nil {
		return err
	}
	local := bundle.Local{Store: reg, Events: svc.Ledger, Blobs: svc.Blobs}
	export := func(name, root string, opts bundle.ExportOptions) (string, error) {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		_, err = bundle.Export(ctx, local, root, f, opts)
		return path, err
	}
	if src.worldBundle, err = export("world.ducklm", parent.ID, bundle.ExportOptions{Descendants: true, Key: &key}); err != nil {
		return err
	}
	if src.childBundle, err = export("child.ducklm", a.ID, bundle.ExportOptions{Ancestry: true, Key: &key}); err != nil {
		return err
	}
	if src.task, err = export("task.ducklm", task.ID, bundle.ExportOptions{Key: &key}); err != nil {
		return err
	}
	src.unsignedTask, err = export("task-unsigned.ducklm", task.ID, bundle.ExportOptions{})
	return err
}

// runState is everything stored about one run, as the registry and the
// ledger return it (positions left out: they are local).
type runState struct {
	Spec        backend.WorldSpec
	Run         backend.WorldRun
	Fork        *backend.Fork
	Checkpoints []backend.Checkpoint
	Events      []backend.Event
}

func readRun(ctx context.Context, reg *store.Worlds, ledger *store.Ledger, runID string) (runState, error) {
	var s runState
	var err error
	if s.Run, err = reg.GetRun(ctx, runID); err != nil {
		return s, err
	}
	if s.Spec, err = reg.GetSpec(ctx, s.Run.WorldID); err != nil {
		return s, err
	}
	if f, err := reg.ForkOf(ctx, s.Spec.ID); err == nil {
		s.Fork = &f
	}
	if s.Checkpoints, err = reg.ListCheckpoints(ctx, runID); err != nil {
		return s, err
	}
	if s.Events, err = ledger.Query(ctx, backend.EventQuery{Stream: runID}); err != nil {
		return s, err
	}
	for i := range s.Events {
		s.Events[i].Pos = 0
	}
	return s, nil
}

// target is a fresh data directory to import into.
type target struct {
	svc   *service.Service
	reg   *store.Worlds
	local bundle.Local
	trust bundle.Trust
}

func newTarget(t *testing.T) *target {
	t.Helper()
	svc, err := service.Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	reg := store.NewWorlds(svc.DB, svc.Ledger)
	return &target{svc: svc, reg: reg, local: bundle.Local{Store: reg, Events: svc.Ledger, Blobs: svc.Blobs}}
}

func (tg *target) importFile(t *testing.T, path string, opts bundle.ImportOptions) (bundle.Result, error) {
	t.Helper()
	return bundle.ImportFile(context.Background(), tg.local, tg.svc.Ledger, path, opts)
}

// dbState summarises a data directory's database for "untouched" checks.
func dbState(t *testing.T, svc *service.Service) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"streams", "events", "world_specs", "world_runs", "checkpoints", "forks"} {
		var n int64
		require.NoError(t, svc.DB.SQL.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
		out[table] = n
	}
	var sum int64
	require.NoError(t, svc.DB.SQL.QueryRow("SELECT coalesce(sum(head_seq), 0) FROM streams").Scan(&sum))
	out["heads"] = sum
	return out
}

func sortedIDs(events []backend.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	sort.Strings(out)
	return out
}
