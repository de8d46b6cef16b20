package store_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/store"
)

// A run is created with its spec and its first events in one transaction:
// when any of the three cannot be stored, none is, so no run is ever left
// without its first event (a task run's request, which its spec no longer
// repeats as a program blob).
func TestCreateSpecAndRunWithIsOneTransaction(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		w := store.NewWorlds(f.db, f.ledger)
		received := func() backend.Event {
			return backend.Event{Type: "task.received", Reality: backend.ExternalReal, Payload: json.RawMessage(`{"task":"say hello"}`)}
		}
		taskSpec := func() (backend.WorldSpec, backend.WorldRun) {
			spec, run := newSpec("say hello"), newRun("")
			spec.Domain, spec.Backend, spec.Program, spec.Seed = backend.DomainReal, "task", backend.BlobRef{}, 0
			run.WorldID = spec.ID
			return spec, run
		}
		none := func(spec backend.WorldSpec, run backend.WorldRun) {
			t.Helper()
			_, err := w.GetSpec(f.ctx, spec.ID)
			require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "no spec: %v", err)
			_, err = w.GetRun(f.ctx, run.ID)
			require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "no run: %v", err)
		}

		// All three.
		spec, run := taskSpec()
		stored, err := w.CreateSpecAndRunWith(f.ctx, spec, run, []backend.Event{received()})
		require.NoError(t, err)
		require.Len(t, stored, 1)
		require.EqualValues(t, 1, stored[0].Seq)
		got, err := w.GetSpec(f.ctx, spec.ID)
		require.NoError(t, err)
		require.Empty(t, got.Program.Digest, "a spec may name no program")
		gotRun, err := w.GetRun(f.ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, spec.ID, gotRun.WorldID)
		events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: run.ID})
		require.NoError(t, err)
		require.Len(t, events, 1)
		require.Equal(t, "task.received", events[0].Type)

		// The run's stream already has events: the append expects it empty
		// and conflicts, and neither the spec nor the run is stored.
		spec, run = taskSpec()
		_, err = f.ledger.Append(f.ctx, run.ID, 0, received())
		require.NoError(t, err)
		_, err = w.CreateSpecAndRunWith(f.ctx, spec, run, []backend.Event{received()})
		require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err), "%v", err)
		none(spec, run)
		head, err := f.ledger.Head(f.ctx, run.ID)
		require.NoError(t, err)
		require.EqualValues(t, 1, head, "the stream keeps only what was there")

		// The spec cannot be stored (its id is taken): neither the run nor
		// the events are.
		_, run = taskSpec()
		dup := spec
		dup.ID = got.ID
		run.WorldID = dup.ID
		_, err = w.CreateSpecAndRunWith(f.ctx, dup, run, []backend.Event{received()})
		require.Error(t, err)
		_, err = w.GetRun(f.ctx, run.ID)
		require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "no run: %v", err)
		head, err = f.ledger.Head(f.ctx, run.ID)
		require.NoError(t, err)
		require.Zero(t, head, "no events")

		// The run cannot be stored (its id is taken by a run recorded
		// without events, as the old Submit could leave one): neither the
		// spec nor the events are.
		oldSpec, oldRun := taskSpec()
		require.NoError(t, w.CreateSpecAndRun(f.ctx, oldSpec, oldRun))
		spec, run = taskSpec()
		run.ID = oldRun.ID
		_, err = w.CreateSpecAndRunWith(f.ctx, spec, run, []backend.Event{received()})
		require.Error(t, err)
		_, err = w.GetSpec(f.ctx, spec.ID)
		require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "no spec: %v", err)
		head, err = f.ledger.Head(f.ctx, run.ID)
		require.NoError(t, err)
		require.Zero(t, head, "no events")
	})
}
