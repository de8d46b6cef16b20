package world_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/world"
)

func TestSpecIsNotRunAndIsImmutable(t *testing.T) {
	t.Parallel()
	f := setup(t)
	spec, run := create(t, f, 7)
	require.NotEqual(t, spec.ID, run.ID)
	require.NoError(t, backend.CheckID(spec.ID, backend.KindWorld))
	require.NoError(t, backend.CheckID(run.ID, backend.KindRun))
	require.Equal(t, spec.ID, run.WorldID)
	require.Equal(t, backend.DomainSimulated, spec.Domain)

	// The database refuses to change or delete a stored spec.
	_, err := f.db.SQL.Exec("UPDATE world_specs SET seed = 8 WHERE id = ?", spec.ID)
	require.ErrorContains(t, err, "immutable")
	_, err = f.db.SQL.Exec("DELETE FROM world_specs WHERE id = ?", spec.ID)
	require.ErrorContains(t, err, "immutable")

	// Many runs may reference one spec.
	store := sqlite_worlds(f)
	second := run
	second.ID = backend.NewID(backend.KindRun)
	require.NoError(t, store.CreateRun(f.ctx, second))
	runs, err := store.ListRuns(f.ctx, spec.ID)
	require.NoError(t, err)
	require.Len(t, runs, 2)
}

func TestStepRecordsWorldLocalEventsWithThreeClocks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run := create(t, f, 1)
	out := steps(t, f, run.ID, 3)
	require.EqualValues(t, 3, out.Run.WorldLocalTime)
	require.Len(t, out.Emitted, 1)

	events, err := f.worlds.History(f.ctx, run.ID)
	require.NoError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
		require.Equal(t, backend.WorldLocal, e.Reality, "a simulated world's events are world-local")
		require.Zero(t, e.ParentTime, "a root world has parent_time 0")
		require.Zero(t, e.DeliberationIndex)
	}
	require.Equal(t, []string{world.EventInitialized, world.EventCheckpoint,
		world.EventStep, world.EventEmitted, world.EventStep, world.EventEmitted, world.EventStep, world.EventEmitted}, types)
	require.EqualValues(t, 0, events[0].WorldLocalTime)
	require.EqualValues(t, 1, events[2].WorldLocalTime)
	require.EqualValues(t, 3, events[7].WorldLocalTime)

	// And the ledger refuses to record a fact on this stream as external-real.
	_, err = f.ledger.Append(f.ctx, run.ID, backend.ExpectAny, backend.Event{Type: "promoted", Reality: backend.ExternalReal})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

func TestSameSeedAndActionsGiveIdenticalBytes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, a := create(t, f, 42)
	_, b := create(t, f, 42)
	_, c := create(t, f, 43)
	steps(t, f, a.ID, 20)
	steps(t, f, b.ID, 20)
	steps(t, f, c.ID, 20)
	sa, err := f.worlds.State(f.ctx, a.ID)
	require.NoError(t, err)
	sb, err := f.worlds.State(f.ctx, b.ID)
	require.NoError(t, err)
	sc, err := f.worlds.State(f.ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, string(sa), string(sb))
	require.NotEqual(t, string(sa), string(sc))

	ea, err := f.worlds.History(f.ctx, a.ID)
	require.NoError(t, err)
	eb, err := f.worlds.History(f.ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, len(ea), len(eb))
	for i := range ea {
		if ea[i].Type == world.EventStep || ea[i].Type == world.EventEmitted {
			require.Equal(t, string(ea[i].Payload), string(eb[i].Payload), "event %d", i)
		}
	}
}

func TestReopenedRunContinuesExactly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, a := create(t, f, 5)
	_, b := create(t, f, 5)
	steps(t, f, a.ID, 4)
	_, err := f.worlds.Checkpoint(f.ctx, a.ID)
	require.NoError(t, err)
	steps(t, f, a.ID, 3) // after the checkpoint: replayed on reopen

	fresh := f.reopen()
	outA, err := fresh.Step(f.ctx, a.ID, nil)
	require.NoError(t, err)
	steps(t, f, b.ID, 8)
	sb, err := f.worlds.State(f.ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, string(sb), string(outA.State))
}

func TestBrokenProgramsAreRefusedOrFailTheRun(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, _, err := f.worlds.Create(f.ctx, world.NewWorld{Program: []byte("def init(seed):\n  return {\n")})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	specs, err := sqlite_worlds(f).ListSpecs(f.ctx)
	require.NoError(t, err)
	require.Empty(t, specs, "a program that does not compile stores nothing")

	loops := `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    if state["n"] == 2:
        while True:
            pass
    return {"n": state["n"] + 1}
def observe(state, role):
    return state
`
	_, run, err := f.worlds.Create(f.ctx, world.NewWorld{Name: "loops", Program: []byte(loops)})
	require.NoError(t, err)
	steps(t, f, run.ID, 2)
	_, err = f.worlds.Step(f.ctx, run.ID, nil)
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "line ")

	got, err := sqlite_worlds(f).GetRun(f.ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, backend.RunFailed, got.Status)
	require.Contains(t, got.Error, "execution steps")
	events, err := f.worlds.History(f.ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, world.EventFailed, events[len(events)-1].Type)
	require.Equal(t, `{"n":2}`, string(mustState(t, f, run.ID)), "what was recorded before the failure stays")

	_, err = f.worlds.Step(f.ctx, run.ID, nil)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "a failed run takes no more steps")
	_, err = f.worlds.Step(f.ctx, backend.NewID(backend.KindRun), nil)
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	_, err = f.worlds.Step(f.ctx, "run_nope", nil)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, err = f.worlds.Step(f.ctx, run.ID, json.RawMessage("{bad"))
	require.Error(t, err)
}

func TestObserveIsRoleRelative(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, run := create(t, f, 3)
	steps(t, f, run.ID, 2)
	pub, err := f.worlds.Observe(f.ctx, run.ID, "public")
	require.NoError(t, err)
	require.JSONEq(t, `{"n":2}`, string(pub))
	full, err := f.worlds.Observe(f.ctx, run.ID, "observer")
	require.NoError(t, err)
	require.Contains(t, string(full), `"sum"`)
}

func mustState(t *testing.T, f fixture, runID string) json.RawMessage {
	raw, err := f.worlds.State(f.ctx, runID)
	require.NoError(t, err)
	return raw
}
