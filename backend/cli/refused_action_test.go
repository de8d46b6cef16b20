package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
)

// TestWorldStepRefusesABadActionWithoutTouchingTheRun is issue 27's bad
// --action: an action the world program refuses (actions(state) does not
// offer it and step raises on it, or a program without actions(state)
// raises on it) is the caller's error, exit 2 with the program's sentence,
// and nothing is written: the data directory stays byte-identical and the
// run steps on as before. A program's own error on an action it offers
// still fails the run.
func TestWorldStepRefusesABadActionWithoutTouchingTheRun(t *testing.T) {
	dir := home(t)
	_, run := grid(t, "3")
	ok(t, "world", "step", run, "--action", `"S"`)
	settle(t)
	before := dirDigest(t, dir)
	events := ok(t, "world", "events", run, "--json").stdout
	show := ok(t, "world", "show", run, "--json").stdout

	for _, args := range [][]string{
		{"world", "step", run, "--action", `"UP"`},
		{"world", "step", run, "--action", `{"move": 7}`},
		{"world", "run", run, "--steps", "3", "--action", `"UP"`},
		{"world", "step", run, "--action", `"` + strings.Repeat("x", 9<<20) + `"`},
	} {
		r := ducklm(t, args...)
		require.Equal(t, cli.ExitUsage, r.code, "%.80v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
		require.NotContains(t, r.stderr, "fork it", "%.80v", args)
		require.Equal(t, before, dirDigest(t, dir), "%.80v: a refused action left the data directory as it was", args)
	}
	r := ducklm(t, "world", "step", run, "--action", `"UP"`)
	require.Contains(t, r.stderr, "action must be one of N, S, E, W")
	require.Contains(t, r.stderr, "nothing was recorded")
	require.Equal(t, events, ok(t, "world", "events", run, "--json").stdout)
	require.Equal(t, show, ok(t, "world", "show", run, "--json").stdout)
	ok(t, "world", "step", run, "--action", `"N"`) // the run steps on

	// A program without actions(state): its raise on an action is a refusal too.
	p := filepath.Join(t.TempDir(), "picky.star")
	require.NoError(t, os.WriteFile(p, []byte(`
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    if action != None and type(action) != "int":
        fail("action must be a whole number")
    if action == 13:
        return {"n": 1 // 0}
    return {"n": state["n"] + 1}
def observe(state, role):
    return state
`), 0o600))
	picky := regexp.MustCompile(`run_[0-9a-f]+`).FindString(ok(t, "world", "new", "--program", p).stdout)
	before = dirDigest(t, dir)
	r = ducklm(t, "world", "step", picky, "--action", `"two"`)
	require.Equal(t, cli.ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "action must be a whole number")
	require.Equal(t, before, dirDigest(t, dir))
	ok(t, "world", "step", picky, "--action", "2")

	// The program's own error on valid input still fails the run.
	r = ducklm(t, "world", "step", picky, "--action", "13")
	require.NotEqual(t, cli.ExitOK, r.code)
	r = ducklm(t, "world", "step", picky)
	require.Contains(t, r.stderr, "is failed; fork it to continue")
}
