package web_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/web"
	"ducklm/backend/webhost"
)

// publicAddr stands for a public address in these tests: the pages they
// fetch are served on loopback (no test contacts an outside address), so
// 127.0.0.1 plays the internet and every other special address, 127.0.0.2
// included, keeps its real class.
var publicAddr = netip.MustParseAddr("127.0.0.1")

// resolver answers *.test names from a table and counts its look-ups.
type resolver struct {
	names   map[string]netip.Addr
	lookups atomic.Int64
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	if a, ok := r.names[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

type fixture struct {
	net *web.Net
	res *resolver
}

func setup(t *testing.T) fixture {
	t.Helper()
	res := &resolver{names: map[string]netip.Addr{}}
	n := &web.Net{Resolver: res, Special: func(a netip.Addr) (string, bool) {
		if a == publicAddr {
			return "", false
		}
		return webhost.Classify(a)
	}}
	return fixture{net: n, res: res}
}

// server is a test server on addr ("127.0.0.1" plays a public host) that
// counts the requests it gets.
type server struct {
	*httptest.Server
	hits atomic.Int64
	port string
}

func serve(t *testing.T, addr string, h http.HandlerFunc) *server {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	require.NoError(t, err)
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	return s
}

// name makes host resolve to the server's address and returns its URL base.
func (f fixture) name(host string, s *server) string {
	a := netip.MustParseAddrPort(s.Listener.Addr().String())
	f.res.names[host] = a.Addr()
	return "http://" + host + ":" + s.port
}

func grant(hosts ...string) webhost.Grant {
	var g webhost.Grant
	for _, h := range hosts {
		g = g.Add(h)
	}
	return g
}

func html(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}
}

func contains(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		require.True(t, strings.Contains(s, p), "%q is not in %q", p, s)
	}
}

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }

type atomic64 struct{ v atomic.Int64 }

func (a *atomic64) add(n int64) { a.v.Add(n) }
func (a *atomic64) load() int64 { return a.v.Load() }

// serveTLS is serve with TLS (httptest's certificate, for example.com).
func serveTLS(t *testing.T) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		html("<p>secure page</p>")(w, r)
	}))
	s.StartTLS()
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}
