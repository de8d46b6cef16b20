package crash_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// The deliberation crash test kills a ducklm process at random moments
// while it deliberates on a Branching Grid, and checks after every life that
// what was recorded is whole branches only: every branch world has its run,
// every step its divergence asked for (up to done or a failure), its end
// checkpoint last, and re-executes exactly; every recorded round names
// branches that exist.

const deliberationChildEnv = "DUCKLM_CRASH_DELIBERATION_DIR"

// deliberationCrashChild is the child of TestKilledDeliberation…: it
// creates a grid and deliberates on it, round after round, until killed.
func deliberationCrashChild(dir string) {
	ctx := context.Background()
	svc, release := openChild(dir)
	defer release()
	_, run, err := svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: rand.Int64N(1000)})
	if err != nil {
		childFail("create", err)
	}
	fmt.Println("ready")
	_, err = svc.Deliberation.Deliberate(ctx, deliberation.Options{RunID: run.ID, Strategy: deliberation.MCTS,
		Depth: 20, Budget: 60, Seeds: 2, UntilDone: true, Apply: true,
		Progress: func(deliberation.Progress) { fmt.Println("batch") }})
	if err != nil {
		childFail("deliberate", err)
	}
	fmt.Println("done")
	time.Sleep(time.Hour)
}

func TestKilledDeliberationLeavesWholeBranches(t *testing.T) {
	dir := t.TempDir()
	const trials = 8
	for trial := range trials {
		c := startChildOf(t, deliberationChildEnv, dir)
		c.await(t, 20*time.Second, "ready")
		c.await(t, 20*time.Second, "batch")
		time.Sleep(time.Duration(50+rand.IntN(1500)) * time.Millisecond)
		c.kill(t)
		checkBranchesWhole(t, dir, fmt.Sprintf("trial %d", trial))
	}
}

// checkBranchesWhole opens the data directory after a kill and checks every
// branch and round in it.
func checkBranchesWhole(t *testing.T, dir, when string) {
	t.Helper()
	ctx := context.Background()
	lock, err := service.AcquireLock(dir)
	require.NoError(t, err, when)
	defer lock.Release()
	svc, err := service.OpenWith(ctx, dir, service.Options{OllamaHost: noOllama})
	require.NoError(t, err, when)
	defer svc.Close()
	var integrity string
	require.NoError(t, svc.DB.SQL.QueryRow("PRAGMA integrity_check").Scan(&integrity))
	require.Equal(t, "ok", integrity, when)
	requireGapFree(t, svc, when)

	runs, err := svc.Worlds.Runs(ctx, "")
	require.NoError(t, err)
	branches, verified := 0, 0
	for _, run := range runs {
		if run.DeliberationIndex == 0 {
			continue
		}
		branches++
		f, err := svc.Worlds.ForkOf(ctx, run.WorldID)
		require.NoError(t, err, when)
		require.Equal(t, backend.DivergeActionOverride, f.Divergence)
		var delta struct {
			Actions []json.RawMessage `json:"actions"`
		}
		require.NoError(t, json.Unmarshal(f.Delta, &delta))
		events, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: run.ID})
		require.NoError(t, err)
		require.NotEmpty(t, events, "%s: branch %s has its events", when, run.WorldID)
		require.Equal(t, world.EventForked, events[0].Type)
		last := events[len(events)-1]
		require.Equal(t, world.EventCheckpoint, last.Type, "%s: branch %s ends with its checkpoint", when, run.WorldID)
		steps, ended := 0, false
		for _, e := range events {
			require.Equal(t, run.DeliberationIndex, e.DeliberationIndex)
			require.Equal(t, run.ParentTime, e.ParentTime)
			switch e.Type {
			case world.EventStep:
				steps++
			case world.EventCompleted, world.EventFailed:
				ended = true
			}
		}
		require.True(t, steps == len(delta.Actions) || ended, "%s: branch %s took %d of %d steps", when, run.WorldID, steps, len(delta.Actions))
		cp, err := svc.Worlds.GetCheckpoint(ctx, run.LatestCheckpointID)
		require.NoError(t, err, when)
		require.Equal(t, last.Seq, cp.LedgerSeq)
		if rand.IntN(10) == 0 { // re-executing all would take long; a tenth each time
			rep, err := svc.Worlds.Verify(ctx, run.ID)
			require.NoError(t, err, when)
			require.True(t, rep.OK, "%s: branch %s: %+v", when, run.WorldID, rep.Divergence)
			verified++
		}
	}
	rounds := 0
	for _, run := range runs {
		if run.DeliberationIndex != 0 {
			continue
		}
		rs, err := svc.Deliberation.Rounds(ctx, run.ID)
		require.NoError(t, err)
		for _, r := range rs {
			rounds++
			for _, c := range r.Candidates {
				for _, w := range c.Branches {
					_, err := svc.Worlds.Spec(ctx, w)
					require.NoError(t, err, "%s: round %d names branch %s", when, r.DeliberationIndex, w)
				}
			}
		}
	}
	t.Logf("%s: %d branches whole (%d re-executed), %d rounds", when, branches, verified, rounds)
}
