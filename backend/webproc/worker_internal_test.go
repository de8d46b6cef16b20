package webproc

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/prereq"
	"ducklm/backend/web"
	"ducklm/backend/webhost"
)

// The probe: a request for http://probe.invalid/ makes a test worker try,
// from inside, what a page that took the worker over could try — read
// files, dial addresses itself, look names up — and answer what each
// attempt gave ("" for success) as the body. It is set as a package
// variable is initialised, before the worker's init runs.
var _ = func() int {
	testHook = func(req request, out *bufio.Writer) bool {
		u, err := url.Parse(req.Request.URL)
		if err == nil && u.Host == "liar.invalid" {
			// A worker a page took over, answering more than it may: a
			// body past the request's largest, then endless bytes.
			send(out, frameResponse, web.Response{URL: req.Request.URL, FinalURL: req.Request.URL, Status: 200})
			_ = writeFrame(out, frameBody, make([]byte, req.Request.Limits.MaxBytes+1))
			for {
				if _, err := out.Write(make([]byte, 64<<10)); err != nil {
					return true
				}
			}
		}
		if err == nil && u.Host == "stall.invalid" {
			time.Sleep(time.Hour) // a parser that never returns
		}
		if err != nil || u.Host != "probe.invalid" {
			return false
		}
		got := map[string]string{}
		for _, p := range u.Query()["read"] {
			_, err := os.ReadFile(p)
			got["read "+p] = errText(err)
		}
		for _, a := range u.Query()["dial"] {
			c, err := net.DialTimeout("tcp", a, 2*time.Second)
			if err == nil {
				c.Close()
			}
			got["dial "+a] = errText(err)
		}
		for _, h := range u.Query()["lookup"] {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
			cancel()
			got["lookup "+h] = errText(err)
		}
		b, _ := json.Marshal(got)
		send(out, frameResponse, web.Response{URL: req.Request.URL, FinalURL: req.Request.URL, Status: 200})
		_ = writeFrame(out, frameBody, b)
		send(out, frameText, web.Text{Kind: "none"})
		return true
	}
	return 0
}()

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// counted is a test server on addr that counts its requests.
type counted struct {
	*httptest.Server
	hits atomic.Int64
}

func serveOn(t testing.TB, addr, body string) *counted {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	require.NoError(t, err)
	s := &counted{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// caBundle is where Debian keeps the certificates Go's TLS trusts.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

func requireSandbox(t *testing.T) {
	t.Helper()
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "%s", why)
	}
}

// A worker that a page took over reaches nothing but the guard: not the
// data directory (a signing key in it), not a server on this machine by
// its address (neither a public-playing 127.0.0.1 nor a private
// 127.0.0.2), not a name server. The same probe without bubblewrap reads
// the key — which is why such a fetch needs a person's approval — and its
// page says it ran unsandboxed.
func TestAWorkerReachesNeitherTheDataDirectoryNorTheNetwork(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	data := t.TempDir()
	key := filepath.Join(data, "keys", "signing.key")
	require.NoError(t, os.MkdirAll(filepath.Dir(key), 0o700))
	require.NoError(t, os.WriteFile(key, []byte("secret"), 0o600))
	public := serveOn(t, "127.0.0.1", "<p>public</p>")
	private := serveOn(t, "127.0.0.2", "<p>admin</p>")
	q := url.Values{"read": {key, "/bin/sh", caBundle}, "dial": {public.Listener.Addr().String(), private.Listener.Addr().String()},
		"lookup": {"example.com"}}
	probe := "http://probe.invalid/?" + q.Encode()
	f := &Fetcher{}
	lim := backend.Limits{Timeout: 30 * time.Second, MemoryBytes: 256 << 20}

	page, err := f.Fetch(context.Background(), webhost.Grant{}, web.Request{URL: probe}, lim, true)
	require.NoError(t, err)
	require.True(t, page.Sandboxed)
	require.Contains(t, page.Enforced, "rlimit data")
	var got map[string]string
	require.NoError(t, json.Unmarshal(page.Body, &got))
	require.Empty(t, got["read /bin/sh"], "the system is readable: the probe reads")
	if _, err := os.Stat(caBundle); err == nil {
		require.Empty(t, got["read "+caBundle], "the system's certificates are there for https")
	}
	require.Contains(t, got["read "+key], "no such file or directory")
	for _, a := range q["dial"] {
		require.NotEmpty(t, got["dial "+a], "the worker dialled %s itself", a)
	}
	require.NotEmpty(t, got["lookup example.com"])
	require.Zero(t, public.hits.Load()+private.hits.Load())

	page, err = f.Fetch(context.Background(), webhost.Grant{}, web.Request{URL: probe}, lim, false)
	require.NoError(t, err)
	require.False(t, page.Sandboxed, "the record says it ran unsandboxed")
	require.NoError(t, json.Unmarshal(page.Body, &got))
	require.Empty(t, got["read "+key], "unsandboxed, the worker can read what the user can")
}

