package runtime_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/critic"
	"ducklm/backend/runtime"
)

// A step that runs records two events: its start (with the router's
// decision that started it) and its result, which carries its critique
// (with the critic's decision) and ends its checkpoint. Every decision is
// still read back, and the run's clock still counts one tick per decision.
func TestAStepCarriesItsDecisionsInItsStartAndItsResult(t *testing.T) {
	t.Parallel()
	lb := newLoopBench(t)
	runID := lb.run(t, trivialPlan(3, true), 1)
	events, err := lb.ledger.Query(lb.ctx, backend.EventQuery{Stream: runID})
	require.NoError(t, err)

	// From the first step's start to the run's end, a step is two events.
	first := 0
	for first < len(events) && events[first].Type != runtime.EvStepStarted {
		first++
	}
	var got []string
	for _, e := range events[first:] {
		got = append(got, e.Type)
	}
	perStep := []string{runtime.EvStepStarted, runtime.EvStepFinished}
	want := append(append(append(append([]string{}, perStep...), perStep...), perStep...),
		runtime.EvDecision, runtime.EvCompleted, runtime.EvCheckpoint)
	require.Equal(t, want, got)

	decisions := runtime.Decisions(events)
	var router, critics []runtime.AppliedDecision
	for _, d := range decisions {
		require.NoError(t, d.Decision.Validate())
		switch {
		case d.Source == "router" && d.Decision.Type == backend.DecisionTool:
			router = append(router, d)
		case d.Source == "critic":
			critics = append(critics, d)
		}
	}
	require.Len(t, router, 3)
	require.Len(t, critics, 3)
	for i, d := range router {
		var p struct {
			Step string `json:"step"`
			Tool string `json:"tool"`
		}
		require.NoError(t, json.Unmarshal(d.Decision.Payload, &p))
		require.Equal(t, []string{"s0", "s1", "s2"}[i], p.Step)
		require.Equal(t, "file_read", p.Tool)
		require.Contains(t, d.Decision.Reason, p.Step)
		require.Equal(t, runtime.EvStepStarted, eventAt(events, d.Seq).Type)
	}
	st, _, err := lb.rt.Load(lb.ctx, runID)
	require.NoError(t, err)
	for _, d := range critics {
		require.Equal(t, backend.DecisionNoop, d.Decision.Type)
		e := eventAt(events, d.Seq)
		require.Equal(t, runtime.EvStepFinished, e.Type)
		var r struct {
			Step     string `json:"step"`
			Critique struct {
				Score       float64 `json:"score"`
				Explanation string  `json:"explanation"`
				ModelError  string  `json:"modelError"`
			} `json:"critique"`
			CheckpointID string `json:"checkpointId"`
		}
		require.NoError(t, json.Unmarshal(e.Payload, &r))
		require.Equal(t, r.Critique.Score, d.Decision.Confidence)
		// The fallback's note is not recorded: its model error gives it back.
		require.Equal(t, r.Critique.Explanation+critic.Note(r.Critique.ModelError), d.Decision.Reason)
		require.Equal(t, st.Steps[r.Step].Critique.Explanation, d.Decision.Reason)
		require.Equal(t, r.Step, st.Steps[r.Step].Critique.Step)
		var payload struct {
			Score      float64 `json:"score"`
			Source     string  `json:"source"`
			ModelError string  `json:"model_error"`
		}
		require.NoError(t, json.Unmarshal(d.Decision.Payload, &payload))
		require.Equal(t, "heuristic", payload.Source)
		require.NotEmpty(t, payload.ModelError, "why the critic model was not used is kept")

		// The result ends a checkpoint: its record covers the run up to it,
		// and the state there has the step done and scored.
		cp, err := lb.store.GetCheckpoint(lb.ctx, r.CheckpointID)
		require.NoError(t, err)
		require.Equal(t, e.Seq, cp.LedgerSeq)
		at, err := lb.rt.StateAt(lb.ctx, cp.ID)
		require.NoError(t, err)
		require.Equal(t, runtime.StepDone, at.Steps[r.Step].State)
		require.Equal(t, d.Decision.Reason, at.Steps[r.Step].Critique.Explanation)
		require.Empty(t, at.Steps[r.Step].Result.CheckpointID, "the record keeps the result, not the checkpoint")
	}
	for _, e := range events {
		require.NotContains(t, string(e.Payload), "The critic model was not used", "%s", e.Type)
	}
	require.EqualValues(t, len(decisions), st.Ticks, "one tick a decision")
	last := events[len(events)-1]
	require.EqualValues(t, st.Ticks, last.WorldLocalTime, "the final checkpoint is at the run's clock")
}

