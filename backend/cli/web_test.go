package cli_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
)

func notesSite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Notes</title></head><body><article>
<p>The command line reads pages too, within time, size and redirect limits, and keeps the raw body as a blob.</p>
<p>Only hosts the user approved are contacted; private addresses need an approval of their own.</p>
<p>The approval can allow the host for the rest of the run, so the next page does not ask.</p></article></body></html>`)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

func webPlan(t *testing.T, urls ...string) string {
	t.Helper()
	nodes := ""
	for i, u := range urls {
		if i > 0 {
			nodes += ","
		}
		dep := "[]"
		if i > 0 {
			dep = fmt.Sprintf(`["page-%d"]`, i-1)
		}
		nodes += fmt.Sprintf(`{"id": "page-%d", "kind": "tool", "tool": "web_fetch", "args": {"url": %q}, "depends_on": %s}`, i, u, dep)
	}
	file := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"nodes": [`+nodes+`]}`), 0o600))
	return file
}

func TestApproveAllowHostLetsTheRestOfTheRunFetchWithoutAsking(t *testing.T) {
	taskHome(t)
	site, hits := notesSite(t)
	args := []string{"run", "--plan", webPlan(t, site.URL+"/a", site.URL+"/b"), "--approve", "risky"}
	r := ducklmIn(t, "", args...)
	requireCode(t, r, cli.ExitOK, args...)
	require.Contains(t, r.stderr, "reaches 127.0.0.1 only (ducklm approve --allow-host allows it for the rest of the run)")
	require.Contains(t, r.stderr, "rule web_private")
	require.Contains(t, r.stderr, "read in a web worker process", "the prompt says where the page is read")
	require.NotContains(t, r.stderr, "workspace only", "a web worker does not see the workspace")
	require.Zero(t, hits.Load(), "nothing is fetched before the approval")
	m := webApproveHint.FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)

	r = ducklmIn(t, "", "approve", m[1], "--allow-host")
	requireCode(t, r, cli.ExitOK, "approve", m[1], "--allow-host")
	require.Contains(t, r.stdout, "The command line reads pages too")
	require.Equal(t, int64(2), hits.Load(), "the second page's host was allowed for the run")
	runs := runsJSON(t)
	require.Equal(t, 2, runs[0].StepsDone)
}

func TestRunAllowHostFetchesWithoutAsking(t *testing.T) {
	taskHome(t)
	site, hits := notesSite(t)
	args := []string{"run", "--plan", webPlan(t, site.URL+"/a"), "--approve", "risky", "--allow-host", "127.0.0.1"}
	r := ducklmIn(t, "", args...)
	requireCode(t, r, cli.ExitOK, args...)
	require.NotContains(t, r.stderr, "approve?")
	require.Contains(t, r.stdout, "The command line reads pages too")
	require.Equal(t, int64(1), hits.Load())

	args = []string{"run", "--plan", webPlan(t, site.URL+"/a"), "--allow-host", "http://127.0.0.1/"}
	r = ducklmIn(t, "", args...)
	requireCode(t, r, cli.ExitUsage, args...)
	require.Contains(t, r.stderr, "write only the host")
}

var webApproveHint = regexp.MustCompile(`waiting for approval of step page-0: ducklm approve (apr_[0-9a-f]+) \(or deny\)`)
