package tool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/tool"
	"ducklm/backend/web"
)

const notesPage = `<!doctype html><html><head><title>Duck 2.4 release notes</title></head><body>
<nav><a href="/">Home</a> <a href="/login">Log in</a></nav>
<article><h1>Duck 2.4 release notes</h1>
<p>Duck 2.4 reads web pages for a task, within time, size and redirect limits, and keeps the raw body as a blob.</p>
<p>Pages that need JavaScript are rendered by a sandboxed browser with a throw-away profile.</p>
<p>Only hosts the user approved are ever contacted; private addresses need their own approval.</p></article>
</body></html>`

const scriptOnlyPage = `<!doctype html><html><head><title>App</title></head><body><div id="root"></div>
<script>document.getElementById('root').innerHTML = '<p>rendered by script</p>'</script></body></html>`

type webFixture struct {
	fixture
	srv   *httptest.Server
	host  string
	hits  atomic.Int64
	blobs *blob.Store
	tool  *tool.WebFetch
}

func setupWeb(t *testing.T) *webFixture {
	t.Helper()
	f := &webFixture{fixture: setup(t)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/notes":
			_, _ = w.Write([]byte(notesPage))
		case "/app":
			_, _ = w.Write([]byte(scriptOnlyPage))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	u, _ := url.Parse(f.srv.URL)
	f.host = u.Hostname()
	var err error
	f.blobs, err = blob.Open(t.TempDir())
	require.NoError(t, err)
	f.tool = &tool.WebFetch{Net: &web.Net{}, Blobs: f.blobs, Sandbox: tool.AllowUnsandboxed}
	return f
}

type fetchOutput struct {
	URL         string           `json:"url"`
	FinalURL    string           `json:"final_url"`
	Status      int              `json:"status"`
	ContentType string           `json:"content_type"`
	FetchedAt   string           `json:"fetched_at"`
	Title       string           `json:"title"`
	Text        string           `json:"text"`
	TextKind    string           `json:"text_kind"`
	Raw         *backend.BlobRef `json:"raw"`
	Error       string           `json:"error"`
	Enforced    []string         `json:"enforced"`
}

func (f *webFixture) fetch(t *testing.T, args any, hosts ...string) (backend.ToolResult, fetchOutput, error) {
	t.Helper()
	call := f.call(t, "web_fetch", args)
	call.Hosts, call.PrivateHosts = hosts, hosts // the loopback test server's literal, approved
	res, err := f.tool.Run(context.Background(), call)
	var out fetchOutput
	if err == nil {
		require.NoError(t, json.Unmarshal(res.Output, &out))
	}
	return res, out, err
}

func TestWebFetchReturnsTheTextAndKeepsTheBody(t *testing.T) {
	t.Parallel()
	f := setupWeb(t)
	res, out, err := f.fetch(t, map[string]any{"url": f.srv.URL + "/notes"}, f.host)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, string(res.Stdout), "Duck 2.4 reads web pages for a task")
	require.NotContains(t, string(res.Stdout), "Log in")
	require.Equal(t, 200, out.Status)
	require.Equal(t, f.srv.URL+"/notes", out.FinalURL)
	require.Equal(t, "text/html; charset=utf-8", out.ContentType)
	require.NotEmpty(t, out.FetchedAt)
	require.Equal(t, "Duck 2.4 release notes", out.Title)
	require.Equal(t, "article", out.TextKind)
	require.NotNil(t, out.Raw)
	raw, err := f.blobs.Get(context.Background(), *out.Raw)
	require.NoError(t, err)
	require.Equal(t, notesPage, string(raw), "the raw body is the blob")
}

func TestWebFetchGetsNoTextFromAPageThatNeedsJavaScript(t *testing.T) {
	t.Parallel()
	f := setupWeb(t)
	res, out, err := f.fetch(t, map[string]any{"url": f.srv.URL + "/app"}, f.host)
	require.NoError(t, err)
	require.NotContains(t, string(res.Stdout), "rendered by script")
	require.NotContains(t, out.Text, "rendered by script")
	require.Contains(t, string(res.Stderr), "the browser tool renders it")
}

func TestWebFetchWithoutAGrantSendsNothing(t *testing.T) {
	t.Parallel()
	f := setupWeb(t)
	res, out, err := f.fetch(t, map[string]any{"url": f.srv.URL + "/notes"})
	require.NoError(t, err, "a refusal is a result")
	require.Equal(t, 1, res.ExitCode)
	require.Contains(t, string(res.Stderr), "is not an approved host for this step, so no request was sent to it")
	require.Contains(t, out.Error, "no request was sent")
	require.Zero(t, f.hits.Load())

	// Granted the host but not its loopback address: refused after resolution.
	call := f.call(t, "web_fetch", map[string]any{"url": f.srv.URL + "/notes"})
	call.Hosts = []string{f.host}
	res, err = f.tool.Run(context.Background(), call)
	require.NoError(t, err)
	require.Equal(t, 1, res.ExitCode)
	require.Contains(t, string(res.Stderr), "a loopback address, which needs its own approval")
	require.Zero(t, f.hits.Load())
}

func TestWebFetchStatusAndBadArgs(t *testing.T) {
	t.Parallel()
	f := setupWeb(t)
	res, out, err := f.fetch(t, map[string]any{"url": f.srv.URL + "/missing"}, f.host)
	require.NoError(t, err)
	require.Equal(t, 1, res.ExitCode)
	require.Equal(t, 404, out.Status)
	require.Contains(t, string(res.Stderr), "answered 404 Not Found")

	for args, msg := range map[string]string{
		`{}`:                                     "web_fetch needs a url",
		`{"url":"file:///etc/passwd"}`:           "is not http or https",
		`{"url":"http://x.test/","verb":"GET"}`:  "are not valid",
		`{"url":"http://x.test/","max_bytes":0}`: "max_bytes must be between",
	} {
		call := f.call(t, "web_fetch", json.RawMessage(args))
		_, err := f.tool.Run(context.Background(), call)
		require.Error(t, err, args)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), args)
		require.Contains(t, err.Error(), msg, args)
	}
	require.Equal(t, int64(1), f.hits.Load())
}
