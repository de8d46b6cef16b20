package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"ducklm/backend"
	"ducklm/backend/webhost"
)

// Resolver looks a host name up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Net is the guarded way out: every connection a web tool makes is dialled
// here, for one step's Grant.
type Net struct {
	// Resolver looks names up; nil is the system's resolver.
	Resolver Resolver
	// Special classifies an address that needs its own approval; nil is
	// Classify. Tests that serve "public" pages on loopback replace it.
	Special func(netip.Addr) (string, bool)
	// Via, when set, is the unix socket of a guard's tunnels (ServeTunnels)
	// in another process: every connection a fetch makes is a tunnel
	// through it, and the guard there resolves, checks and dials, so this
	// process looks nothing up and needs no network of its own. The web
	// worker fetches this way.
	Via string
}

// ErrNotGranted is the cause of a refusal to reach a host the step was not
// granted.
var ErrNotGranted = errors.New("host not granted")

// ErrPrivateAddress is the cause of a refusal to reach a private or
// loopback address that was not approved for its host.
var ErrPrivateAddress = errors.New("private address not approved")

func (n *Net) resolver() Resolver {
	if n != nil && n.Resolver != nil {
		return n.Resolver
	}
	return net.DefaultResolver
}

func (n *Net) special(a netip.Addr) (string, bool) {
	if n != nil && n.Special != nil {
		return n.Special(a)
	}
	return webhost.Classify(a)
}

// Check refuses host unless g allows it. It does no I/O.
func (n *Net) Check(g webhost.Grant, host string) error {
	if !g.Allows(host) {
		return backend.Wrap(ErrNotGranted, backend.EINVALID,
			"%s is not an approved host for this step, so no request was sent to it; approve a step that names it, or allow it for the run or in Settings", webhost.Host(host))
	}
	return nil
}

// Resolve returns the addresses host may be reached at under g: it must be
// granted, and each address it resolves to must be public or approved for
// it as private. It refuses the whole host when any address is not, so a
// name cannot mix a public and a private answer.
func (n *Net) Resolve(ctx context.Context, g webhost.Grant, host string) ([]netip.Addr, error) {
	host = webhost.Host(host)
	if err := n.Check(g, host); err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		found, err := n.resolver().LookupNetIP(ctx, "ip", host)
		if err != nil {
			if ctx.Err() != nil {
				return nil, backend.Wrap(ctx.Err(), backend.ELIMIT, "looking up %s took too long", host)
			}
			return nil, backend.Wrap(err, backend.ENOTFOUND, "the host %s could not be found", host)
		}
		if len(found) == 0 {
			return nil, backend.Errorf(backend.ENOTFOUND, "the host %s has no address", host)
		}
		addrs = found
	}
	if host == "localhost" || len(host) > 10 && host[len(host)-10:] == ".localhost" {
		// localhost is this machine whatever a resolver says.
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	for i, a := range addrs {
		a = a.Unmap()
		addrs[i] = a
		if kind, ok := n.special(a); ok && !g.AllowsPrivate(host) {
			return nil, backend.Wrap(ErrPrivateAddress, backend.EINVALID,
				"%s resolved to %s, a %s address, which needs its own approval, so no request was sent; "+
					"name the address itself in the URL and approve that step, or allow it for the run or in Settings", host, a, kind)
		}
	}
	return addrs, nil
}

// DialContext connects to addr ("host:port") for a step granted g, to the
// checked address itself.
func (n *Net) DialContext(ctx context.Context, g webhost.Grant, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "%q is not a host and port", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, backend.Errorf(backend.EINVALID, "%q has no valid port", addr)
	}
	addrs, err := n.Resolve(ctx, g, host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, mustPort(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	if ctx.Err() != nil {
		return nil, backend.Wrap(ctx.Err(), backend.ELIMIT, "connecting to %s took too long", webhost.Host(host))
	}
	return nil, backend.Wrap(last, backend.EUNAVAILABLE, "%s could not be reached (%s)", webhost.Host(host), errorText(last))
}

func mustPort(p string) uint16 {
	n, _ := strconv.ParseUint(p, 10, 16)
	return uint16(n)
}

// errorText is the last clause of a network error ("connection refused").
func errorText(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return fmt.Sprint(op.Err)
	}
	return fmt.Sprint(err)
}
