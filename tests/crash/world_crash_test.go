package crash_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// The world-run crash test kills a process at random moments while it runs
// a Branching Grid in batches (world run saves up to 100 steps a commit and
// computes the next batch while one commits), and checks after every life
// that every step it acknowledged (reported through Progress, as `world
// run` prints it) is recorded, and that the run re-executes exactly.

const worldChildEnv = "DUCKLM_CRASH_WORLD_DIR"

// worldRunCrashChild is the child of TestKilledWorldRunLosesNoAcknowledgedStep:
// it runs the data directory's grid (creating it in the first life) until
// killed, printing "ack T" once the world's time T is durable.
func worldRunCrashChild(dir string) {
	ctx := context.Background()
	svc, release := openChild(dir)
	defer release()
	runs, err := svc.Worlds.Runs(ctx, "")
	if err != nil {
		childFail("runs", err)
	}
	var run backend.WorldRun
	if len(runs) > 0 {
		run = runs[0]
	} else if _, run, err = svc.Worlds.Create(ctx, world.NewWorld{Name: "grid", Program: starlark.BranchingGrid, Seed: 11}); err != nil {
		childFail("create", err)
	}
	fmt.Println("ready", run.ID)
	for {
		base := run.WorldLocalTime
		out, err := svc.Worlds.RunSteps(ctx, run.ID, world.RunOptions{Steps: 1000, Action: json.RawMessage(`"N"`), CheckpointEvery: 100,
			Progress: func(saved, _ int) { fmt.Printf("ack %d\n", base+int64(saved)) }})
		if err != nil {
			childFail("run", err)
		}
		run = out.Run
	}
}

func TestKilledWorldRunLosesNoAcknowledgedStep(t *testing.T) {
	dir := t.TempDir()
	const trials = 10
	var runID string
	var acked int64
	for trial := range trials {
		c := startChildOf(t, worldChildEnv, dir)
		ready := c.await(t, 20*time.Second, "ready")
		runID = strings.TrimPrefix(ready, "ready ")
		// Read acknowledgements until a random moment, kill, and keep the
		// ones printed before the kill landed (a half-printed last line was
		// never one).
		kill := time.After(time.Duration(50+rand.IntN(900)) * time.Millisecond)
		var lines []string
	reading:
		for {
			select {
			case line, ok := <-c.lines:
				require.True(t, ok, "trial %d: the child exited: %s", trial, c.stderr.String())
				lines = append(lines, line)
			case <-kill:
				require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
				break reading
			}
		}
		for line := range c.lines {
			lines = append(lines, line)
		}
		require.Error(t, c.cmd.Wait(), "the child was killed")
		for i, line := range lines {
			v, ok := strings.CutPrefix(line, "ack ")
			n, err := strconv.ParseInt(v, 10, 64)
			require.True(t, (ok && err == nil) || i == len(lines)-1, "trial %d: malformed line %q", trial, line)
			if ok && err == nil {
				require.GreaterOrEqual(t, n, acked, "trial %d: acknowledgements only move forward", trial)
				acked = n
			}
		}
		checkWorldRun(t, dir, runID, acked, fmt.Sprintf("trial %d", trial))
	}
	require.Positive(t, acked)
}

// checkWorldRun opens the data directory after a kill: the run has every
// acknowledged step, and re-executes exactly to its record.
func checkWorldRun(t *testing.T, dir, runID string, acked int64, trial string) {
	t.Helper()
	ctx := context.Background()
	lock, err := service.AcquireLock(dir)
	require.NoError(t, err, trial)
	defer lock.Release()
	svc, err := service.OpenWith(ctx, dir, service.Options{OllamaHost: noOllama})
	require.NoError(t, err, trial)
	defer svc.Close()
	steps, err := svc.Ledger.Query(ctx, backend.EventQuery{Stream: runID, Types: []string{world.EventStep}})
	require.NoError(t, err, trial)
	require.GreaterOrEqual(t, int64(len(steps)), acked, "%s: every acknowledged step is recorded", trial)
	run, err := svc.Worlds.Run(ctx, runID)
	require.NoError(t, err, trial)
	require.EqualValues(t, len(steps), run.WorldLocalTime, "%s: the run's row agrees with its events", trial)
	rep, err := svc.Worlds.Verify(ctx, runID)
	require.NoError(t, err, trial)
	require.True(t, rep.OK, "%s: the run re-executes to its record: %+v", trial, rep.Divergence)
}
