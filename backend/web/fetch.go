package web

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/webhost"
)

// Limits bound one fetch.
type Limits struct {
	// Timeout bounds the whole fetch, redirects and body included.
	Timeout time.Duration
	// MaxBytes is the most of the body read; the rest is never read.
	MaxBytes int64
	// MaxRedirects is the most redirects followed: 0 takes the default,
	// a negative number follows none.
	MaxRedirects int
}

// Default and largest limits of a fetch.
const (
	DefaultMaxBytes     = 5 << 20
	LargestMaxBytes     = 256 << 20
	DefaultMaxRedirects = 5
	LargestMaxRedirects = 20
	DefaultTimeout      = 30 * time.Second
)

// Request is one fetch.
type Request struct {
	URL    string
	Method string // GET (default) or POST
	Body   string // POST only
	// ContentType is the POST body's type (default text/plain; charset=utf-8).
	ContentType string
	Limits      Limits
}

// Response is what the server answered, at a time.
type Response struct {
	URL         string    `json:"url"`
	FinalURL    string    `json:"final_url"`
	Method      string    `json:"method"`
	Status      int       `json:"status"`
	StatusText  string    `json:"status_text"`
	ContentType string    `json:"content_type"`
	Redirects   []string  `json:"redirects,omitempty"`
	FetchedAt   time.Time `json:"fetched_at"`
	// Bytes is how much of the body was read; Truncated says there was
	// more, not read.
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
	Body      []byte `json:"-"`
}

// Failure is a fetch that ran and did not get an answer: refused by the
// guard, too many redirects, timed out, unreachable. Its message is a
// sentence for a person; Response holds what is known (the redirects
// followed so far).
type Failure struct {
	Response Response
	TimedOut bool
	Err      error
}

// Error implements error.
func (f *Failure) Error() string { return backend.ErrorMessage(f.Err) }

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Err }

// Fetch performs req for a step granted g. An error that is not a *Failure
// means the request itself is not valid (bad URL, method, limits).
func (n *Net) Fetch(ctx context.Context, g webhost.Grant, req Request) (Response, error) {
	u, host, err := webhost.ParseURL(req.URL)
	if err != nil {
		return Response{}, err
	}
	method := strings.ToUpper(strings.TrimSpace(req.Method))
	switch method {
	case "":
		method = http.MethodGet
	case http.MethodGet, http.MethodPost:
	default:
		return Response{}, backend.Errorf(backend.EINVALID, "the method %q is not GET or POST", req.Method)
	}
	if method == http.MethodGet && req.Body != "" {
		return Response{}, backend.Errorf(backend.EINVALID, "a GET has no body; use POST to send one")
	}
	lim := req.Limits
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultTimeout
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultMaxBytes
	}
	switch {
	case lim.MaxRedirects == 0:
		lim.MaxRedirects = DefaultMaxRedirects
	case lim.MaxRedirects < 0:
		lim.MaxRedirects = 0
	}
	resp := Response{URL: u.String(), FinalURL: u.String(), Method: method, FetchedAt: time.Now().UTC()}
	fail := func(err error) (Response, error) {
		f := &Failure{Response: resp, Err: err}
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			f.TimedOut = true
			f.Err = backend.Wrap(err, backend.ELIMIT, "the fetch of %s did not finish within its time limit of %s", resp.FinalURL, lim.Timeout)
		} else if backend.ErrorCode(err) == backend.EINTERNAL {
			f.Err = backend.Wrap(err, backend.EUNAVAILABLE, "the fetch of %s failed: %s", resp.FinalURL, errorText(err))
		}
		return resp, f
	}
	// Refuse before anything is sent: the dialer would too, but this says
	// so without even a lookup.
	if err := n.Check(g, host); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()

	transport := &http.Transport{
		Proxy: nil, // never the environment's proxy: the guard is the way out
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return n.dial(ctx, g, network, addr)
		},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    lim.Timeout,
		ResponseHeaderTimeout:  lim.Timeout,
		MaxResponseHeaderBytes: 1 << 20,
		DisableCompression:     false,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			resp.Redirects = append(resp.Redirects, next.URL.String())
			resp.FinalURL = next.URL.String()
			if len(via) > lim.MaxRedirects {
				return backend.Errorf(backend.ELIMIT, "%s redirected more than %d times; the last redirect, to %s, was not followed",
					resp.URL, lim.MaxRedirects, next.URL)
			}
			if next.URL.Scheme != "http" && next.URL.Scheme != "https" {
				return backend.Errorf(backend.EINVALID, "a redirect leads to %s, which is not http or https", next.URL)
			}
			return n.Check(g, next.URL.Hostname())
		},
	}
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return Response{}, backend.Wrap(err, backend.EINVALID, "the request to %s cannot be made", u)
	}
	if method == http.MethodPost {
		ct := req.ContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		hr.Header.Set("Content-Type", ct)
	}
	hr.Header.Set("User-Agent", "ducklm web_fetch")
	hr.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8")
	r, err := client.Do(hr)
	if err != nil {
		var be *backend.Error
		if errors.As(err, &be) {
			return fail(be) // the guard's or a redirect's sentence
		}
		return fail(err)
	}
	defer r.Body.Close()
	resp.FinalURL = r.Request.URL.String()
	resp.Status, resp.StatusText = r.StatusCode, http.StatusText(r.StatusCode)
	resp.ContentType = r.Header.Get("Content-Type")
	data, err := io.ReadAll(io.LimitReader(r.Body, lim.MaxBytes+1))
	if int64(len(data)) > lim.MaxBytes {
		data, resp.Truncated = data[:lim.MaxBytes], true
		err = nil // the rest is never read
	}
	resp.Body, resp.Bytes = data, int64(len(data))
	if err != nil {
		return fail(err)
	}
	return resp, nil
}
