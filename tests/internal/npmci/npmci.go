// Package npmci installs a test folder's npm packages from its committed
// lock file, once per lock: the whole-system tests that run real npm
// programs (MCP servers, the TypeScript SDK, the conformance suite) share
// it. make's test targets usually ran it first; this covers `go test` by
// hand.
package npmci

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/prereq"
)

// Install runs `npm ci` in dir when its package-lock.json is newer than the
// last install (node_modules/.ci-stamp). A missing npm fails the test in CI
// and skips it elsewhere; what says what the packages are for.
func Install(t testing.TB, dir, what string) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		prereq.Missing(t, "npm is missing: it installs %s from %s", what, filepath.Join(dir, "package-lock.json"))
	}
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	require.NoError(t, err)
	stamp := filepath.Join(dir, "node_modules", ".ci-stamp")
	if st, err := os.Stat(stamp); err == nil && !st.ModTime().Before(lock.ModTime()) {
		return
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm ci in %s:\n%s", dir, out)
	require.NoError(t, os.WriteFile(stamp, nil, 0o644))
}
