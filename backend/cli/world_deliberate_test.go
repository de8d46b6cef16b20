package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
	"ducklm/backend/deliberation"
	"ducklm/backend/store"
	"ducklm/backend/world"
)

func TestWorldDeliberate(t *testing.T) {
	home(t)
	_, run := grid(t, "5")
	r := ok(t, "world", "deliberate", run, "--strategy", "beam", "--width", "2", "--depth", "3", "--budget", "30")
	require.Contains(t, r.stdout, "round 1 at time 0: beam width 2, depth 3, 1 seed(s);")
	// E and S are both on shortest paths from (0,0): either may rank first.
	require.Regexp(t, `(?s)  1\. "(E|S)" .*  2\. "(E|S)" `, r.stdout)
	require.Contains(t, r.stdout, `"E" `)
	require.Contains(t, r.stdout, `"S" `)
	require.Contains(t, r.stdout, "chosen: ")
	require.Contains(t, r.stdout, "time 0, running", "without --apply the run does not move")

	r = ok(t, "world", "deliberate", run, "--strategy", "mcts", "--depth", "4", "--budget", "20", "--seeds", "2", "--rounds", "2", "--apply", "--json")
	var res deliberation.Result
	r.decode(t, &res)
	require.Len(t, res.Rounds, 2)
	require.EqualValues(t, 2, res.Rounds[0].DeliberationIndex)
	require.EqualValues(t, 3, res.Rounds[1].DeliberationIndex)
	require.EqualValues(t, 2, res.Run.WorldLocalTime)
	require.Len(t, res.Rounds[1].Seeds, 2)
	require.LessOrEqual(t, res.Rounds[1].Budget.Used, 20)

	// The branches are worlds like any other: verify replays one.
	b := res.Rounds[1].Candidates[0].Branches[0]
	show := ok(t, "world", "show", b)
	require.Contains(t, show.stdout, "deliberation index: 3")
	runID := show.field(t, "run")
	require.Contains(t, ok(t, "world", "verify", runID).stdout, "verified: ")

	// world show lists the run's rounds, oldest first.
	shown := ok(t, "world", "show", run).stdout
	require.Contains(t, shown, "  deliberations (3):\n")
	require.Regexp(t, `\n    round 1 at t=0: beam, \d+ of 30 branches, chose "(E|S)" \(score -?[\d.]+\)\n`, shown)
	require.Regexp(t, `\n    round 3 at t=1: mcts, \d+ of 20 branches, chose "[NESW]" \(score -?[\d.]+\)\n`, shown)
	var detail struct {
		Runs []struct {
			Rounds []struct {
				DeliberationIndex int64  `json:"deliberationIndex"`
				Event             string `json:"event"`
			} `json:"rounds"`
		} `json:"runs"`
	}
	ok(t, "world", "show", run, "--json").decode(t, &detail)
	require.Len(t, detail.Runs[0].Rounds, 3)
	require.EqualValues(t, 3, detail.Runs[0].Rounds[2].DeliberationIndex)
	require.NotEmpty(t, detail.Runs[0].Rounds[2].Event)
	require.Equal(t, res.Rounds[1].EventID, detail.Runs[0].Rounds[2].Event)

	// world ls lists the grid alone and counts the branches it left out;
	// --branches lists them too.
	ls := ok(t, "world", "ls")
	lines := strings.Split(strings.TrimSpace(ls.stdout), "\n")
	require.Len(t, lines, 1+1+1, "the header, the grid and the count: %s", ls.stdout)
	require.Regexp(t, `^\d+ deliberation branches are not listed \(--branches lists them\)$`, lines[2])
	var listed, all []world.Node
	ok(t, "world", "ls", "--json").decode(t, &listed)
	require.Len(t, listed, 1)
	ok(t, "world", "ls", "--branches", "--json").decode(t, &all)
	require.Equal(t, lines[2], fmt.Sprintf("%d deliberation branches are not listed (--branches lists them)", len(all)-1))
	withBranches := ok(t, "world", "ls", "--branches").stdout
	require.Contains(t, withBranches, b)
	require.NotContains(t, withBranches, "not listed")
}

func TestWorldDeliberateBadInput(t *testing.T) {
	home(t)
	_, run := grid(t, "5")
	for _, c := range []struct {
		args []string
		frag string
	}{
		{[]string{run, "--strategy", "greedy"}, `unknown strategy "greedy"`},
		{[]string{run, "--rounds", "2"}, "need --apply"},
		{[]string{run, "--until-done"}, "need --apply"},
		{[]string{run, "--rounds", "2", "--until-done", "--apply"}, "not both"},
		{[]string{run, "--depth", "0"}, "--depth must be a positive number"},
		{[]string{run, "--seeds", "100"}, "from 1 to 64"},
		{[]string{run, "--budget", "1"}, "needs at least 2"},
		{[]string{run, "--checkpoint", "ckp_x"}, "checkpoint"},
		{[]string{"wld_0190a1b2c3d4e5f60718293a4b5c6d7e"}, "run"},
		{[]string{}, "needs RUN"},
		{[]string{run, "--width", "x"}, "invalid value"},
	} {
		r := ducklm(t, append([]string{"world", "deliberate"}, c.args...)...)
		require.Equal(t, cli.ExitUsage, r.code, "%v: %s", c.args, r.stderr)
		require.Contains(t, r.stderr, c.frag, "%v", c.args)
		require.Empty(t, strings.TrimSpace(r.stdout))
	}
}

// A deliberation stopped by the user (Ctrl-C cancels the command's context)
// says it was cancelled and exits with ExitCancelled, not as bad input.
func TestWorldDeliberateCancelled(t *testing.T) {
	dir := home(t)
	_, run := grid(t, "5")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := cli.Run(cli.Env{Ctx: ctx, Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader("")},
			// 16 seeds a candidate: the grid's states last for minutes of
			// branches, so the search is still running when it is cancelled.
			[]string{"world", "deliberate", run, "--strategy", "mcts", "--depth", "20", "--budget", "100000", "--seeds", "16"})
		done <- result{stdout: out.String(), stderr: errOut.String(), code: code}
	}()
	// Cancel once branches are being recorded.
	db, err := store.Open(context.Background(), filepath.Join(dir, "ducklm.db"))
	require.NoError(t, err)
	defer db.Close()
	require.Eventually(t, func() bool {
		var n int
		return db.SQL.QueryRow("SELECT count(*) FROM forks").Scan(&n) == nil && n >= 10
	}, 60*time.Second, 20*time.Millisecond)
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the cancelled deliberation did not stop")
	}
	require.Equal(t, cli.ExitCancelled, r.code, r.stderr)
	require.Contains(t, r.stderr, "ducklm world: the deliberation was cancelled")
	require.Contains(t, r.stderr, "stay in the lineage")
}