// Runs recorded before a step carried its decisions (a decision.applied
// event before each start and before each critique) fold to the same state,
// clock included, and give the same decisions.
func TestDecisionsOfOldRunsStillRead(t *testing.T) {
	t.Parallel()
	ev := func(typ, payload string) backend.Event {
		return backend.Event{Type: typ, Payload: json.RawMessage(payload)}
	}
	graph := `{"graph":{"nodes":[{"id":"a","kind":"tool","tool":"file_read","args":{}}]}}`
	routerDec := `{"type":"tool","payload":{"step":"a","tool":"file_read","network":false},"requires_permission":false,"confidence":1,"reason":"Step \"a\" is ready, so file_read runs it."}`
	critique := `{"score":0.6,"explanation":"The step succeeded but produced no output.","source":"heuristic","model_error":"no critic model is available"}`
	criticDec := `{"type":"noop","payload":` + critique + `,"requires_permission":false,"confidence":0.6,"reason":"The step succeeded but produced no output."}`
	head := []backend.Event{
		ev(runtime.EvTaskReceived, `{"task":"t"}`),
		ev(runtime.EvDecision, `{"source":"router","decision":{"type":"plan","payload":{},"requires_permission":false,"confidence":1,"reason":"plan it"}}`),
		ev(runtime.EvPlanAccepted, graph),
	}
	tail := []backend.Event{ev(runtime.EvCompleted, `{"reason":"done"}`)}
	old := append(append([]backend.Event{}, head...),
		ev(runtime.EvDecision, `{"source":"router","decision":`+routerDec+`}`),
		ev(runtime.EvStepStarted, `{"step":"a","attempt":1,"tool":"file_read","args":{},"sandboxed":true,"network":false}`),
		ev(runtime.EvStepFinished, `{"step":"a","attempt":1,"ok":true}`),
		ev(runtime.EvDecision, `{"source":"critic","decision":`+criticDec+`}`),
		ev(runtime.EvCritique, `{"step":"a","score":0.6,"explanation":"The step succeeded but produced no output.","source":"heuristic"}`),
	)
	old = append(old, tail...)
	now := append(append([]backend.Event{}, head...),
		ev(runtime.EvStepStarted, `{"step":"a","attempt":1,"tool":"file_read","args":{},"sandboxed":true,"network":false,"decision":`+routerDec+`}`),
		ev(runtime.EvStepFinished, `{"step":"a","attempt":1,"ok":true}`),
		ev(runtime.EvCritique, `{"step":"a","score":0.6,"explanation":"The step succeeded but produced no output.","source":"heuristic","modelError":"no critic model is available","decision":"noop"}`),
	)
	now = append(now, tail...)
	// Today's: the critique in the result, its note given by its model error.
	note := critic.Note("no critic model is available")
	folded := append(append([]backend.Event{}, head...),
		ev(runtime.EvStepStarted, `{"step":"a","attempt":1,"tool":"file_read","args":{},"sandboxed":true,"network":false,"decision":`+routerDec+`}`),
		ev(runtime.EvStepFinished, `{"step":"a","attempt":1,"ok":true,"critique":{"score":0.6,"explanation":"The step succeeded but produced no output.","source":"heuristic","modelError":"no critic model is available","decision":"noop"},"checkpointId":"ckp_01a24430393c733a81c252ecb9d8a445"}`),
	)
	folded = append(folded, tail...)
	fold := func(events []backend.Event) (*runtime.RunState, []runtime.AppliedDecision) {
		for i := range events {
			events[i].Seq = int64(i + 1)
		}
		st := runtime.NewRunState("run_x", "wld_x")
		for _, e := range events {
			st.Apply(e)
		}
		ds := runtime.Decisions(events)
		for i := range ds {
			ds[i].Seq = 0 // the two formats number their events differently
		}
		return st, ds
	}
	oldState, oldDecisions := fold(old)
	newState, newDecisions := fold(now)
	require.EqualValues(t, 3, oldState.Ticks)
	require.Equal(t, oldState.Ticks, newState.Ticks)
	require.Equal(t, oldState.Steps["a"].State, newState.Steps["a"].State)
	require.Equal(t, oldState.Steps["a"].Critique.Explanation, newState.Steps["a"].Critique.Explanation)
	require.Len(t, oldDecisions, 3)
	for i := range oldDecisions {
		require.Equal(t, oldDecisions[i].Source, newDecisions[i].Source)
		require.Equal(t, oldDecisions[i].Decision.Type, newDecisions[i].Decision.Type)
		require.JSONEq(t, string(oldDecisions[i].Decision.Payload), string(newDecisions[i].Decision.Payload))
		require.Equal(t, oldDecisions[i].Decision.Confidence, newDecisions[i].Decision.Confidence)
		require.Equal(t, oldDecisions[i].Decision.Reason, newDecisions[i].Decision.Reason)
	}
	foldedState, foldedDecisions := fold(folded)
	require.Equal(t, newState.Ticks, foldedState.Ticks)
	require.Equal(t, newState.Steps["a"].State, foldedState.Steps["a"].State)
	require.Equal(t, "a", foldedState.Steps["a"].Critique.Step)
	require.Equal(t, newState.Steps["a"].Critique.Explanation+note, foldedState.Steps["a"].Critique.Explanation)
	require.Empty(t, foldedState.Steps["a"].Result.CheckpointID)
	require.Nil(t, foldedState.Steps["a"].Result.Critique)
	require.Len(t, foldedDecisions, 3)
	for i := range newDecisions {
		require.Equal(t, newDecisions[i].Source, foldedDecisions[i].Source)
		require.Equal(t, newDecisions[i].Decision.Type, foldedDecisions[i].Decision.Type)
		require.Equal(t, newDecisions[i].Decision.Confidence, foldedDecisions[i].Decision.Confidence)
	}
	require.Equal(t, newDecisions[2].Decision.Reason+note, foldedDecisions[2].Decision.Reason)
}

func eventAt(events []backend.Event, seq int64) backend.Event {
	for _, e := range events {
		if e.Seq == seq {
			return e
		}
	}
	return backend.Event{}
}
