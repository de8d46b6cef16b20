package web

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/webhost"
)

// Proxy is an HTTP proxy on a loopback port through which a browser's every
// request passes the guard for one step's grant: plain requests are made
// by the proxy itself, CONNECT tunnels (https, wss) are dialled by it to
// the checked address. What the guard refuses gets a 403 and is recorded.
//
// A refusal or a failure to connect carries the guard's sentence as its
// body, and its error code (Ducklm-Error) and cause (Ducklm-Refused: host
// or private) as headers, so that a Net dialling through the proxy (Via)
// reports it in the same words as a Net dialling itself.
type Proxy struct {
	net   *Net
	grant webhost.Grant
	ln    net.Listener
	srv   *http.Server
	tr    *http.Transport
	// tunnelsOnly refuses plain requests: the web worker's proxy
	// (ServeTunnels) makes no request and reads no response itself.
	tunnelsOnly bool

	mu      sync.Mutex
	refused map[string]bool // hosts refused
}

// StartProxy serves a proxy for grant on 127.0.0.1 until Close.
func (n *Net) StartProxy(grant webhost.Grant) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return n.serveProxy(ln, grant, false), nil
}

// ServeTunnels serves, on ln until Close, only the proxy's tunnels for
// grant: each CONNECT is resolved, checked and dialled here, and every
// other request is refused. It is the web worker's one way out (see Via).
func (n *Net) ServeTunnels(ln net.Listener, grant webhost.Grant) *Proxy {
	return n.serveProxy(ln, grant, true)
}

func (n *Net) serveProxy(ln net.Listener, grant webhost.Grant, tunnelsOnly bool) *Proxy {
	p := &Proxy{net: n, grant: grant, ln: ln, refused: map[string]bool{}, tunnelsOnly: tunnelsOnly}
	p.tr = &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return n.DialContext(ctx, grant, network, addr)
		},
		ResponseHeaderTimeout: 2 * time.Minute,
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and every tunnel through it.
func (p *Proxy) Close() {
	_ = p.srv.Close()
	p.tr.CloseIdleConnections()
}

// Refused lists, sorted, the hosts the guard refused.
func (p *Proxy) Refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.refused))
	for host := range p.refused {
		out = append(out, host)
	}
	sort.Strings(out)
	return out
}

func (p *Proxy) refuse(w http.ResponseWriter, host string, err error) {
	p.mu.Lock()
	p.refused[webhost.Host(host)] = true
	p.mu.Unlock()
	switch {
	case errors.Is(err, ErrNotGranted):
		w.Header().Set(headerRefused, "host")
	case errors.Is(err, ErrPrivateAddress):
		w.Header().Set(headerRefused, "private")
	}
	p.fail(w, err, http.StatusForbidden)
}

// fail answers with the guard's sentence and its code.
func (p *Proxy) fail(w http.ResponseWriter, err error, status int) {
	w.Header().Set(headerError, backend.ErrorCode(err))
	http.Error(w, backend.ErrorMessage(err), status)
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if p.tunnelsOnly {
		http.Error(w, "this proxy only tunnels (CONNECT)", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "ws") {
		http.Error(w, "this is a proxy; it serves only absolute http URLs", http.StatusBadRequest)
		return
	}
	if err := p.net.Check(p.grant, r.URL.Hostname()); err != nil {
		p.refuse(w, r.URL.Hostname(), err)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		if errors.Is(err, ErrNotGranted) || errors.Is(err, ErrPrivateAddress) {
			p.refuse(w, r.URL.Hostname(), err)
			return
		}
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "CONNECT needs a host and port", http.StatusBadRequest)
		return
	}
	up, err := p.net.DialContext(r.Context(), p.grant, "tcp", r.Host)
	if err != nil {
		if errors.Is(err, ErrNotGranted) || errors.Is(err, ErrPrivateAddress) {
			p.refuse(w, host, err)
			return
		}
		p.fail(w, err, http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "the proxy cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		up.Close()
		down.Close()
		return
	}
	go func() {
		defer up.Close()
		defer down.Close()
		done := make(chan struct{}, 2)
		go func() {
			if n := buf.Reader.Buffered(); n > 0 {
				b, _ := buf.Reader.Peek(n)
				_, _ = up.Write(b)
			}
			_, _ = io.Copy(up, down)
			done <- struct{}{}
		}()
		go func() { _, _ = io.Copy(down, up); done <- struct{}{} }()
		<-done
	}()
}
