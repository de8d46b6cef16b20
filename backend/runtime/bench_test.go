package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/critic"
	"ducklm/backend/planner"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
	"ducklm/backend/tool"
)

// The loop benchmark measures what the runtime adds to a step that does
// nothing: decisions, durable events, the critic (heuristic) and a
// checkpoint per step (a step that only reads; chain-effectful: one that
// changes something, whose start is synced too), on a real temp-file database with fsync on every
// commit and a real blob store. A raw ledger single-append twin on the same
// database in the same run gives the cost of one durable commit, so
// step-net/append says how many commits' worth of time a step takes.
//
//	ms/step           wall time per step, the run's fixed part included
//	ms/step-net       the same without the fixed part (submit, plan, complete)
//	events/step       ledger events per step
//	commits/step(-net) write transactions per step
//	ms/append         one durable single-event ledger append
//	ms/raw-append     one durable single-row INSERT through database/sql, on
//	                  the same disk with the same settings (the raw twin)
//	step-net/raw      the acceptance ratio: a step against the raw twin
//
// Run it with -v to see where a run's time goes and what each commit holds.

// benchSteps is the plan size of one benchmark run.
const benchSteps = 50

// trivialTool does nothing, successfully, and prints nothing. It is named
// file_read so the risk policy rates it low and auto_sandboxed never asks,
// and like file_read it only reads (backend.Repeatable): its step needs one
// durable sync, its result's. With effect set it says it changes
// something, and its step needs two: its start (the intent) and its result.
type trivialTool struct{ effect bool }

func (trivialTool) Name() string                      { return "file_read" }
func (trivialTool) Description() string               { return "does nothing" }
func (trivialTool) ArgsSchema() json.RawMessage       { return json.RawMessage(`{"type":"object"}`) }
func (t trivialTool) Repeatable(json.RawMessage) bool { return !t.effect }
func (trivialTool) Run(context.Context, backend.ToolCall) (backend.ToolResult, error) {
	return backend.ToolResult{Duration: time.Microsecond}, nil
}

// countingStore counts the run store's write transactions and what each
// carried.
type countingStore struct {
	runtime.RunStore
	mu      sync.Mutex
	commits int
	events  int
	spent   time.Duration            // inside SaveRun
	shapes  map[string]int           // "type+type+..." → commits of that shape
	shapeT  map[string]time.Duration // … and the time they took
	// off: commits are counted in offCommits only (countingStore.paused).
	off        bool
	offCommits int
}

func (s *countingStore) SaveRun(ctx context.Context, r backend.WorldRun, expect int64, events []backend.Event, cp *backend.Checkpoint, also ...backend.Prepared) ([]backend.Event, error) {
	t0 := time.Now()
	stored, err := s.RunStore.SaveRun(ctx, r, expect, events, cp, also...)
	spent := time.Since(t0)
	if err == nil {
		s.mu.Lock()
		if s.off {
			s.offCommits++
			s.mu.Unlock()
			return stored, err
		}
		s.spent += spent
		s.commits++
		s.events += len(events)
		shape := ""
		for i, e := range events {
			if i > 0 {
				shape += "+"
			}
			shape += e.Type
		}
		s.shapes[shape]++
		s.shapeT[shape] += spent
		s.mu.Unlock()
	}
	return stored, err
}

func (s *countingStore) CreateSpecAndRunWith(ctx context.Context, spec backend.WorldSpec, r backend.WorldRun, events []backend.Event) ([]backend.Event, error) {
	stored, err := s.RunStore.CreateSpecAndRunWith(ctx, spec, r, events)
	if err == nil {
		s.mu.Lock()
		if s.off {
			s.offCommits++
		} else {
			s.commits++
			s.events += len(events)
		}
		s.mu.Unlock()
	}
	return stored, err
}

// paused sets the counts aside (what follows is not counted) and returns
// the commits so far; resume counts again and returns the commits made
// since paused.
func (s *countingStore) paused() (commits int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.off = true
	return s.offCommits
}

func (s *countingStore) resume(before int) (commits int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.off = false
	return s.offCommits - before
}

func (s *countingStore) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits, s.events, s.spent, s.shapes, s.shapeT = 0, 0, 0, map[string]int{}, map[string]time.Duration{}
}

// timedBlobs measures the time spent storing and reading blobs (each Put
// fsyncs the file and, for a new blob, its folder).
type timedBlobs struct {
	backend.BlobStore
	mu         sync.Mutex
	puts, gets int
	spent      time.Duration
}

