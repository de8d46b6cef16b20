package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"ducklm/backend/cli"
	"ducklm/backend/service"
)

// servingLine is the one line `ducklm serve` prints to stdout.
var servingLine = regexp.MustCompile(`^ducklm serving on (http://127\.0\.0\.1:\d+/)\?token=([0-9a-f]{32})$`)

// lockedBuffer collects output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serving is a `ducklm serve` running in this process.
type serving struct {
	url, token string
	// mcp is the MCP endpoint's address, from the second line.
	mcp    string
	stderr *lockedBuffer
	stop   context.CancelFunc
	done   chan struct{} // closed when the command has returned
	exit   int
}

// wait stops the server and returns its exit code.
func (s *serving) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	s.stop()
	select {
	case <-s.done:
		return s.exit
	case <-time.After(within):
		t.Fatalf("serve did not stop within %s of its context ending; stderr:\n%s", within, s.stderr)
		return -1
	}
}

func serve(t *testing.T, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &serving{stderr: &lockedBuffer{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.exit = cli.Run(cli.Env{Ctx: ctx, Stdout: pw, Stderr: s.stderr, Stdin: strings.NewReader("")}, append([]string{"serve"}, args...))
		pw.Close()
	}()
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		require.True(t, ok, "serve exited without printing its address: %s", s.stderr)
		m := servingLine.FindStringSubmatch(line)
		require.NotNil(t, m, "unexpected first line %q", line)
		s.url, s.token = m[1], m[2]
		select {
		case s.mcp = <-lines:
		case <-time.After(5 * time.Second):
		}
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("serve printed no address within 30s: %s", s.stderr)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	})
	return s
}

func assetsWithIndex(t *testing.T) {
	cli.SetAssets(fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>ducklm</title>")}})
	t.Cleanup(func() { cli.SetAssets(nil) })
}

func TestServeServesTheAPIAndStopsCleanly(t *testing.T) {
	dir := home(t)
	assetsWithIndex(t)
	s := serve(t)

	resp, err := http.Get(s.url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "<title>ducklm</title>")

	call := func(token string) (int, []byte) {
		req, err := http.NewRequest(http.MethodPost, s.url+"api/call/Overview", strings.NewReader("[]"))
		require.NoError(t, err)
		req.Header.Set("X-Ducklm-Token", token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, data
	}
	status, data := call(s.token)
	require.Equal(t, http.StatusOK, status, string(data))
	var o service.Overview
	require.NoError(t, json.Unmarshal(data, &o))
	require.Equal(t, dir, o.DataDir)
	status, _ = call(strings.Repeat("0", 32))
	require.Equal(t, http.StatusUnauthorized, status)

	// A second server (or the window) on the same data directory is refused.
	r := ducklm(t, "serve")
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stderr, "already running")

	require.Equal(t, cli.ExitOK, s.wait(t, 15*time.Second), s.stderr.String())
	require.Contains(t, s.stderr.String(), "stopping")
	lock, err := service.AcquireLock(dir)
	require.NoError(t, err, "serve released the data directory")
	lock.Release()
	_, err = http.Get(s.url)
	require.Error(t, err, "the listener is closed")
}

func TestServeStopsWithAnOpenEventStream(t *testing.T) {
	home(t)
	assetsWithIndex(t)
	s := serve(t)
	resp, err := http.Get(s.url + "api/events?token=" + s.token)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// An event stream never ends by itself; shutting down must end it.
	start := time.Now()
	require.Equal(t, cli.ExitOK, s.wait(t, 60*time.Second), s.stderr.String())
	require.Less(t, time.Since(start), 30*time.Second)
}

func TestServeWithoutTheFrontendSaysHowToBuildIt(t *testing.T) {
	home(t)
	cli.SetAssets(fstest.MapFS{".gitkeep": {}})
	t.Cleanup(func() { cli.SetAssets(nil) })
	r := ducklm(t, "serve")
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stderr, "no index.html")
	require.Contains(t, r.stderr, "run make build")
	require.Empty(t, r.stdout)

	cli.SetAssets(nil)
	r = ducklm(t, "serve")
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stderr, "run make build")
}

