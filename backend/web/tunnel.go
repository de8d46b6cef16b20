package web

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/webhost"
)

// The headers a guard's refusal carries (see Proxy).
const (
	headerError   = "Ducklm-Error"
	headerRefused = "Ducklm-Refused"
)

// dial connects to addr for a step granted g: through the guard's tunnels
// when n has a Via, else itself.
func (n *Net) dial(ctx context.Context, g webhost.Grant, network, addr string) (net.Conn, error) {
	if n != nil && n.Via != "" {
		return n.dialVia(ctx, addr)
	}
	return n.DialContext(ctx, g, network, addr)
}

// dialVia asks the guard at n.Via for a tunnel to addr. The guard resolves
// the name, checks its grant and the addresses, and dials; a refusal comes
// back as the guard's own error, in its words.
func (n *Net) dialVia(ctx context.Context, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "%q is not a host and port", addr)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", n.Via)
	if err != nil {
		if ctx.Err() != nil {
			return nil, backend.Wrap(ctx.Err(), backend.ELIMIT, "connecting to %s took too long", webhost.Host(host))
		}
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "ducklm's way out to the network could not be reached, so %s was not", webhost.Host(host))
	}
	// The exchange below ends with ctx: a deadline in the past wakes it.
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	br := bufio.NewReader(c)
	err = req.Write(c)
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, req)
	}
	var refusal error
	if err == nil && resp.StatusCode != http.StatusOK {
		refusal = guardError(resp, host)
	}
	if !stop() || ctx.Err() != nil {
		c.Close()
		return nil, backend.Wrap(ctx.Err(), backend.ELIMIT, "connecting to %s took too long", webhost.Host(host))
	}
	if err != nil {
		c.Close()
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "%s could not be reached through ducklm's guard (%s)", webhost.Host(host), errorText(err))
	}
	if refusal != nil {
		c.Close()
		return nil, refusal
	}
	_ = c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// guardCodes are the error codes a guard's answer may carry.
var guardCodes = map[string]bool{backend.EINVALID: true, backend.ENOTFOUND: true, backend.EUNAVAILABLE: true, backend.ELIMIT: true}

// guardError is the error a guard's non-200 answer to a CONNECT stands for.
func guardError(resp *http.Response, host string) error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	msg := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if msg == "" {
		msg = webhost.Host(host) + " could not be reached through ducklm's guard (" + resp.Status + ")"
	}
	code := resp.Header.Get(headerError)
	if !guardCodes[code] {
		code = backend.EUNAVAILABLE
	}
	e := &backend.Error{Code: code, Message: msg}
	switch resp.Header.Get(headerRefused) {
	case "host":
		e.Err = ErrNotGranted
	case "private":
		e.Err = ErrPrivateAddress
	}
	return e
}

// bufferedConn is a tunnel whose first bytes were read with the guard's
// answer.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
