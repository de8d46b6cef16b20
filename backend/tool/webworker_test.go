package tool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/bwrap"
	"ducklm/backend/tool"
	"ducklm/backend/web"
)

// bloatPage is just under 5 MiB (the default largest body) of small blocks, each a candidate paragraph: reading
// it, go-readability keeps about 300 MB live (measured in process: VmHWM
// 301 MB).
var bloatPage = "<html><body>" + strings.Repeat("<div>x, y, z</div>", (5<<20-32)/len("<div>x, y, z</div>")) + "</body></html>"

// stallPage is blocks nested 400 deep, each with a sentence: go-readability
// scores every block against every ancestor, about 4 µs a byte (12 s in
// process for this page on an idle core).
var stallPage = func() string {
	d := 400
	block := strings.Repeat("<div>alpha, beta, gamma, delta epsilon. ", d) + strings.Repeat("</div>", d)
	return "<html><body>" + strings.Repeat(block, (3<<20)/len(block)+1) + "</body></html>"
}()

// serveHostile serves the hostile pages on loopback.
func serveHostile(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/bloat":
			_, _ = w.Write([]byte(bloatPage))
		case "/stall":
			_, _ = w.Write([]byte(stallPage))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return srv, u.Hostname()
}

// rssBytes is this process's resident memory now.
func rssBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// peakRSS runs fn and returns the most this process's resident memory grew
// above what it was before, sampled every 5 ms.
func peakRSS(t *testing.T, fn func()) int64 {
	t.Helper()
	before := rssBytes(t)
	var peak int64
	var mu sync.Mutex
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if r := rssBytes(t); r > before {
				mu.Lock()
				peak = max(peak, r-before)
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	<-sampled
	mu.Lock()
	defer mu.Unlock()
	return peak
}

// hostileCall is a fetch of path on the hostile server, its loopback host approved.
func hostileCall(t *testing.T, f *webFixture, host, path string) backend.ToolCall {
	t.Helper()
	call := f.call(t, "web_fetch", map[string]any{"url": f.srv.URL + path})
	call.Hosts, call.PrivateHosts = []string{host}, []string{host}
	call.Limits.FileBytes = 8 << 20 // the whole page is read (the fetch reads at most the largest file)
	return call
}

func setupHostile(t *testing.T) *webFixture {
	t.Helper()
	f := &webFixture{fixture: setup(t)}
	f.srv, f.host = serveHostile(t)
	var err error
	f.blobs, err = blob.Open(t.TempDir())
	require.NoError(t, err)
	f.tool = &tool.WebFetch{Net: &web.Net{}, Blobs: f.blobs, Sandbox: tool.AllowUnsandboxed}
	return f
}

// A page whose reading bloats the parser (300 MB for 5 MiB of HTML) stops
// the worker at its memory limit, here 64 MiB, while ducklm's own memory
// barely moves (measured: the most its RSS grew during the step, 9–12 MiB
// against 257 MiB when ducklm read the page itself). The
// step says so, and keeps the status and the raw body the worker fetched
// before it began reading.
func TestAPageThatBloatsTheParserStopsAtTheWorkersLimitNotDucklms(t *testing.T) {
	f := setupHostile(t)
	for _, mode := range []string{"sandboxed", "unsandboxed"} {
		if mode == "sandboxed" {
			if _, ok, _ := bwrap.Available(); !ok {
				continue
			}
		} else {
			defer tool.SetSandboxUnavailable()()
		}
		call := hostileCall(t, f, f.host, "/bloat")
		call.Limits.MemoryBytes = 64 << 20
		call.Limits.Timeout = time.Minute
		var res backend.ToolResult
		var err error
		grew := peakRSS(t, func() { res, err = f.tool.Run(context.Background(), call) })
		t.Logf("%s: ducklm's RSS grew by at most %.1f MiB during the step", mode, float64(grew)/(1<<20))
		require.NoError(t, err)
		// In ducklm the parser took 257 MiB more for this page (a race
		// build holds the body's 5 MiB several times over: its shadow).
		require.Less(t, grew, int64(96<<20), "%s: the parser's memory is the worker's, not ducklm's", mode)
		require.Equal(t, 1, res.ExitCode, "%s: stderr %s", mode, res.Stderr)
		require.Contains(t, string(res.Stderr), "the worker reading it met its memory limit of 64 MiB", mode)
		var out fetchOutput
		require.NoError(t, json.Unmarshal(res.Output, &out))
		require.Equal(t, 200, out.Status)
		require.Equal(t, "none", out.TextKind)
		require.NotNil(t, out.Raw)
		require.Equal(t, int64(len(bloatPage)), out.Raw.Size, "the raw body is kept whole")
	}
}

// A page whose reading takes the parser minutes is stopped at the step's
// time limit (2 s), not when the parser is done.
func TestAPageThatStallsTheParserStopsAtTheStepsTimeLimit(t *testing.T) {
	f := setupHostile(t)
	call := hostileCall(t, f, f.host, "/stall")
	call.Limits.Timeout = 2 * time.Second
	start := time.Now()
	res, err := f.tool.Run(context.Background(), call)
	took := time.Since(start)
	t.Logf("the step took %s", took)
	require.NoError(t, err)
	require.Less(t, took, 8*time.Second, "bounded by the step's limit, not by the parser")
	require.True(t, res.TimedOut)
	require.Equal(t, 1, res.ExitCode)
	require.Contains(t, string(res.Stderr), "did not finish within the step's time limit of 2s")
	var out fetchOutput
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.Equal(t, 200, out.Status)
	require.NotNil(t, out.Raw)
}

// The record says where a fetch ran: a web worker (the catalog's
// confinement), in bubblewrap when it works here, with the limits it ran
// under; without bubblewrap, unsandboxed and saying so, and only for a
// fetch the runtime let run so (a person approved it): a WebFetch that
// requires the sandbox refuses.
func TestWebFetchSaysWhereItRan(t *testing.T) {
	f := setupWeb(t)
	require.Equal(t, backend.Confinement("web_worker"), backend.ConfinementOf(f.tool))
	_, sandboxed, _ := bwrap.Available()
	res, out, err := f.fetch(t, map[string]any{"url": f.srv.URL + "/notes"}, f.host)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.Equal(t, sandboxed, res.Sandboxed)
	require.Contains(t, out.Enforced, "rlimit data")
	require.Contains(t, out.Enforced, "timeout")

	restore := tool.SetSandboxUnavailable()
	defer restore()
	call := f.call(t, "web_fetch", map[string]any{"url": f.srv.URL + "/notes"})
	call.Hosts, call.PrivateHosts = []string{f.host}, []string{f.host}
	strict := &tool.WebFetch{Net: &web.Net{}, Blobs: f.blobs}
	_, err = strict.Run(context.Background(), call)
	require.Error(t, err)
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))
	require.Contains(t, err.Error(), "bubblewrap (bwrap) is not installed; web pages can only be fetched unsandboxed, with your approval")

	res, out, err = f.fetch(t, map[string]any{"url": f.srv.URL + "/notes"}, f.host)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.False(t, res.Sandboxed, "the record says it ran unsandboxed")
	require.Contains(t, string(res.Stderr), "without a sandbox")
	require.Equal(t, "Duck 2.4 release notes", out.Title)
}

// Not parallel: it plays a machine without bubblewrap for the package. A
// WebFetch whose mode comes from SandboxFrom asks for it when it fetches,
// not when it is made (the service probes bubblewrap on first need).
func TestWebFetchTakesItsModeWhenItFetches(t *testing.T) {
	f := setupWeb(t)
	defer tool.SetSandboxUnavailable()()
	call := f.call(t, "web_fetch", map[string]any{"url": f.srv.URL + "/notes"})
	call.Hosts, call.PrivateHosts = []string{f.host}, []string{f.host}
	asked, mode := 0, tool.RequireSandbox
	wf := &tool.WebFetch{Net: &web.Net{}, Blobs: f.blobs, SandboxFrom: func() tool.SandboxMode { asked++; return mode }}
	require.Zero(t, asked, "making the WebFetch asked for its mode")

	_, err := wf.Run(context.Background(), call)
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err), "RequireSandbox refuses without bubblewrap")
	require.Equal(t, 1, asked)

	mode = tool.AllowUnsandboxed
	res, err := wf.Run(context.Background(), call)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.False(t, res.Sandboxed)
	require.Equal(t, 2, asked)
}