func (t *timedBlobs) Put(ctx context.Context, data []byte, mediaType string) (backend.BlobRef, error) {
	t0 := time.Now()
	ref, err := t.BlobStore.Put(ctx, data, mediaType)
	t.add(&t.puts, time.Since(t0))
	return ref, err
}

func (t *timedBlobs) Get(ctx context.Context, ref backend.BlobRef) ([]byte, error) {
	t0 := time.Now()
	data, err := t.BlobStore.Get(ctx, ref)
	t.add(&t.gets, time.Since(t0))
	return data, err
}

func (t *timedBlobs) add(n *int, d time.Duration) {
	t.mu.Lock()
	*n++
	t.spent += d
	t.mu.Unlock()
}

func (t *timedBlobs) reset() {
	t.mu.Lock()
	t.puts, t.gets, t.spent = 0, 0, 0
	t.mu.Unlock()
}

type loopBench struct {
	ctx    context.Context
	dir    string
	db     *store.DB
	ledger *store.Ledger
	store  *countingStore
	blobs  *timedBlobs
	rt     *runtime.Controller
}

func newLoopBench(b testing.TB) *loopBench { return newLoopBenchOf(b, trivialTool{}) }

// newLoopBenchOf is newLoopBench whose steps call t (named file_read, so
// that the router lets it run without asking), with the options' Deps.
func newLoopBenchOf(b testing.TB, t backend.Tool, opts ...option) *loopBench {
	b.Helper()
	dir := b.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "ducklm.db"))
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	require.NoError(b, err)
	ledger := store.NewLedger(db)
	store := &countingStore{RunStore: store.NewWorlds(db, ledger), shapes: map[string]int{}, shapeT: map[string]time.Duration{}}
	timed := &timedBlobs{BlobStore: blobs}
	deps := runtime.Deps{
		Store: store, Events: ledger, Blobs: timed, Tools: tool.NewRegistry(t),
		Offline: planner.Offline{}, Critic: critic.WithFallback{},
		// The benchmark measures the loop, not bubblewrap: it plays a
		// sandboxed machine so a low-risk step never asks.
		Sandboxed: func() bool { return true }, WorkRoot: filepath.Join(dir, "workspaces"),
	}
	for _, o := range opts {
		o(&deps)
	}
	rt := runtime.New(deps)
	b.Cleanup(rt.Close)
	return &loopBench{ctx: context.Background(), dir: dir, db: db, ledger: ledger, store: store, blobs: timed, rt: rt}
}

func trivialPlan(n int, chain bool) *backend.TaskGraph {
	g := &backend.TaskGraph{}
	for i := 0; i < n; i++ {
		node := backend.TaskNode{ID: fmt.Sprintf("s%d", i), Kind: backend.KindToolStep, Tool: "file_read", Args: json.RawMessage(`{}`)}
		if chain && i > 0 {
			node.DependsOn = []string{fmt.Sprintf("s%d", i-1)}
		}
		g.Nodes = append(g.Nodes, node)
	}
	return g
}

func (lb *loopBench) run(b testing.TB, g *backend.TaskGraph, concurrency int) string {
	run, err := lb.rt.Submit(lb.ctx, runtime.TaskRequest{Task: "bench", Plan: g, ApprovalMode: runtime.AutoSandboxed,
		MaxSteps: len(g.Nodes), MaxPlanSteps: len(g.Nodes), Concurrency: concurrency})
	require.NoError(b, err)
	for {
		require.NoError(b, lb.rt.Wait(lb.ctx, run.ID))
		st, _, err := lb.rt.Load(lb.ctx, run.ID)
		require.NoError(b, err)
		if st.Status.Terminal() {
			require.Equal(b, backend.RunCompleted, st.Status, st.StatusReason)
			return run.ID
		}
		time.Sleep(time.Millisecond) // the driver has not been registered yet
	}
}

// TestTrivialStepsEachRunOnce checks what the benchmark measures: every
// step of every run ran exactly once before the run completed, with the
// events and commits the benchmark reports.
func TestTrivialStepsEachRunOnce(t *testing.T) {
	t.Parallel()
	lb := newLoopBench(t)
	for i := 0; i < 2; i++ {
		for _, chain := range []bool{true, false} {
			runID := lb.run(t, trivialPlan(8, chain), 1+i)
			st, _, err := lb.rt.Load(lb.ctx, runID)
			require.NoError(t, err)
			events, err := lb.ledger.Query(lb.ctx, backend.EventQuery{Stream: runID})
			require.NoError(t, err)
			for _, id := range st.Order() {
				require.Equal(t, runtime.StepDone, st.Steps[id].State, "run %s completed before step %s was done", runID, id)
				require.Equal(t, 1, st.Steps[id].Attempts)
			}
			require.Equal(t, 8, count(events, runtime.EvStepStarted))
			require.Equal(t, runtime.EvCompleted, events[len(events)-2].Type, "nothing happens after completion but its checkpoint")
			for j, e := range events {
				require.EqualValues(t, j+1, e.Seq)
			}
		}
	}
}