// publicNet plays the internet on 127.0.0.1 (every other special address
// keeps its class) and resolves *.test names from a table.
func publicNet(names map[string]string) *web.Net {
	return &web.Net{Resolver: table(names), Special: func(a netip.Addr) (string, bool) {
		if a == netip.MustParseAddr("127.0.0.1") {
			return "", false
		}
		return webhost.Classify(a)
	}}
}

type table map[string]string

func (tb table) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := tb[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// A normal page read in a worker is what it is read here: the same
// response, body and text. A refusal is the guard's, in its words, with
// nothing sent.
func TestAWorkerReadsAPageAsDucklmDoes(t *testing.T) {
	t.Parallel()
	page := `<!doctype html><html><head><title>Notes</title></head><body><nav>Log in</nav><article><h1>Notes</h1>` +
		`<p>Version 2.4 reads web pages in a worker process, which a hostile page can bloat or stall without touching ducklm.</p>` +
		`<p>The worker reaches the web only through ducklm's guard, which checks every host and address.</p></article></body></html>`
	s := serveOn(t, "127.0.0.1", page)
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	n := publicNet(map[string]string{"news.test": "127.0.0.1", "other.test": "127.0.0.1"})
	g := webhost.Grant{}.Add("news.test")
	req := web.Request{URL: "http://news.test:" + port + "/notes"}
	want, err := n.Fetch(context.Background(), g, req)
	require.NoError(t, err)
	wantText := web.Extract(want.Body, want.ContentType, want.FinalURL)

	modes := []bool{false}
	if _, ok, _ := bwrap.Available(); ok {
		modes = append(modes, true)
	}
	for _, sandboxed := range modes {
		f := &Fetcher{Net: n}
		got, err := f.Fetch(context.Background(), g, req, backend.Limits{Timeout: 30 * time.Second}, sandboxed)
		require.NoError(t, err)
		require.Equal(t, sandboxed, got.Sandboxed)
		require.Equal(t, wantText, got.Text)
		require.Empty(t, got.TextError)
		got.FetchedAt, want.FetchedAt = time.Time{}, time.Time{}
		require.Equal(t, want, got.Response)

		_, err = f.Fetch(context.Background(), g, web.Request{URL: "http://other.test:" + port + "/"}, backend.Limits{}, sandboxed)
		var fail *web.Failure
		require.ErrorAs(t, err, &fail)
		require.ErrorIs(t, err, web.ErrNotGranted)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
		require.Contains(t, fail.Error(), "other.test is not an approved host for this step, so no request was sent to it")
	}
	require.Equal(t, int64(1+len(modes)), s.hits.Load())
}

// A worker that answers more than it may (a body past the request's
// largest) is stopped, and the fetch fails saying so: ducklm reads no more
// than the limits it set.
func TestAWorkerThatBreaksItsAnswerIsStopped(t *testing.T) {
	t.Parallel()
	f := &Fetcher{}
	start := time.Now()
	_, err := f.Fetch(context.Background(), webhost.Grant{}, web.Request{URL: "http://liar.invalid/",
		Limits: web.Limits{MaxBytes: 1000}}, backend.Limits{Timeout: time.Minute}, false)
	var fail *web.Failure
	require.ErrorAs(t, err, &fail)
	require.Contains(t, fail.Error(), "the fetch of http://liar.invalid/ was stopped: its worker broke its answer, so it was stopped")
	require.Less(t, time.Since(start), 30*time.Second, "stopped, not waited for")
}

// A cancelled fetch stops its worker at once, parser or not.
func TestACancelledFetchStopsItsWorker(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := (&Fetcher{}).Fetch(ctx, webhost.Grant{}, web.Request{URL: "http://stall.invalid/"}, backend.Limits{Timeout: time.Hour}, false)
	require.Error(t, err)
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
	require.Contains(t, err.Error(), "was cancelled")
	require.Less(t, time.Since(start), 30*time.Second)
}
