package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
)

func withGraces(start, sync time.Duration) option {
	return func(d *runtime.Deps) { d.StartGrace, d.SyncGrace = start, sync }
}

// In a chain of steps that change something, a step's result commits
// without a sync of its own: the next step's start, synced before that
// step runs, makes it durable too. One sync a step instead of two, the
// same commits, and nothing left unsynced when the run ends.
func TestAnEffectfulResultRidesOnTheNextStartsSync(t *testing.T) {
	t.Parallel()
	commits := func(sync time.Duration) (synced, deferred int64) {
		lb := newLoopBenchOf(t, trivialTool{effect: true}, withGraces(0, sync))
		s0, d0 := lb.db.Commits()
		lb.run(t, trivialPlan(5, true), 1)
		require.Zero(t, lb.db.Unsynced(), "the run's end left a result unsynced")
		s, d := lb.db.Commits()
		return s - s0, d - d0
	}
	syncedAlone, deferredAlone := commits(-1) // every result syncs its own commit
	synced, deferred := commits(time.Hour)    // only a synced commit covers a result
	require.Equal(t, deferredAlone+5, deferred, "each of the five results deferred its sync")
	require.Equal(t, syncedAlone-5, synced, "and no sync was added for them")
}

// gatedFile poses as file_read, so the router runs it without asking: a
// call with "read" only reads (backend.Repeatable), one with "wait" waits
// for the test, and any other changes something.
type gatedFile struct{ gate *gateTool }

func (gatedFile) Name() string                { return "file_read" }
func (gatedFile) Description() string         { return "waits, reads or changes" }
func (gatedFile) ArgsSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (gatedFile) Repeatable(args json.RawMessage) bool {
	return strings.Contains(string(args), `"read"`)
}

func (g gatedFile) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	if strings.Contains(string(call.Args), `"wait"`) {
		return g.gate.Run(ctx, call)
	}
	return backend.ToolResult{Duration: time.Microsecond}, nil
}

// A result that no synced commit follows soon (the next step only reads,
// and its start waits for its own result) is synced alone within the
// grace, while the next step still runs. With a grace longer than the
// step, it waits unsynced, and the run's end syncs it.
func TestAnEffectfulResultIsSyncedAloneAfterItsGrace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		grace  time.Duration
		synced bool // while the read runs
	}{{30 * time.Millisecond, true}, {time.Hour, false}} {
		gate := newGate()
		lb := newLoopBenchOf(t, gatedFile{gate}, withGraces(time.Hour, c.grace))
		g := &backend.TaskGraph{Nodes: []backend.TaskNode{
			{ID: "change", Kind: backend.KindToolStep, Tool: "file_read", Args: json.RawMessage(`{}`)},
			{ID: "read", Kind: backend.KindToolStep, Tool: "file_read", Args: json.RawMessage(`{"read":true,"wait":true}`), DependsOn: []string{"change"}},
		}}
		done := make(chan string, 1)
		go func() { done <- lb.run(t, g, 1) }()
		require.Equal(t, "read", <-gate.entered)
		if c.synced {
			require.Eventually(t, func() bool { return lb.db.Unsynced() == 0 }, 10*time.Second, 5*time.Millisecond,
				"the change's result is synced while the read runs")
		} else {
			time.Sleep(100 * time.Millisecond)
			require.EqualValues(t, 1, lb.db.Unsynced(), "the change's result waits for a synced commit")
		}
		close(gate.open)
		runID := <-done
		require.Zero(t, lb.db.Unsynced(), "run %s ended with a result unsynced", runID)
	}
}
