package ollama_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
)

func names(ms []ollama.Model) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

func TestSetHostMovesEveryCallAndEveryCopy(t *testing.T) {
	t.Parallel()
	a := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"alpha:1b"}})
	b := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"beta:2b"}})
	b.OnChat(func(api.ChatRequest) ollamatest.Reply { return ollamatest.Reply{Content: "from b"} })
	c := ollama.New(a.URL(), nil)
	timed := c.WithTimeout(time.Minute) // a copy made before the switch, as the critic and coder hold

	ms, err := c.Models(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"alpha:1b"}, names(ms))

	c.SetHost(b.URL())
	require.Equal(t, b.URL().String(), c.Host())
	require.Equal(t, b.URL().String(), timed.Host(), "a copy follows the host of the client it was made from")

	ms, err = timed.Models(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"beta:2b"}, names(ms))
	resp, err := timed.Chat(context.Background(), ollama.ChatRequest{Model: "beta:2b"})
	require.NoError(t, err)
	require.Equal(t, "from b", resp.Content)
	vecs, err := c.Embed(context.Background(), "beta:2b", []string{"x"})
	require.NoError(t, err)
	require.Len(t, vecs, 1)
	require.Len(t, b.Chats(), 1)
	require.Len(t, a.Chats(), 0)
}

func TestSetHostErrorsNameTheHostTheCallUsed(t *testing.T) {
	t.Parallel()
	a := ollamatest.NewServer(t)
	c := ollama.New(a.URL(), nil)
	dead, err := ollama.ParseHost("127.0.0.1:1")
	require.NoError(t, err)
	c.SetHost(dead)
	_, err = c.Models(context.Background())
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "Ollama is not reachable at http://127.0.0.1:1 ")
}

// TestSetHostUnderConcurrentCalls is for the race detector: calls in flight
// on one host while another goroutine switches it must neither race nor
// fail, and each call reaches one of the two servers whole.
func TestSetHostUnderConcurrentCalls(t *testing.T) {
	t.Parallel()
	a := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"alpha:1b"}})
	b := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"beta:2b"}})
	c := ollama.New(a.URL(), nil)
	hosts := []*url.URL{a.URL(), b.URL()}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c.SetHost(hosts[i%2])
		}
	})
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				ms, err := c.WithTimeout(5 * time.Second).Models(context.Background())
				if err != nil {
					errs <- err
					return
				}
				if n := names(ms); len(n) != 1 || (n[0] != "alpha:1b" && n[0] != "beta:2b") {
					errs <- backend.Errorf(backend.EINTERNAL, "unexpected models %v", n)
					return
				}
				_ = c.Host()
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestParseHostReadsWhatOllamaHostAccepts(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1":                  "http://127.0.0.1:11434",
		"localhost:11500":            "http://localhost:11500",
		" gpu-box:8080 ":             "http://gpu-box:8080",
		"https://ollama.example.com": "https://ollama.example.com:11434",
		"http://[::1]:11434":         "http://[::1]:11434",
		"http://10.0.0.5:11434/":     "http://10.0.0.5:11434/",
	} {
		u, err := ollama.ParseHost(in)
		require.NoError(t, err, in)
		require.Equal(t, want, u.String(), in)
	}
}

func TestParseHostRefusesWithASentence(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                      "the Ollama host is empty; type host:port, e.g. 127.0.0.1:11434",
		"local host":            `"local host" is not an Ollama host: it has a space in it; type host:port, e.g. 127.0.0.1:11434`,
		"ftp://box:21":          `"ftp://box:21" is not an Ollama host: Ollama speaks http or https, not ftp; type host:port, e.g. 127.0.0.1:11434`,
		"127.0.0.1:99999":       `"127.0.0.1:99999" is not an Ollama host: the port 99999 is not between 1 and 65535; type host:port, e.g. 127.0.0.1:11434`,
		"127.0.0.1:port":        `"127.0.0.1:port" is not an Ollama host: the port is not a number; type host:port, e.g. 127.0.0.1:11434`,
		"http://":               `"http://" is not an Ollama host: it names no machine; type host:port, e.g. 127.0.0.1:11434`,
		"http://box:1?x=1":      `"http://box:1?x=1" is not an Ollama host: a host has no query or fragment; type host:port, e.g. 127.0.0.1:11434`,
		"http://user:pw@box:80": `"http://user:pw@box:80" is not an Ollama host: ducklm sends no user name or password to Ollama; type host:port, e.g. 127.0.0.1:11434`,
	} {
		_, err := ollama.ParseHost(in)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), in)
		require.Equal(t, want, backend.ErrorMessage(err), in)
	}
}
