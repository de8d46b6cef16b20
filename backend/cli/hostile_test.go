package cli_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
)

// dirDigest maps every file under dir to its mode and the digest of its
// bytes: two equal digests mean the folder is byte-identical.
func dirDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[rel+"/"] = info.Mode().String()
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = info.Mode().String() + " " + hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

// settle brings the data directory to what any write command leaves (its
// database and the lock a writer holds), so a refused command can be
// compared with it byte for byte.
func settle(t *testing.T) {
	t.Helper()
	ok(t, "world", "new", "--example", "branching_grid", "--seed", "1")
}

// writePlan writes a plan file and returns its path.
func writePlan(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	return file
}

// manySteps is a valid plan of n independent shell steps.
func manySteps(n int) string {
	nodes := make([]string, n)
	for i := range nodes {
		nodes[i] = fmt.Sprintf(`{"id":"s%d","kind":"tool","tool":"shell_exec","args":{"command":"true"}}`, i)
	}
	return `{"nodes":[` + strings.Join(nodes, ",") + `]}`
}

func TestRunRefusesBadPlansAndFlagsBeforeWritingAnything(t *testing.T) {
	dir := taskHome(t)
	settle(t)
	before := dirDigest(t, dir)
	plan := func(body string) string { return writePlan(t, body) }
	step := func(fields string) string {
		return plan(`{"nodes":[{"id":"a","kind":"tool",` + fields + `}]}`)
	}
	big := plan(`{"nodes":[{"id":"a","kind":"tool","tool":"file_write","args":{"path":"x","content":"` +
		strings.Repeat("x", 5<<20) + `"}}]}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--plan", step(`"tool":"no_such_tool","args":{}`)}, "no_such_tool"},
		{[]string{"run", "--plan", plan(`{"nodes":[{"id":"a","kind":"tool","tool":"shell_exec","args":{"command":"x"},"depends_on":["b"]},
			{"id":"b","kind":"tool","tool":"shell_exec","args":{"command":"x"},"depends_on":["a"]}]}`)}, "cycle"},
		{[]string{"run", "--plan", step(`"tool":"shell_exec","args":{"command":"x"},"depends_on":["a"]`)}, "a"},
		{[]string{"run", "--plan", step(`"tool":"shell_exec","args":{"command":"x"},"depends_on":["ghost"]`)}, "ghost"},
		{[]string{"run", "--plan", plan(`{"nodes":[{"id":"a","kind":"tool","tool":"shell_exec","args":{"command":"x"}},
			{"id":"a","kind":"tool","tool":"shell_exec","args":{"command":"y"}}]}`)}, "a"},
		{[]string{"run", "--plan", plan(`{"nodes":[{"id":"","kind":"tool","tool":"shell_exec","args":{"command":"x"}}]}`)}, "id"},
		{[]string{"run", "--plan", plan(`{"nodes":[{"id":"a","kind":"magic","tool":"shell_exec","args":{"command":"x"}}]}`)}, "kind"},
		{[]string{"run", "--plan", step(`"tool":"shell_exec","args":{"command":5}`)}, "command"},
		{[]string{"run", "--plan", step(`"tool":"shell_exec","args":{}`)}, "command"},
		{[]string{"run", "--plan", step(`"tool":"shell_exec","args":{"command":"x","evil":true}`)}, "evil"},
		{[]string{"run", "--plan", step(`"tool":"shell_exec","args":{"command":"x"},"extra":1`)}, "extra"},
		{[]string{"run", "--plan", plan(`{"nodes":[]}`)}, "not a valid plan"},
		{[]string{"run", "--plan", big}, "larger than the 4194304 bytes a plan may have"},
		{[]string{"run", "--plan", plan(manySteps(10000))}, "more than the 200 allowed; a run allows more when it says so: ducklm run --plan FILE --max-plan-steps 10000 --max-steps 10000"},
		{[]string{"run", "--plan", plan(manySteps(60))}, "the plan has 60 steps, more than the run's limit of 50; raise it with --max-steps 60"},
		{[]string{"run", "--plan", plan(manySteps(5)), "--max-steps", "4"}, "more than the run's limit of 4; raise it with --max-steps 5"},
		{[]string{"run", "$ echo x", "--timeout", "-5s"}, "--timeout must be positive, not -5s"},
		{[]string{"run", "$ echo x", "--max-steps", "-1"}, "--max-steps must be positive, not -1"},
		{[]string{"run", "$ echo x", "--max-steps", "100000"}, "more than the 1000 allowed"},
		{[]string{"run", "$ echo x", "--timeout", "1000h"}, "longer than the 24h0m0s allowed"},
		{[]string{"run", "$ echo x", "--plan", plan(manySteps(1))}, "not both"},
		{[]string{"run", strings.Repeat("x", 1<<20+1)}, "more than the 1048576 allowed"},
		{[]string{"run", "$ echo x", "--create-workspace"}, "--create-workspace needs --workspace"},
		{[]string{"run", "$ echo x", "--label", "x"}, "--label names an explicit plan"},
	} {
		r := ducklm(t, c.args...)
		shown := strings.Join(c.args, " ")
		if len(shown) > 200 {
			shown = shown[:200] + "…"
		}
		require.Equal(t, cli.ExitUsage, r.code, "ducklm %s\nstderr: %s", shown, r.stderr)
		require.Contains(t, r.stderr, c.want, "ducklm %s", shown)
		require.Empty(t, r.stdout, "ducklm %s", shown)
		require.Equal(t, before, dirDigest(t, dir), "ducklm %s left the data directory as it was", shown)
	}
	require.Empty(t, runsJSON(t), "no refused input created a run")
}

func TestRunRefusesWorkspacesThatExposeTheHostOrTheDataDirectory(t *testing.T) {
	dir := taskHome(t)
	settle(t)
	before := dirDigest(t, dir)
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "etc-link")
	require.NoError(t, os.Symlink("/etc", link))
	missing := filepath.Join(t.TempDir(), "not", "yet")
	for _, c := range []struct {
		ws, want string
	}{
		{"/etc", "the system's /etc folder"},
		{"/", "a system folder shared"},
		{"/usr/share", "the system's /usr folder"},
		{"/tmp", "a system folder shared"},
		{link, "the system's /etc folder"},
		{dir, "it is ducklm's data directory"},
		{filepath.Dir(dir), "it holds ducklm's data directory"},
		{filepath.Join(dir, "blobs"), "inside ducklm's data directory"},
		{filepath.Join(dir, "workspaces"), "inside ducklm's data directory"},
		{home, "your home folder itself"},
		{missing, "the workspace folder " + missing + " does not exist; create it, or add --create-workspace"},
	} {
		args := []string{"run", "$ touch pwned", "--approve", "auto", "--workspace", c.ws}
		r := ducklm(t, args...)
		require.Equal(t, cli.ExitUsage, r.code, "--workspace %s\nstderr: %s", c.ws, r.stderr)
		require.Contains(t, r.stderr, c.want, "--workspace %s", c.ws)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one sentence: %q", r.stderr)
		require.Equal(t, before, dirDigest(t, dir), "--workspace %s left the data directory as it was", c.ws)
	}
	require.Empty(t, runsJSON(t))
	require.NoDirExists(t, missing, "a missing workspace is not created without --create-workspace")

	// A folder of its own is fine, and --create-workspace makes a missing one.
	args := []string{"run", "$ echo made > made.txt", "--approve", "auto", "--workspace", missing, "--create-workspace"}
	r := ducklmIn(t, "y\n", args...)
	requireCode(t, r, cli.ExitOK, args...)
	data, err := os.ReadFile(filepath.Join(missing, "made.txt"))
	require.NoError(t, err)
	require.Equal(t, "made\n", string(data))
}
