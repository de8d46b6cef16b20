package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/prereq"
	"ducklm/backend/tool"
	"ducklm/backend/web"
)

func requireChromium(t *testing.T) {
	t.Helper()
	requireSandbox(t)
	if _, err := exec.LookPath("chromium"); err != nil {
		prereq.Missing(t, "chromium is not installed (apt-get install chromium)")
	}
}

type browserFixture struct {
	fixture
	blobs *blob.Store
	tool  *tool.Browser
}

func setupBrowser(t *testing.T) *browserFixture {
	t.Helper()
	requireChromium(t)
	f := &browserFixture{fixture: setup(t)}
	var err error
	f.blobs, err = blob.Open(t.TempDir())
	require.NoError(t, err)
	f.tool = &tool.Browser{Net: &web.Net{}, Blobs: f.blobs}
	return f
}

// browserCall is a call with room for Chromium: a minute, the default
// memory and processes, and the loopback test server's address approved.
func (f *browserFixture) call(t *testing.T, url string, hosts ...string) backend.ToolCall {
	t.Helper()
	c := f.fixture.call(t, "browser", map[string]any{"url": url})
	c.Limits = backend.Limits{Timeout: 2 * time.Minute, OutputBytes: 64 << 10}
	c.Hosts, c.PrivateHosts = hosts, hosts
	return c
}

type browserResult struct {
	FinalURL   string           `json:"final_url"`
	Status     int              `json:"status"`
	Title      string           `json:"title"`
	Text       string           `json:"text"`
	Screenshot *backend.BlobRef `json:"screenshot"`
	Refused    []string         `json:"refused"`
	Error      string           `json:"error"`
}

// chromiumIn lists the processes whose command line names dir.
func chromiumIn(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(dir)) {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func loopbackServer(t *testing.T, addr string, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	ln, err := net.Listen("tcp", addr+":0")
	require.NoError(t, err)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s, &hits
}

func TestBrowserRendersAPageThatNeedsJavaScript(t *testing.T) {
	t.Parallel()
	f := setupBrowser(t)
	other, otherHits := loopbackServer(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(`document.title = "tracked"`))
	})
	srv, _ := loopbackServer(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html><head><title>App</title>
<script src="` + other.URL + `/track.js"></script></head><body><div id="root"></div>
<script>document.getElementById('root').innerHTML = '<p>rendered by script: the release is 2.4</p>'</script></body></html>`))
	})
	res, err := f.tool.Run(context.Background(), f.call(t, srv.URL+"/app", "127.0.0.1"))
	require.NoError(t, err)
	var out browserResult
	require.NoError(t, json.Unmarshal(res.Output, &out))
	require.Equal(t, 0, res.ExitCode, "%s %s", res.Stderr, out.Error)
	require.Contains(t, string(res.Stdout), "rendered by script: the release is 2.4")
	require.Equal(t, "App", out.Title, "the script of an unapproved host never ran")
	require.Equal(t, 200, out.Status)
	require.Equal(t, srv.URL+"/app", out.FinalURL)
	require.True(t, res.Sandboxed)

	require.NotNil(t, out.Screenshot)
	png, err := f.blobs.Get(context.Background(), *out.Screenshot)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG")), "the screenshot is a PNG")

	require.Zero(t, otherHits.Load(), "the page's request to another host was refused")
	t.Logf("refused: %v", out.Refused)
	require.Contains(t, out.Refused, "127.0.0.2")
	require.Contains(t, string(res.Stderr), "Requests to hosts not approved (the page's, or Chromium's own calls home) were refused, so nothing was sent to them: ")
	require.Contains(t, string(res.Stderr), "127.0.0.2")

	require.Empty(t, chromiumIn(f.ws), "no browser process outlives the step")
	left, _ := filepath.Glob(filepath.Join(f.ws, ".ducklm-browser-*"))
	require.Empty(t, left, "the throw-away profile is gone")
}

func TestBrowserWithoutAGrantStartsNothing(t *testing.T) {
	t.Parallel()
	f := setupBrowser(t)
	srv, hits := loopbackServer(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {})
	res, err := f.tool.Run(context.Background(), f.call(t, srv.URL+"/"))
	require.NoError(t, err)
	require.Equal(t, 1, res.ExitCode)
	require.Contains(t, string(res.Stderr), "is not an approved host for this step, so no request was sent to it")
	require.Zero(t, hits.Load())
}

func TestCancellingTheBrowserMidLoadLeavesNoChromium(t *testing.T) {
	t.Parallel()
	f := setupBrowser(t)
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv, _ := loopbackServer(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select { // the page never finishes loading
		case <-release:
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.tool.Run(ctx, f.call(t, srv.URL+"/slow", "127.0.0.1"))
		done <- err
	}()
	select {
	case <-arrived:
	case <-time.After(2 * time.Minute):
		t.Fatal("the browser never asked for the page")
	}
	require.NotEmpty(t, chromiumIn(f.ws), "the browser is running while the page loads")
	cancel()
	select {
	case err := <-done:
		require.Error(t, err)
		require.Contains(t, err.Error(), "cancelled")
	case <-time.After(2 * time.Minute):
		t.Fatal("the browser did not stop on cancel")
	}
	require.Empty(t, chromiumIn(f.ws), "no chromium process is left")
}

func TestABrowserStepEndsAtItsTimeLimitWithNothingLeft(t *testing.T) {
	t.Parallel()
	f := setupBrowser(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv, _ := loopbackServer(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		select { // a server that never answers
		case <-release:
		case <-r.Context().Done():
		}
	})
	call := f.call(t, srv.URL+"/hang", "127.0.0.1")
	call.Args = json.RawMessage(`{"url":"` + srv.URL + `/hang","timeout_seconds":3}`)
	start := time.Now()
	res, err := f.tool.Run(context.Background(), call)
	require.NoError(t, err, "a timeout is a result")
	require.Equal(t, 1, res.ExitCode)
	require.True(t, res.TimedOut)
	require.Contains(t, string(res.Stderr), "did not finish within its time limit of 3s")
	require.Less(t, time.Since(start), 2*time.Minute)
	require.Empty(t, chromiumIn(f.ws), "the whole browser is gone")
}
