package web_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/web"
	"ducklm/backend/webhost"
)

const articlePage = `<!doctype html><html><head><title>Release notes 2.4 | Duck News</title></head><body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/about">About us</a> <a href="/login">Log in</a></nav>
<div class="sidebar"><h3>Popular</h3><ul><li><a href="/x">Ten ducks you should know</a></li><li><a href="/y">Subscribe</a></li></ul></div>
<article><h1>Release notes 2.4</h1>
<p>Version 2.4 adds a fetch tool that reads web pages for a task, with time, size and redirect limits, and stores the raw body as a blob.</p>
<p>It also brings a sandboxed browser fallback for pages that need JavaScript, driven through the DevTools protocol inside bubblewrap.</p>
<p>Every request goes only to hosts the user approved; private and loopback addresses need their own approval, checked after resolution.</p>
</article>
<footer>Copyright Duck News. All rights reserved. Cookie settings.</footer>
</body></html>`

func TestFetchExtractsTheArticleText(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := serve(t, "127.0.0.1", html(articlePage))
	base := f.name("news.test", s)

	resp, err := f.net.Fetch(context.Background(), grant("news.test"), web.Request{URL: base + "/notes"})
	require.NoError(t, err)
	require.Equal(t, 200, resp.Status)
	require.Equal(t, "GET", resp.Method)
	require.Equal(t, base+"/notes", resp.FinalURL)
	require.Equal(t, "text/html; charset=utf-8", resp.ContentType)
	require.Equal(t, []byte(articlePage), resp.Body, "the raw body is kept whole")
	require.False(t, resp.Truncated)
	require.WithinDuration(t, time.Now(), resp.FetchedAt, time.Minute)

	text := web.Extract(resp.Body, resp.ContentType, resp.FinalURL)
	require.Equal(t, "article", text.Kind)
	require.Contains(t, text.Title, "Release notes 2.4")
	contains(t, text.Text, "Version 2.4 adds a fetch tool", "sandboxed browser fallback", "checked after resolution")
	for _, chrome := range []string{"Log in", "Ten ducks", "Cookie settings"} {
		require.NotContains(t, text.Text, chrome, "page furniture is not the article")
	}
}

func TestExtractPlainTextAndBinary(t *testing.T) {
	t.Parallel()
	require.Equal(t, web.Text{Text: "a,b\n1,2\n", Kind: "plain"}, web.Extract([]byte("a,b\n1,2\n"), "text/csv", ""))
	require.Equal(t, web.Text{Text: "café", Kind: "plain"}, web.Extract([]byte("caf\xe9"), "text/plain; charset=iso-8859-1", ""))
	require.Equal(t, web.Text{Kind: "none"}, web.Extract([]byte{0x89, 'P', 'N', 'G', 0, 1, 2}, "image/png", ""))
}

func TestFetchFollowsRedirectsUpToTheLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var s *server
	s = serve(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err == nil && n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
			return
		}
		html("<html><body><p>arrived after the hops</p></body></html>")(w, r)
	})
	base := f.name("hops.test", s)
	g := grant("hops.test")

	resp, err := f.net.Fetch(context.Background(), g, web.Request{URL: base + "/hop/3", Limits: web.Limits{MaxRedirects: 3}})
	require.NoError(t, err)
	require.Equal(t, base+"/hop/0", resp.FinalURL)
	require.Equal(t, []string{base + "/hop/2", base + "/hop/1", base + "/hop/0"}, resp.Redirects)

	before := s.hits.Load()
	_, err = f.net.Fetch(context.Background(), g, web.Request{URL: base + "/hop/5", Limits: web.Limits{MaxRedirects: 2}})
	var fail *web.Failure
	require.ErrorAs(t, err, &fail)
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
	require.Contains(t, fail.Error(), "redirected more than 2 times")
	require.Equal(t, int64(3), s.hits.Load()-before, "the redirect past the limit is not followed")
}

func TestRedirectToALoopbackAddressNeedsItsOwnApproval(t *testing.T) {
	t.Parallel()
	f := setup(t)
	private := serve(t, "127.0.0.2", html("<html><body><p>the router's admin page</p></body></html>"))
	target := "http://127.0.0.2:" + private.port + "/admin"
	public := serve(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) })
	base := f.name("evil.test", public)

	// The public host is approved, the loopback one is not.
	_, err := f.net.Fetch(context.Background(), grant("evil.test"), web.Request{URL: base + "/"})
	var fail *web.Failure
	require.ErrorAs(t, err, &fail)
	require.ErrorIs(t, err, web.ErrNotGranted)
	require.Contains(t, fail.Error(), "127.0.0.2 is not an approved host")
	require.Equal(t, []string{target}, fail.Response.Redirects)
	require.Zero(t, private.hits.Load(), "no request reached the loopback address")

	// With the loopback address approved (its URL named it, or the user
	// allowed it), the redirect is followed.
	resp, err := f.net.Fetch(context.Background(), grant("evil.test", "127.0.0.2"), web.Request{URL: base + "/"})
	require.NoError(t, err)
	require.Equal(t, target, resp.FinalURL)
	require.Equal(t, int64(1), private.hits.Load())
}

