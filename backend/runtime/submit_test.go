package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/runtime"
)

// A run's request is said once, in its first event: the run's spec names
// no program blob, and a fork of the run (whose spec is the parent's) runs
// as before.
func TestSubmitRecordsTheRequestOnce(t *testing.T) {
	t.Parallel()
	f := setup(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "say it once", Plan: plan(step("a", "noop", `{}`), step("b", "noop", `{}`, "a")),
		ApprovalMode: runtime.AutoSandboxed})
	require.NoError(t, err)
	require.Equal(t, backend.RunRunning, run.Status, "the run is created with its task.received")
	f.approveAll(t, run.ID) // only asked where bubblewrap is missing
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)

	spec, err := f.store.GetSpec(f.ctx, run.WorldID)
	require.NoError(t, err)
	require.Empty(t, spec.Program.Digest, "the spec names no program: the request is the run's first event")
	events := f.events(t, run.ID)
	require.Equal(t, runtime.EvTaskReceived, events[0].Type)
	var req runtime.TaskRequest
	require.NoError(t, json.Unmarshal(events[0].Payload, &req))
	require.Equal(t, "say it once", req.Task)
	require.Len(t, req.Plan.Nodes, 2)
	has, err := f.blobs.Has(f.ctx, blob.Digest(events[0].Payload))
	require.NoError(t, err)
	require.False(t, has, "no blob repeats the request")

	// A fork of the run: its spec, like its parent's, names no program.
	cps, err := f.store.ListCheckpoints(f.ctx, run.ID)
	require.NoError(t, err)
	_, child, childRun, err := f.rt.Fork(f.ctx, runtime.ForkRequest{CheckpointID: cps[1].ID, Divergence: backend.DivergePlanEdit})
	require.NoError(t, err)
	require.Empty(t, child.Program.Digest)
	f.approveAll(t, childRun.ID)
	cst := f.waitStatus(t, childRun.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, cst.Status, cst.StatusReason)
	require.Equal(t, "say it once", cst.Request.Task)
}

// failingCreate is a run store that cannot create a run.
type failingCreate struct{ runtime.RunStore }

func (failingCreate) CreateSpecAndRunWith(context.Context, backend.WorldSpec, backend.WorldRun, []backend.Event) ([]backend.Event, error) {
	return nil, backend.Errorf(backend.EINTERNAL, "the disk is full")
}

// A Submit whose one transaction fails leaves nothing: no run, no blob.
func TestSubmitThatCannotStoreItsRunLeavesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	deps := f.deps
	deps.Store = failingCreate{f.store}
	rt := runtime.New(deps)
	t.Cleanup(rt.Close)
	_, err := rt.Submit(f.ctx, runtime.TaskRequest{Task: "never stored", Plan: plan(step("a", "noop", `{}`))})
	require.Equal(t, backend.EINTERNAL, backend.ErrorCode(err), "%v", err)
	runs, err := f.store.ListRunsOfBackend(f.ctx, runtime.BackendTask)
	require.NoError(t, err)
	require.Empty(t, runs)
	blobs := 0
	err = filepath.WalkDir(filepath.Join(f.dir, "blobs"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			blobs++
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	})
	require.NoError(t, err)
	require.Zero(t, blobs, "Submit writes no blob")
}

// A run recorded before the request was said once has its request in its
// spec's program blob, and it may have no task.received (ducklm stopped
// between the run's row and its first event): it is taken up from its spec
// as before.
func TestRunOfTheOldShapeIsRecordedFromItsSpec(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req := runtime.TaskRequest{Task: "half submitted", Plan: plan(step("a", "noop", `{}`)), ApprovalMode: runtime.AutoSandboxed,
		Limits: backend.DefaultLimits(), MaxSteps: 5, MaxReplans: 2, MaxRetries: 1, Concurrency: 2}
	data, err := json.Marshal(req)
	require.NoError(t, err)
	ref, err := f.blobs.Put(f.ctx, data, "application/json")
	require.NoError(t, err)
	now := time.Now().UTC()
	spec := backend.WorldSpec{ID: backend.NewID(backend.KindWorld), Name: req.Task, Domain: backend.DomainReal,
		Backend: runtime.BackendTask, Program: ref, Params: json.RawMessage("{}"), CreatedAt: now}
	run := backend.WorldRun{ID: backend.NewID(backend.KindRun), WorldID: spec.ID, Status: backend.RunPending, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, f.store.CreateSpecAndRun(f.ctx, spec, run))

	resumed, err := f.rt.ResumeAll(f.ctx)
	require.NoError(t, err)
	require.Contains(t, resumed, run.ID)
	f.approveAll(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, "half submitted", st.Request.Task)
	require.Equal(t, filepath.Join(f.deps.WorkRoot, run.ID), st.Request.Workspace, "the default workspace")
	events := f.events(t, run.ID)
	require.Equal(t, runtime.EvTaskReceived, events[0].Type)
	got, err := f.store.GetSpec(f.ctx, spec.ID)
	require.NoError(t, err)
	require.Equal(t, ref.Digest, got.Program.Digest, "an old run keeps its spec")
}
