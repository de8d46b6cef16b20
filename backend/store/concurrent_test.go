package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/store"
	"ducklm/backend/store/postgres"
)

// appendPlan is what one writer appends: batches of caller-chosen event ids
// on shared streams. Some batches are in two writers' plans (the same facts
// recorded by two processes); each writer sends every batch twice (a retry).
type appendPlan struct {
	URL     string        `json:"url"`
	Batches []appendBatch `json:"batches"`
}

type appendBatch struct {
	Stream string   `json:"stream"`
	IDs    []string `json:"ids"`
}

// makePlans spreads batches of 1–3 events over streams for writers
// writers, with every fifth batch shared by two writers.
func makePlans(url string, writers, batches int, streams []string) ([]appendPlan, map[string]bool) {
	plans := make([]appendPlan, writers)
	ids := map[string]bool{}
	for w := range plans {
		plans[w].URL = url
	}
	for i := 0; i < writers*batches; i++ {
		b := appendBatch{Stream: streams[i%len(streams)]}
		for k := 0; k <= i%3; k++ {
			id := backend.NewID(backend.KindEvent)
			b.IDs = append(b.IDs, id)
			ids[id] = true
		}
		w := i % writers
		plans[w].Batches = append(plans[w].Batches, b)
		if i%5 == 0 {
			other := (w + 1) % writers
			plans[other].Batches = append(plans[other].Batches, b)
		}
	}
	return plans, ids
}

// runPlan appends a plan's batches, each twice.
func runPlan(ctx context.Context, ledger *store.Ledger, p appendPlan) error {
	for _, b := range p.Batches {
		events := make([]backend.Event, len(b.IDs))
		for i, id := range b.IDs {
			events[i] = backend.Event{ID: id, Type: "x", Payload: json.RawMessage(fmt.Sprintf(`{"id":%q}`, id)), Reality: backend.ExternalReal}
		}
		for try := 0; try < 2; try++ {
			if _, err := ledger.Append(ctx, b.Stream, backend.ExpectAny, events...); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestAppendWriterProcess is the writer process of
// TestAppendsFromManyProcessesStayGapFree; it does nothing in a normal run.
func TestAppendWriterProcess(t *testing.T) {
	planFile := os.Getenv("DUCKLM_APPEND_PLAN")
	if planFile == "" {
		return
	}
	data, err := os.ReadFile(planFile)
	require.NoError(t, err)
	var p appendPlan
	require.NoError(t, json.Unmarshal(data, &p))
	db, err := postgres.Open(context.Background(), p.URL)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, runPlan(context.Background(), store.NewLedger(db), p))
}

// Several processes append to the same streams of one PostgreSQL ledger at
// once, each retrying every batch, some recording the same facts: every
// fact is stored once, every stream's seqs run 1…head without a gap, each
// batch is contiguous, and positions run 1…n in commit order.
func TestAppendsFromManyProcessesStayGapFree(t *testing.T) {
	t.Parallel()
	f := setupPostgres(t)
	streams := []string{backend.NewID(backend.KindRun), backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)}
	const writers, batches = 4, 40
	plans, ids := makePlans(f.url, writers, batches, streams)
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, writers)
	outs := make([][]byte, writers)
	for w, p := range plans {
		file := filepath.Join(dir, fmt.Sprintf("plan-%d.json", w))
		data, err := json.Marshal(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, data, 0o600))
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendWriterProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "DUCKLM_APPEND_PLAN="+file)
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[w], errs[w] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for w := range plans {
		require.NoError(t, errs[w], "writer %d:\n%s", w, outs[w])
	}
	checkLedger(t, f, streams, ids, plans)
}

// The same within one process, on separate connection pools (so nothing in
// the process serialises them: only the database does).
func TestAppendsFromManyPoolsStayGapFree(t *testing.T) {
	t.Parallel()
	f := setupPostgres(t)
	streams := []string{backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)}
	const writers, batches = 6, 25
	plans, ids := makePlans(f.url, writers, batches, streams)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w, p := range plans {
		db, err := postgres.Open(f.ctx, f.url)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(f.ctx, 5*time.Minute)
			defer cancel()
			errs[w] = runPlan(ctx, store.NewLedger(db), p)
		}()
	}
	wg.Wait()
	for w := range plans {
		require.NoError(t, errs[w], "writer %d", w)
	}
	checkLedger(t, f, streams, ids, plans)
}

func checkLedger(t *testing.T, f fixture, streams []string, ids map[string]bool, plans []appendPlan) {
	t.Helper()
	all, err := f.ledger.Since(f.ctx, 0, 1_000_000)
	require.NoError(t, err)
	require.Len(t, all, len(ids), "every fact is stored once")
	byID := map[string]backend.Event{}
	for i, e := range all {
		require.EqualValues(t, i+1, e.Pos, "positions run 1…n without a gap")
		require.True(t, ids[e.ID], "event %s was never sent", e.ID)
		byID[e.ID] = e
	}
	for _, s := range streams {
		events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: s})
		require.NoError(t, err)
		head, err := f.ledger.Head(f.ctx, s)
		require.NoError(t, err)
		require.EqualValues(t, len(events), head)
		for i, e := range events {
			require.EqualValues(t, i+1, e.Seq, "stream %s has no gap", s)
		}
	}
	for _, p := range plans {
		for _, b := range p.Batches {
			first := byID[b.IDs[0]].Seq
			for k, id := range b.IDs {
				require.Equal(t, first+int64(k), byID[id].Seq, "a batch is one append: its seqs are contiguous")
			}
		}
	}
}
