package web_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/web"
)

// noLookups fails the test when a worker's Net looks a name up: through a
// tunnel the guard resolves, never the worker.
type noLookups struct{ t *testing.T }

func (r noLookups) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.t.Errorf("the worker looked up %s itself", host)
	return nil, &net.DNSError{Err: "no lookups here", Name: host}
}

// tunnels serves the guard's tunnels for f's Net on a unix socket and
// returns a Net that reaches the web only through them, as a worker does.
func tunnels(t *testing.T, f fixture, g ...string) (*web.Net, *web.Proxy) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "net.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	p := f.net.ServeTunnels(ln, grant(g...))
	t.Cleanup(p.Close)
	return &web.Net{Via: sock, Resolver: noLookups{t}}, p
}

// A fetch through the guard's tunnels (as the web worker makes it) gets what
// a fetch in ducklm gets, and meets the same refusals, in the same words:
// the host grant, the private address found after resolution (in the guard:
// the worker resolves nothing), a redirect to an ungranted address. No
// refused request reaches its server.
func TestAFetchThroughTheGuardsTunnelsMeetsTheSameChecks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := serve(t, "127.0.0.1", html(articlePage))
	base := f.name("news.test", s)
	private := serve(t, "127.0.0.2", html("<html><body><p>secret</p></body></html>"))
	rebind := f.name("rebind.test", private)
	target := "http://127.0.0.2:" + private.port + "/admin"
	redirect := serve(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) })
	evil := f.name("evil.test", redirect)
	worker, proxy := tunnels(t, f, "news.test", "rebind.test", "evil.test")
	ctx := context.Background()

	here, err := f.net.Fetch(ctx, grant("news.test"), web.Request{URL: base + "/notes"})
	require.NoError(t, err)
	there, err := worker.Fetch(ctx, grant("news.test"), web.Request{URL: base + "/notes"})
	require.NoError(t, err)
	here.FetchedAt, there.FetchedAt = time.Time{}, time.Time{}
	require.Equal(t, here, there)

	// Granted in the worker's own copy of the grant, not by the guard's:
	// the guard refuses, in its own words.
	other := serve(t, "127.0.0.1", html("<p>never</p>"))
	otherBase := f.name("other.test", other)
	_, err = worker.Fetch(ctx, grant("other.test"), web.Request{URL: otherBase + "/"})
	var fail *web.Failure
	require.ErrorAs(t, err, &fail)
	require.ErrorIs(t, err, web.ErrNotGranted)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.Contains(t, fail.Error(), "other.test is not an approved host for this step, so no request was sent to it")
	require.Zero(t, other.hits.Load())

	_, err = worker.Fetch(ctx, grant("rebind.test"), web.Request{URL: rebind + "/"})
	require.ErrorIs(t, err, web.ErrPrivateAddress)
	require.Contains(t, err.Error(), "rebind.test resolved to 127.0.0.2, a loopback address, which needs its own approval")

	_, err = worker.Fetch(ctx, grant("evil.test", "127.0.0.2"), web.Request{URL: evil + "/"})
	require.ErrorIs(t, err, web.ErrNotGranted, "the guard's grant, not the worker's, decides")
	require.Contains(t, err.Error(), "127.0.0.2 is not an approved host")
	require.Zero(t, private.hits.Load(), "no request reached the loopback address")
	require.Equal(t, []string{"127.0.0.2", "other.test", "rebind.test"}, proxy.Refused())
}

// The tunnels carry only tunnels: a plain proxy request, which the guard
// would make and read itself, is refused, so ducklm never parses a page for
// the worker.
func TestTheTunnelsCarryNoPlainRequests(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := serve(t, "127.0.0.1", html("<p>never</p>"))
	base := f.name("news.test", s)
	sock := filepath.Join(t.TempDir(), "net.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	p := f.net.ServeTunnels(ln, grant("news.test"))
	t.Cleanup(p.Close)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
		Proxy: func(*http.Request) (*url.URL, error) { return url.Parse("http://guard") },
	}}
	resp, err := client.Get(base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	require.Zero(t, s.hits.Load())
}

// A hanging server ends a tunnelled fetch at its time limit, as it ends
// one made here.
func TestATunnelledFetchEndsAtItsTimeLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := serve(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	base := f.name("slow.test", s)
	worker, _ := tunnels(t, f, "slow.test")
	_, err := worker.Fetch(context.Background(), grant("slow.test"), web.Request{URL: base + "/",
		Limits: web.Limits{Timeout: 300 * time.Millisecond}})
	var fail *web.Failure
	require.ErrorAs(t, err, &fail)
	require.True(t, fail.TimedOut)
	require.Contains(t, fail.Error(), "did not finish within its time limit of 300ms")
}

// https goes through a tunnel too: the worker makes the TLS handshake
// itself, end to end, and checks the certificate against the system's
// roots (httptest's is not among them, so the check refuses it).
func TestATunnelCarriesTLSEndToEnd(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := serveTLS(t)
	base := f.name("secure.test", s)
	worker, _ := tunnels(t, f, "secure.test")
	_, err := worker.Fetch(context.Background(), grant("secure.test"), web.Request{URL: "https" + base[len("http"):] + "/"})
	var fail *web.Failure
	require.ErrorAs(t, err, &fail)
	require.Contains(t, fail.Error(), "certificate", "the handshake reached the server and its certificate was checked")
	require.Zero(t, s.hits.Load(), "no request without a trusted certificate")
}