func TestServeRefusesBadArguments(t *testing.T) {
	home(t)
	assetsWithIndex(t)
	r := ducklm(t, "serve", "--addr", "8080")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "--addr is HOST:PORT")
	require.Contains(t, r.stderr, "usage: ducklm serve")

	r = ducklm(t, "serve", "extra")
	require.Equal(t, cli.ExitUsage, r.code)

	r = ducklm(t, "serve", "--help")
	require.Equal(t, cli.ExitOK, r.code)
	require.Contains(t, r.stdout, "usage: ducklm serve")
}

func TestServeRefusesAddressesBeyondThisMachineUnlessTold(t *testing.T) {
	dir := home(t)
	assetsWithIndex(t)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0"} {
		r := ducklm(t, "serve", "--addr", addr)
		require.Equal(t, cli.ExitUsage, r.code, "--addr %s: %s", addr, r.stderr)
		require.Contains(t, r.stderr, "ducklm serve listens only on this machine: "+addr+" would let every machine", addr)
		require.Contains(t, r.stderr, "--expose-to-network")
		require.Empty(t, r.stdout)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "a refused address opens nothing")

	// Told, it listens everywhere, and still answers only the names of
	// this machine: the Host allow-list stays on.
	s := serve(t, "--addr", "0.0.0.0:0", "--expose-to-network")
	require.Contains(t, s.stderr.String(), "beyond this machine (--expose-to-network)")
	get := func(host string) int {
		req, err := http.NewRequest(http.MethodGet, s.url, nil)
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, get(""))
	require.Equal(t, http.StatusMisdirectedRequest, get("attacker.example"))
	require.Equal(t, cli.ExitOK, s.wait(t, 15*time.Second), s.stderr.String())
}

func TestServeTakesTheTokenInTheQueryOnlyForTheEventStream(t *testing.T) {
	home(t)
	assetsWithIndex(t)
	s := serve(t)
	resp, err := http.Post(s.url+"api/call/Overview?token="+s.token, "application/json", strings.NewReader("[]"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a call's token belongs in its header")
	require.Equal(t, cli.ExitOK, s.wait(t, 15*time.Second), s.stderr.String())
}

// The MCP endpoint of ducklm serve answers an MCP client that carries the
// token in the endpoint's path or in a header, and nothing without it or
// from a page of another origin.
func TestServeAnswersMCPClientsWithTheToken(t *testing.T) {
	home(t)
	assetsWithIndex(t)
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	s := serve(t)
	require.Equal(t, "MCP endpoint (streamable HTTP): "+s.url+"mcp/"+s.token, s.mcp)
	endpoint := strings.TrimPrefix(s.mcp, "MCP endpoint (streamable HTTP): ")

	connect := func(endpoint string, client *http.Client) (*sdk.ClientSession, error) {
		c := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil)
		return c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client, MaxRetries: -1}, nil)
	}
	cs, err := connect(endpoint, nil)
	require.NoError(t, err)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_world", Arguments: map[string]any{"example": "branching_grid", "name": "over http"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.NoError(t, cs.Close())

	withHeader := &http.Client{Transport: headerTransport{"Authorization", "Bearer " + s.token}}
	cs, err = connect(s.url+"mcp", withHeader)
	require.NoError(t, err)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 13)
	require.NoError(t, cs.Close())

	_, err = connect(s.url+"mcp", nil)
	require.Error(t, err, "no token")
	_, err = connect(s.url+"mcp/"+strings.Repeat("0", 32), nil)
	require.Error(t, err, "a wrong token")
	_, err = connect(endpoint, &http.Client{Transport: headerTransport{"X-Ducklm-Token", strings.Repeat("0", 32)}})
	require.Error(t, err, "a header that names another token than the path")

	post := func(url string, header ...string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, post(s.url+"mcp"))
	require.Equal(t, http.StatusForbidden, post(endpoint, "Origin", "http://evil.example"), "a page of another origin")
	require.Equal(t, cli.ExitOK, s.wait(t, 15*time.Second), s.stderr.String())
	require.Contains(t, ok(t, "world", "ls").stdout, "over http")
}

// headerTransport adds one header to every request.
type headerTransport struct{ name, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}
