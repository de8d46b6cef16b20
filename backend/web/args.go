package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/webhost"
)

// Args are a web_fetch step's arguments, as its JSON Schema has them.
type Args struct {
	URL            string  `json:"url"`
	Method         string  `json:"method,omitempty"`
	Body           *string `json:"body,omitempty"`
	ContentType    string  `json:"content_type,omitempty"`
	MaxBytes       *int64  `json:"max_bytes,omitempty"`
	MaxRedirects   *int    `json:"max_redirects,omitempty"`
	TimeoutSeconds *int64  `json:"timeout_seconds,omitempty"`
}

// ParseArgs reads a web_fetch step's arguments, refusing unknown fields.
func ParseArgs(raw json.RawMessage) (Args, error) {
	var a Args
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, backend.Wrap(err, backend.EINVALID, "the arguments of web_fetch are not valid")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return a, backend.Errorf(backend.EINVALID, "the arguments of web_fetch hold more than one JSON value")
	}
	if a.URL == "" {
		return a, backend.Errorf(backend.EINVALID, "web_fetch needs a url")
	}
	if _, _, err := webhost.ParseURL(a.URL); err != nil {
		return a, err
	}
	if a.MaxBytes != nil && (*a.MaxBytes < 1 || *a.MaxBytes > LargestMaxBytes) {
		return a, backend.Errorf(backend.EINVALID, "max_bytes must be between 1 and %d", LargestMaxBytes)
	}
	if a.MaxRedirects != nil && (*a.MaxRedirects < 0 || *a.MaxRedirects > LargestMaxRedirects) {
		return a, backend.Errorf(backend.EINVALID, "max_redirects must be between 0 and %d", LargestMaxRedirects)
	}
	if a.TimeoutSeconds != nil && (*a.TimeoutSeconds < 1 || *a.TimeoutSeconds > 86400) {
		return a, backend.Errorf(backend.EINVALID, "timeout_seconds must be between 1 and 86400")
	}
	return a, nil
}

// Plan is what a web step will do, as an approval card shows it: the
// request and the limits it runs under.
type Plan struct {
	URL          string `json:"url"`
	Host         string `json:"host"`
	Method       string `json:"method"`
	BodyBytes    int    `json:"bodyBytes,omitempty"`
	MaxBytes     int64  `json:"maxBytes"`
	MaxRedirects int    `json:"maxRedirects"`
	TimeoutMS    int64  `json:"timeoutMs"`
	// Local names the kind of address the host is by itself ("loopback",
	// "private"…), "" for a name or a public address.
	Local string `json:"local,omitempty"`
	// Browser says the page is rendered in the sandboxed Chromium, its
	// scripts run and its requests to other hosts refused unless allowed.
	Browser bool `json:"browser,omitempty"`
}

// BrowserDefaultTimeout is a browser step's time when neither its args nor
// its step say less.
const BrowserDefaultTimeout = 60 * time.Second

// BrowserPlan is the card of a browser step: its page and time limit; nil
// when its args cannot be read.
func BrowserPlan(raw json.RawMessage, stepTimeout time.Duration) *Plan {
	var a struct {
		URL            string `json:"url"`
		TimeoutSeconds *int64 `json:"timeout_seconds"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return nil
	}
	_, host, err := webhost.ParseURL(a.URL)
	if err != nil {
		return nil
	}
	timeout := BrowserDefaultTimeout
	if a.TimeoutSeconds != nil && *a.TimeoutSeconds > 0 {
		timeout = time.Duration(*a.TimeoutSeconds) * time.Second
	}
	if stepTimeout > 0 {
		timeout = min(timeout, stepTimeout)
	}
	p := Plan{URL: a.URL, Host: host, Method: "GET", TimeoutMS: timeout.Milliseconds(), Browser: true}
	p.Local, _ = webhost.LocalHost(host)
	return &p
}

// Request is the fetch the args ask for, within a step's time limit and
// largest file: the args may ask for less, never more.
func (a Args) Request(stepTimeout time.Duration, fileBytes int64) Request {
	lim := Limits{Timeout: DefaultTimeout, MaxBytes: DefaultMaxBytes, MaxRedirects: DefaultMaxRedirects}
	if stepTimeout > 0 {
		lim.Timeout = min(lim.Timeout, stepTimeout)
	}
	if a.TimeoutSeconds != nil {
		lim.Timeout = time.Duration(*a.TimeoutSeconds) * time.Second
		if stepTimeout > 0 {
			lim.Timeout = min(lim.Timeout, stepTimeout)
		}
	}
	if a.MaxBytes != nil {
		lim.MaxBytes = *a.MaxBytes
	}
	if fileBytes > 0 {
		lim.MaxBytes = min(lim.MaxBytes, fileBytes)
	}
	if a.MaxRedirects != nil {
		lim.MaxRedirects = *a.MaxRedirects
		if lim.MaxRedirects == 0 {
			lim.MaxRedirects = -1
		}
	}
	req := Request{URL: a.URL, Method: a.Method, ContentType: a.ContentType, Limits: lim}
	if a.Body != nil {
		req.Body = *a.Body
	}
	return req
}

// Describe is the card of a request.
func (r Request) Describe() Plan {
	p := Plan{URL: r.URL, Method: r.Method, BodyBytes: len(r.Body), MaxBytes: r.Limits.MaxBytes,
		MaxRedirects: max(r.Limits.MaxRedirects, 0), TimeoutMS: r.Limits.Timeout.Milliseconds()}
	p.Method = strings.ToUpper(strings.TrimSpace(p.Method))
	if p.Method == "" {
		p.Method = "GET"
	}
	if _, host, err := webhost.ParseURL(r.URL); err == nil {
		p.Host = host
		p.Local, _ = webhost.LocalHost(host)
	}
	return p
}
