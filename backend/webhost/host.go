package webhost

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"ducklm/backend"
)

// ParseURL reads a URL a web step names: http or https, a host, no user
// name or password (credentials belong in no plan). It returns the URL and
// its host, normalised by Host.
func ParseURL(raw string) (*url.URL, string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, "", backend.Errorf(backend.EINVALID, "the URL is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", backend.Errorf(backend.EINVALID, "%q is not a URL", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", backend.Errorf(backend.EINVALID, "the URL %q is not http or https", raw)
	}
	if u.User != nil {
		return nil, "", backend.Errorf(backend.EINVALID, "the URL %s holds a user name or password; web steps take none", u.Redacted())
	}
	host := Host(u.Hostname())
	if host == "" {
		return nil, "", backend.Errorf(backend.EINVALID, "the URL %q names no host", raw)
	}
	return u, host, nil
}

// Host is a host name as grants compare it: lower case, without a trailing
// dot or brackets; an IP address in its canonical form.
func Host(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone("").String()
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// Classify says what kind of special address a is: "loopback", "private",
// "link-local", "unspecified", "multicast", "shared" (carrier-grade NAT)
// or "reserved"; ok is false for an ordinary public address.
func Classify(a netip.Addr) (kind string, ok bool) {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback", true
	case a.IsPrivate():
		return "private", true
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local", true
	case a.IsUnspecified():
		return "unspecified", true
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast", true
	}
	for _, p := range reserved {
		if p.prefix.Contains(a) {
			return p.kind, true
		}
	}
	return "", false
}

var reserved = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"},
}

// LocalHost says whether host names this machine or a private network by
// itself: an address Classify marks, or localhost and its subdomains
// (RFC 6761). Approving a step whose URL names such a host is the explicit
// approval its private address needs.
func LocalHost(host string) (kind string, ok bool) {
	host = Host(host)
	if a, err := netip.ParseAddr(host); err == nil {
		return Classify(a)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "loopback", true
	}
	return "", false
}

// Grant is what one web step may reach: the hosts it may connect to, and
// among them those whose private or loopback addresses were approved.
type Grant struct {
	Hosts   []string `json:"hosts"`
	Private []string `json:"private,omitempty"`
}

// Allows says whether host is one of the grant's hosts. An entry
// "*.example.com" allows every subdomain of example.com (not example.com
// itself).
func (g Grant) Allows(host string) bool { return matchHost(g.Hosts, host) }

// AllowsPrivate says whether host may reach private or loopback addresses.
func (g Grant) AllowsPrivate(host string) bool { return matchHost(g.Private, host) }

func matchHost(list []string, host string) bool {
	host = Host(host)
	for _, h := range list {
		h = Host(h)
		if h == host || (strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:])) {
			return true
		}
	}
	return false
}

// Add returns g with host allowed, and with its private addresses allowed
// too when host names them by itself (LocalHost).
func (g Grant) Add(host string) Grant {
	host = Host(host)
	if host == "" {
		return g
	}
	out := Grant{Hosts: slices.Clone(g.Hosts), Private: slices.Clone(g.Private)}
	if !slices.Contains(out.Hosts, host) {
		out.Hosts = append(out.Hosts, host)
	}
	if _, local := LocalHost(host); local && !slices.Contains(out.Private, host) {
		out.Private = append(out.Private, host)
	}
	return out
}

// CheckAllowedHost refuses an entry of an allow-list that is not a host
// name, an address or "*." and a domain.
func CheckAllowedHost(entry string) error {
	h := strings.TrimSpace(entry)
	name := strings.TrimPrefix(h, "*.")
	switch {
	case h == "":
		return backend.Errorf(backend.EINVALID, "an allowed host is empty")
	case strings.ContainsAny(h, "/:@ ?#") && net.ParseIP(strings.Trim(h, "[]")) == nil:
		return backend.Errorf(backend.EINVALID, "%q is not a host name; write only the host, such as example.com or *.example.com", entry)
	case strings.Contains(name, "*") || name == "":
		return backend.Errorf(backend.EINVALID, "%q is not a host name; a wildcard is only *. before a domain, such as *.example.com", entry)
	}
	return nil
}
