package ollama

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	"ducklm/backend"
)

// Client talks to one Ollama server. It is safe for concurrent use.
type Client struct {
	api     *api.Client
	host    *url.URL
	timeout time.Duration
}

// New returns a client for the Ollama server at host. A nil hc gets a client
// whose dial gives up after a few seconds but whose requests have no overall
// deadline: loading a large model before the first token can take minutes,
// so deadlines belong to the caller's context or to WithTimeout.
func New(host *url.URL, hc *http.Client) *Client {
	if hc == nil {
		hc = defaultHTTPClient()
	}
	h := *host
	return &Client{api: api.NewClient(&h, hc), host: &h}
}

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
	return c.host.String()
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
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	v, err := c.api.Version(ctx)
	if err != nil {
		return "", c.classify(ctx, err, call{op: opVersion})
	}
	return v, nil
}

// Models lists the installed models, most recently modified first (the
// order Ollama returns).
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	list, err := c.api.List(ctx)
	if err != nil {
		return nil, c.classify(ctx, err, call{op: opList})
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
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	resp, err := c.api.Embed(ctx, &api.EmbedRequest{Model: model, Input: inputs})
	if err != nil {
		return nil, c.classify(ctx, err, call{op: opEmbed, model: model})
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
// a URL; the scheme defaults to http and the port to 11434.
func ParseHost(h string) (*url.URL, error) {
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil || u.Host == "" {
		return nil, backend.Errorf(backend.EINVALID, "%q is not an Ollama host (expected host, host:port or http://host:port)", h)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), "11434")
	}
	return u, nil
}
