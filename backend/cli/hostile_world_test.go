package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
	"ducklm/backend/settings"
)

// growsAt steps a counter and, at the step that would reach 5, doubles a
// string until something stops it.
const growsAt = `
def init(seed):
    return {"n": 0}
def step(state, action, rng):
    if state["n"] == 4:
        s = "x"
        while True:
            s = s + s
    return {"n": state["n"] + 1}, [{"n": state["n"] + 1}]
def observe(state, role):
    return state
`

// TestWorldProgramsOutgrowingTheirMemoryLimitFailAlone is issue 14's first
// class from the command line, under a 64 MiB setting: a program that
// allocates without end in its top-level code or in init is refused (exit
// 2, like any program that cannot run) with the data directory
// byte-identical; in step it fails its run at that step
// (the steps before it recorded, the failure recorded with the limit's
// sentence), and the next command runs other worlds as before.
func TestWorldProgramsOutgrowingTheirMemoryLimitFailAlone(t *testing.T) {
	dir := home(t)
	require.NoError(t, settings.Save(dir, settings.Settings{WorldMemoryMiB: 64}))
	other := ok(t, "world", "new", "--example", "branching_grid", "--seed", "1", "--json")
	var otherRun struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal([]byte(other.stdout), &otherRun))
	before := dirDigest(t, dir)

	write := func(name, src string) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, []byte(src), 0o600))
		return p
	}
	for name, src := range map[string]string{
		"top-level code": "big = [str(i) * 4000 for i in range(1 << 40)]\n" + growsAt,
		"init":           strings.Replace(growsAt, `    return {"n": 0}`, "    l = [seed]\n    while True:\n        l = l + l", 1),
	} {
		r := ducklm(t, "world", "new", "--program", write("hostile.star", src))
		require.Equal(t, cli.ExitUsage, r.code, "%s: a program that cannot run is bad input: %s", name, r.stderr)
		require.Contains(t, r.stderr, "memory limit of 64 MiB", name)
		require.Contains(t, r.stderr, "during "+name, name)
		require.Contains(t, r.stderr, "worldMemoryMiB", name)
		require.Equal(t, before, dirDigest(t, dir), "%s: a refused world left the data directory as it was", name)
	}

	r := ok(t, "world", "new", "--program", write("grows.star", growsAt), "--name", "grows")
	run := regexp.MustCompile(`run_[0-9a-f]+`).FindString(r.stdout)
	require.NotEmpty(t, run, r.stdout)
	r = ducklm(t, "world", "run", run, "--steps", "10")
	require.Equal(t, cli.ExitFail, r.code, r.stderr)
	require.Contains(t, r.stderr, "memory limit of 64 MiB")
	require.Contains(t, r.stderr, "during step")

	var events []struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	require.NoError(t, json.Unmarshal([]byte(ok(t, "world", "events", run, "--json").stdout), &events))
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	require.Equal(t, []string{"world.initialized", "world.checkpoint",
		"world.step", "world.event", "world.step", "world.event", "world.step", "world.event", "world.step", "world.event",
		"world.failed"}, types, "the four steps before the failing one are recorded, then the failure")
	var failed struct{ Code, Error string }
	require.NoError(t, json.Unmarshal(events[len(events)-1].Payload, &failed))
	require.Equal(t, "limit", failed.Code)
	require.Contains(t, failed.Error, "memory limit of 64 MiB")
	show := ok(t, "world", "show", run).stdout
	require.Contains(t, show, "status: failed")
	require.Contains(t, show, "limits: 1,000,000 execution steps a call, 8 MiB of state, 64 MiB of memory")
	ok(t, "world", "verify", run)

	// Every other world goes on.
	ok(t, "world", "run", otherRun.Run.ID, "--steps", "3")
}