func BenchmarkLoopTrivialStep(b *testing.B) {
	for _, c := range []struct {
		name        string
		chain       bool
		concurrency int
		effect      bool
	}{
		{"chain", true, 1, false},
		// A step that changes something needs its intent synced before
		// the effect: two commits, of which one syncs (its result rides on
		// the next step's start), so one raw append is its floor too.
		{"chain-effectful", true, 1, true},
		{"independent-c1", false, 1, false},
		{"independent-c2", false, 2, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			lb := newLoopBenchOf(b, trivialTool{effect: c.effect})
			g := trivialPlan(benchSteps, c.chain)
			lb.run(b, trivialPlan(2, true), 1) // warm up: first blobs, prepared statements
			raw := openRawTwin(b, lb.dir)
			stream := backend.NewID(backend.KindRun)
			ev := backend.Event{Type: "step.finished", Payload: []byte(`{"step":"s1","ok":true}`), Reality: backend.ExternalReal}
			// Each round runs the plan, a one-step run (the fixed part of a
			// run: submit, plan, complete, taken out of the net figures),
			// the ledger's single durable appends and the raw twin's, in
			// turn: fsync latency drifts on a shared machine, and every
			// figure is then measured across the same stretch of it.
			const appends = 25 // of each twin, a round
			var loop, fixed, inLedger, inRaw time.Duration
			var fixedCommits int
			lb.store.reset()
			lb.blobs.reset()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				lb.run(b, g, c.concurrency)
				loop += time.Since(t0)
				b.StopTimer()
				before := lb.store.paused()
				t0 = time.Now()
				lb.run(b, trivialPlan(1, true), 1)
				fixed += time.Since(t0)
				fixedCommits += lb.store.resume(before)
				t0 = time.Now()
				for range appends {
					_, err := lb.ledger.Append(lb.ctx, stream, backend.ExpectAny, ev)
					require.NoError(b, err)
				}
				inLedger += time.Since(t0)
				inRaw += raw.appends(b, appends)
				b.StartTimer()
			}
			b.StopTimer()
			commits := float64(lb.store.commits) / float64(b.N)
			events := float64(lb.store.events) / float64(b.N)
			shapes, inStore := lb.store.shapes, lb.store.spent
			puts, gets, inBlobs := lb.blobs.puts, lb.blobs.gets, lb.blobs.spent
			perAppend := inLedger / time.Duration(b.N*appends)
			perRaw := inRaw / time.Duration(b.N*appends)
			fixed /= time.Duration(b.N)

			steps := float64(b.N * benchSteps)
			perStep := float64(loop) / steps
			perStepOnly := (float64(loop)/float64(b.N) - float64(fixed)) / float64(benchSteps-1)
			ms := func(ns float64) float64 { return ns / 1e6 }
			b.ReportMetric(ms(perStep), "ms/step")
			b.ReportMetric(ms(perStepOnly), "ms/step-net")
			b.ReportMetric(events/benchSteps, "events/step")
			b.ReportMetric(commits/benchSteps, "commits/step")
			b.ReportMetric((commits-float64(fixedCommits)/float64(b.N))/(benchSteps-1), "commits/step-net")
			b.ReportMetric(ms(float64(perAppend)), "ms/append")
			b.ReportMetric(perStepOnly/float64(perAppend), "step-net/append")
			b.ReportMetric(ms(float64(perRaw)), "ms/raw-append")
			b.ReportMetric(perStepOnly/float64(perRaw), "step-net/raw")
			if testing.Verbose() {
				runs := float64(b.N)
				b.Logf("%s: a %d-step run takes %.1f ms: %.1f ms in %.0f commits, %.1f ms in %.0f blob puts and %.0f gets, the rest reading and folding",
					c.name, benchSteps, ms(float64(loop)/runs), ms(float64(inStore)/runs), commits, ms(float64(inBlobs)/runs),
					float64(puts)/runs, float64(gets)/runs)
				b.Logf("fixed part of a run: %.2f ms, %.1f commits; commit shapes per run:", ms(float64(fixed)), float64(fixedCommits)/float64(b.N))
				for shape, n := range shapes {
					b.Logf("  %6.1f  %s  %.3f ms each", float64(n)/float64(b.N), shape, ms(float64(lb.store.shapeT[shape])/float64(n)))
				}
			}
		})
	}
}