func TestANameThatResolvesToLoopbackIsRefusedAfterResolution(t *testing.T) {
	t.Parallel()
	f := setup(t)
	private := serve(t, "127.0.0.2", html("<html><body><p>secret</p></body></html>"))
	base := f.name("rebind.test", private) // a granted name whose answer is 127.0.0.2

	_, err := f.net.Fetch(context.Background(), grant("rebind.test"), web.Request{URL: base + "/"})
	require.ErrorIs(t, err, web.ErrPrivateAddress)
	require.Contains(t, err.Error(), "rebind.test resolved to 127.0.0.2, a loopback address, which needs its own approval")
	require.Equal(t, int64(1), f.res.lookups.Load(), "the check is on the resolved address")
	require.Zero(t, private.hits.Load())

	// Likewise a link-local answer (the cloud metadata address).
	f.res.names["meta.test"] = netipMust("169.254.169.254")
	_, err = f.net.Fetch(context.Background(), grant("meta.test"), web.Request{URL: "http://meta.test/latest"})
	require.ErrorIs(t, err, web.ErrPrivateAddress)
	require.Contains(t, err.Error(), "a link-local address")
}

func TestAHostNeverApprovedGetsNoRequest(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := serve(t, "127.0.0.1", html("<p>hi</p>"))
	base := f.name("other.test", s)

	_, err := f.net.Fetch(context.Background(), grant("news.test"), web.Request{URL: base + "/"})
	require.ErrorIs(t, err, web.ErrNotGranted)
	require.Contains(t, err.Error(), "other.test is not an approved host for this step, so no request was sent to it")
	require.Zero(t, s.hits.Load())
	require.Zero(t, f.res.lookups.Load(), "not even a DNS look-up leaves")

	// An empty grant reaches nothing, a literal address included.
	_, err = f.net.Fetch(context.Background(), webhost.Grant{}, web.Request{URL: s.URL})
	require.ErrorIs(t, err, web.ErrNotGranted)
	require.Zero(t, s.hits.Load())
}

func TestTheSizeLimitStopsA1GBBody(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const gb = 1 << 30
	var sent atomic64
	s := serve(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(gb))
		chunk := []byte(strings.Repeat("duck ", 13107)) // 64 KiB
		for n := 0; n < gb; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client stopped reading
			}
			sent.add(int64(len(chunk)))
		}
	})
	base := f.name("big.test", s)
	resp, err := f.net.Fetch(context.Background(), grant("big.test"), web.Request{URL: base + "/",
		Limits: web.Limits{MaxBytes: 1 << 20, Timeout: 2 * time.Minute}})
	require.NoError(t, err)
	require.True(t, resp.Truncated)
	require.Equal(t, int64(1<<20), resp.Bytes)
	require.Len(t, resp.Body, 1<<20)
	s.CloseClientConnections()
	require.Less(t, sent.load(), int64(gb/4), "the body past the limit is never read")
}

func TestAHangingServerEndsAtTheTimeLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	s := serve(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			// Headers and a little, then nothing.
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", "100000")
			_, _ = w.Write([]byte("<html><body><p>start"))
			w.(http.Flusher).Flush()
		}
		hang(w, r)
	})
	base := f.name("slow.test", s)
	for _, path := range []string{"/", "/body"} {
		start := time.Now()
		_, err := f.net.Fetch(context.Background(), grant("slow.test"), web.Request{URL: base + path,
			Limits: web.Limits{Timeout: 300 * time.Millisecond}})
		var fail *web.Failure
		require.ErrorAs(t, err, &fail, path)
		require.True(t, fail.TimedOut, path)
		require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
		require.Contains(t, fail.Error(), "did not finish within its time limit of 300ms")
		require.Less(t, time.Since(start), time.Minute, "bounded by the limit, not by the server")
	}
}

func TestPostSendsItsBody(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := serve(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"method":%q,"type":%q,"body":%q}`, r.Method, r.Header.Get("Content-Type"), b)
	})
	base := f.name("api.test", s)
	resp, err := f.net.Fetch(context.Background(), grant("api.test"), web.Request{URL: base + "/q", Method: "post",
		Body: `{"q":"ducks"}`, ContentType: "application/json"})
	require.NoError(t, err)
	require.Equal(t, "POST", resp.Method)
	require.JSONEq(t, `{"method":"POST","type":"application/json","body":"{\"q\":\"ducks\"}"}`, string(resp.Body))
}

func TestBadRequestsAreRefusedBeforeAnythingIsSent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, c := range []struct {
		req web.Request
		msg string
	}{
		{web.Request{URL: "ftp://news.test/x"}, "is not http or https"},
		{web.Request{URL: "http://user:pw@news.test/"}, "holds a user name or password"},
		{web.Request{URL: "http:///path"}, "names no host"},
		{web.Request{URL: "http://news.test/", Method: "DELETE"}, `the method "DELETE" is not GET or POST`},
		{web.Request{URL: "http://news.test/", Body: "x"}, "a GET has no body"},
	} {
		_, err := f.net.Fetch(context.Background(), grant("news.test"), c.req)
		require.Error(t, err)
		var fail *web.Failure
		require.False(t, errors.As(err, &fail), "a bad request is not a failed fetch")
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
		require.Contains(t, err.Error(), c.msg)
	}
	require.Zero(t, f.res.lookups.Load())
}
