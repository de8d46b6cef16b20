package web_test

import (
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTheProxyPassesOnlyGrantedHosts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	page := serve(t, "127.0.0.1", html("<p>through the proxy</p>"))
	base := f.name("news.test", page)
	other := serve(t, "127.0.0.1", html("<p>never</p>"))
	otherBase := f.name("other.test", other)
	private := serve(t, "127.0.0.2", html("<p>admin</p>"))

	p, err := f.net.StartProxy(grant("news.test"))
	require.NoError(t, err)
	t.Cleanup(p.Close)
	proxyURL, _ := url.Parse("http://" + p.Addr())
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}

	get := func(u string) (int, string) {
		resp, err := client.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get(base + "/")
	require.Equal(t, 200, code)
	require.Contains(t, body, "through the proxy")

	code, body = get(otherBase + "/")
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "other.test is not an approved host")
	code, _ = get("http://127.0.0.2:" + private.port + "/")
	require.Equal(t, http.StatusForbidden, code)
	require.Zero(t, other.hits.Load())
	require.Zero(t, private.hits.Load())

	// A tunnel (as https and wss use) is refused the same way.
	req, _ := http.NewRequest(http.MethodConnect, "http://"+p.Addr(), nil)
	req.Host = "other.test:" + other.port
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Zero(t, other.hits.Load())

	require.Equal(t, []string{"127.0.0.2", "other.test"}, p.Refused())
}

func TestTheProxyTunnelsToAGrantedHost(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tls := serveTLS(t)
	base := f.name("secure.test", tls)
	p, err := f.net.StartProxy(grant("secure.test"))
	require.NoError(t, err)
	t.Cleanup(p.Close)
	proxyURL, _ := url.Parse("http://" + p.Addr())
	tr := tls.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(proxyURL)
	tr.TLSClientConfig.ServerName = "example.com" // httptest's certificate names example.com
	client := &http.Client{Timeout: time.Minute, Transport: tr}
	resp, err := client.Get("https" + base[len("http"):] + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(b), "secure page")
	require.Equal(t, int64(1), tls.hits.Load())
}
