package ollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	"ducklm/backend"
)

// Client talks to one Ollama server at a time. It is safe for concurrent
// use, SetHost included: the runtime, the model list, the memory embedder
// and the settings screen share one Client, so a new host reaches them all.
type Client struct {
	ep      *endpoint // shared with every copy WithTimeout makes
	timeout time.Duration
}

// endpoint is where a Client and its copies send their calls. The target is
// swapped whole, so a call sees one host from start to end (and its error
// names that host) while another goroutine moves the client elsewhere.
type endpoint struct {
	hc     *http.Client
	target atomic.Pointer[target]
}

// target is one Ollama server.
type target struct {
	api  *api.Client
	host *url.URL
}

// New returns a client for the Ollama server at host. A nil hc gets a client
// whose dial gives up after a few seconds but whose requests have no overall
// deadline: loading a large model before the first token can take minutes,
// so deadlines belong to the caller's context or to WithTimeout.
func New(host *url.URL, hc *http.Client) *Client {
	if hc == nil {
		hc = defaultHTTPClient()
	}
	c := &Client{ep: &endpoint{hc: hc}}
	c.SetHost(host)
	return c
}

// SetHost points the client, and every copy made from it, at another Ollama
// server. Calls already in flight finish with the host they started with;
// every call that starts afterwards goes to the new one.
func (c *Client) SetHost(host *url.URL) {
	h := *host
	c.ep.target.Store(&target{api: api.NewClient(&h, c.ep.hc), host: &h})
}

// CloseIdle closes the client's idle connections: call it when done with a
// client made for one check (a host being tested), so its pool goes too.
func (c *Client) CloseIdle() { c.ep.hc.CloseIdleConnections() }

// current is the server a call starting now talks to.
func (c *Client) current() *target { return c.ep.target.Load() }

// FromEnv returns a client for OLLAMA_HOST, read the way Ollama itself reads
// it (http://127.0.0.1:11434 when unset).
func FromEnv() *Client {
	return New(envconfig.Host(), nil)
}

// WithTimeout returns a copy of c whose calls each give up after d (0 means
// no limit of its own). A ChatRequest's Timeout overrides it for that chat.
func (c *Client) WithTimeout(d time.Duration) *Client {
	cp := *c
	cp.timeout = d
	return &cp
}

// Host returns the server's base URL, e.g. "http://127.0.0.1:11434".
func (c *Client) Host() string {
	return c.current().host.String()
}

// Model is one model installed in Ollama, as /api/tags lists it.
type Model struct {
	Name          string    `json:"name"`          // e.g. "qwen2.5:7b"
	Size          int64     `json:"size"`          // bytes on disk
	Family        string    `json:"family"`        // e.g. "qwen2"
	ParameterSize string    `json:"parameterSize"` // e.g. "7.6B"
	Quantization  string    `json:"quantization"`  // e.g. "Q4_K_M"
	Modified      time.Time `json:"modified"`
}

// Version returns the server's version string.
func (c *Client) Version(ctx context.Context) (string, error) {
	t := c.current()
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	v, err := t.api.Version(ctx)
	if err != nil {
		return "", t.classify(ctx, err, call{op: opVersion})
	}
	return v, nil
}

// Models lists the installed models, most recently modified first (the
// order Ollama returns).
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	t := c.current()
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	list, err := t.api.List(ctx)
	if err != nil {
		return nil, t.classify(ctx, err, call{op: opList})
	}
	models := make([]Model, 0, len(list.Models))
	for _, m := range list.Models {
		models = append(models, Model{
			Name:          m.Name,
			Size:          m.Size,
			Family:        m.Details.Family,
			ParameterSize: m.Details.ParameterSize,
			Quantization:  m.Details.QuantizationLevel,
			Modified:      m.ModifiedAt,
		})
	}
	return models, nil
}

// Embed returns one vector per input, in order, computed by model.
func (c *Client) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	if model == "" {
		return nil, backend.Errorf(backend.EINVALID, "no embedding model was named")
	}
	if len(inputs) == 0 {
		return [][]float32{}, nil
	}
	t := c.current()
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	resp, err := t.api.Embed(ctx, &api.EmbedRequest{Model: model, Input: inputs})
	if err != nil {
		return nil, t.classify(ctx, err, call{op: opEmbed, model: model})
	}
	if len(resp.Embeddings) != len(inputs) {
		return nil, backend.Errorf(backend.EINTERNAL,
			"Ollama returned %d embeddings from %s for %d inputs", len(resp.Embeddings), model, len(inputs))
	}
	return resp.Embeddings, nil
}

// errCallTimeout is the cause of a context ended by the client's own timeout,
// so the error can say which limit ran out.
type errCallTimeout struct{ d time.Duration }

func (e errCallTimeout) Error() string { return "the call's timeout of " + e.d.String() + " ran out" }

// callContext bounds one call by override, else by the client's timeout.
func (c *Client) callContext(ctx context.Context, override time.Duration) (context.Context, context.CancelFunc) {
	d := c.timeout
	if override > 0 {
		d = override
	}
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, errCallTimeout{d})
}

func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: t}
}

// ParseHost reads a host the way OLLAMA_HOST is read: "host", "host:port" or
// a URL; the scheme defaults to http and the port to 11434. What cannot name
// an Ollama server is refused with a sentence that says why and what to type.
func ParseHost(h string) (*url.URL, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return nil, backend.Errorf(backend.EINVALID, "the Ollama host is empty; %s", hostExample)
	}
	refuse := func(why string, args ...any) (*url.URL, error) {
		return nil, backend.Errorf(backend.EINVALID, "%q is not an Ollama host: %s; %s", h, fmt.Sprintf(why, args...), hostExample)
	}
	if strings.ContainsAny(h, " \t\r\n") {
		return refuse("it has a space in it")
	}
	raw := h
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "port") {
			return refuse("the port is not a number")
		}
		return refuse("it is not a host, host:port or http://host:port")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return refuse("Ollama speaks http or https, not %s", u.Scheme)
	case u.User != nil:
		return refuse("ducklm sends no user name or password to Ollama")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return refuse("a host has no query or fragment")
	case u.Hostname() == "":
		return refuse("it names no machine")
	}
	if p := u.Port(); p == "" {
		u.Host = net.JoinHostPort(u.Hostname(), "11434")
	} else if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return refuse("the port %s is not between 1 and 65535", p)
	}
	return u, nil
}

const hostExample = "type host:port, e.g. 127.0.0.1:11434"
