package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/bundle"
	"ducklm/backend/cli"
)

func TestBundleExportVerifyImport(t *testing.T) {
	homeA := home(t)
	_, run := grid(t, "7")
	ok(t, "world", "run", run, "--steps", "5")
	cp := ok(t, "world", "checkpoint", run).field(t, "checkpoint")
	child := ok(t, "world", "fork", cp, "--divergence", "seed_change", "--delta", `{"seed":3}`).field(t, "run")
	ok(t, "world", "run", child, "--steps", "5")
	file := filepath.Join(t.TempDir(), "child.ducklm")

	r := ducklm(t, "export", child, "-o", file)
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "add --ancestry")
	require.NoFileExists(t, file)

	r = ok(t, "export", child, "-o", file, "--ancestry", "--json")
	var exported struct {
		File     string          `json:"file"`
		Signer   string          `json:"signer"`
		Manifest bundle.Manifest `json:"manifest"`
	}
	r.decode(t, &exported)
	require.FileExists(t, file)
	require.EqualValues(t, 2, exported.Manifest.Counts.Worlds)
	require.Len(t, exported.Signer, 64)
	entries, err := os.ReadDir(filepath.Dir(file))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left beside the bundle")

	r = ok(t, "verify", file)
	require.Equal(t, "ok", r.field(t, "result"))
	require.Contains(t, r.field(t, "signer"), "known: this installation's own key")
	require.True(t, strings.HasPrefix(r.field(t, "contains"), "2 worlds, 2 runs, 1 fork, "), r.stdout)
	r = ok(t, "import", file)
	require.Contains(t, r.stdout, "already present")

	// Another installation does not know the key until it is trusted.
	homeB := home(t)
	r = ducklm(t, "import", file)
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stderr, "signed by an unknown key")
	require.Contains(t, r.stderr, "nothing was written")
	r = ok(t, "verify", file, "--json")
	var rep bundle.Report
	r.decode(t, &rep)
	require.True(t, rep.OK)
	require.False(t, rep.Known)
	require.Equal(t, exported.Signer, rep.Signer)

	require.NoError(t, os.WriteFile(bundle.TrustedKeysPath(homeB), []byte(bundle.FormatFingerprint(rep.Signer)+"\n"), 0o600))
	r = ok(t, "import", file)
	require.Contains(t, r.field(t, "signer"), "listed in trusted_keys")
	require.Contains(t, r.field(t, "added"), "2 worlds, 2 runs, 1 fork")
	require.Contains(t, ok(t, "world", "verify", child).stdout, "verified")
	require.Contains(t, ok(t, "import", file).stdout, "already present")
	require.NotEqual(t, homeA, homeB)
}

func TestImportTrustTrustsTheSignerOfABundleThatChecksOut(t *testing.T) {
	home(t)
	_, run := grid(t, "7")
	ok(t, "world", "run", run, "--steps", "3")
	file := filepath.Join(t.TempDir(), "run.ducklm")
	var exported struct {
		Signer string `json:"signer"`
	}
	ok(t, "export", run, "-o", file, "--json").decode(t, &exported)
	signer := exported.Signer

	homeB := home(t)
	r := ducklm(t, "import", file)
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stderr, "import it with --trust to trust that signer from now on, or with --allow-unsigned to take this bundle once")

	// A bundle that does not check out is refused, and its signer stays unknown.
	broken := filepath.Join(t.TempDir(), "broken.ducklm")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	data[len(data)/2] ^= 0xff
	require.NoError(t, os.WriteFile(broken, data, 0o600))
	r = ducklm(t, "import", broken, "--trust")
	require.Equal(t, cli.ExitFail, r.code, r.stderr)
	require.Contains(t, r.stderr, "nothing was written")
	require.NoFileExists(t, bundle.TrustedKeysPath(homeB), "a refused bundle's signer is not trusted")

	r = ok(t, "import", file, "--trust")
	require.Contains(t, r.field(t, "signer"), "trusted from now on (--trust)")
	require.Contains(t, r.field(t, "added"), "1 world")
	listed, err := os.ReadFile(bundle.TrustedKeysPath(homeB))
	require.NoError(t, err)
	require.Contains(t, string(listed), bundle.FormatFingerprint(signer))
	// From now on its bundles import without asking.
	require.Contains(t, ok(t, "import", file).stdout, "already present")
	require.Contains(t, ok(t, "verify", file).field(t, "signer"), "listed in trusted_keys")
}

func TestBundleBadInput(t *testing.T) {
	dir := home(t)
	notABundle := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(notABundle, []byte("just some text"), 0o600))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"export"}, cli.ExitUsage, "needs RUN|WORLD"},
		{[]string{"import", notABundle, "--trust", "--allow-unsigned"}, cli.ExitUsage, "--trust and --allow-unsigned are two answers to one question: give one"},
		{[]string{"import", notABundle, "--trust"}, cli.ExitFail, "not a ducklm bundle"},
		{[]string{"export", "run_1", "-o", "x.ducklm"}, cli.ExitUsage, "not a valid run id"},
		{[]string{"export", "ckp_0123456789abcdef0123456789abcdef", "-o", "x.ducklm"}, cli.ExitUsage, "export takes a run or a world"},
		{[]string{"export", "run_0123456789abcdef0123456789abcdef"}, cli.ExitUsage, "export needs -o FILE"},
		{[]string{"export", "run_0123456789abcdef0123456789abcdef", "-o", "/nonexistent/dir/x.ducklm"}, cli.ExitUsage, "there is no folder"},
		{[]string{"export", "run_0123456789abcdef0123456789abcdef", "-o", filepath.Join(t.TempDir(), "x.ducklm")}, cli.ExitUsage, "there is no run"},
		{[]string{"verify"}, cli.ExitUsage, "needs FILE"},
		{[]string{"verify", "/nonexistent.ducklm"}, cli.ExitUsage, "There is no file /nonexistent.ducklm. Check the path"},
		{[]string{"import", "/nonexistent.ducklm"}, cli.ExitUsage, "There is no file"},
		{[]string{"import", t.TempDir()}, cli.ExitUsage, "is not a file"},
		{[]string{"import", notABundle, "--allow-unsigned"}, cli.ExitFail, "not a ducklm bundle"},
		{[]string{"verify", notABundle}, cli.ExitFail, "result: bad bundle: "},
	} {
		r := ducklm(t, c.args...)
		require.Equal(t, c.code, r.code, "%v\nstdout: %s\nstderr: %s", c.args, r.stdout, r.stderr)
		require.Contains(t, r.stdout+r.stderr, c.want, "%v", c.args)
	}
	_, err := os.Stat(filepath.Join(dir, "keys"))
	require.True(t, os.IsNotExist(err), "no key is made by commands that did not export")
	var rep bundle.Report
	r := ducklm(t, "verify", notABundle, "--json")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.False(t, rep.OK)
}
