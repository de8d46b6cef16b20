// Package web is ducklm's way out to the network for the web tools
// (web_fetch and browser): a guarded dialer that connects only to hosts a
// step was granted, and only to public addresses unless the grant names the
// host as one whose private or loopback addresses were approved explicitly;
// an HTTP fetch with time, size and redirect limits; readable-text
// extraction from HTML through go-readability; and a filtering HTTP proxy
// through which a sandboxed browser's every request passes the same guard,
// and whose tunnels alone (ServeTunnels, on a unix socket) are the way out
// of web_fetch's worker process (backend/webproc): a Net with Via set
// fetches through them, and the guard, not the worker, resolves and checks.
//
// The address is checked after resolution and the connection is made to
// the very address checked, never to the name again, so a name that
// resolves to a public address when checked and to 127.0.0.1 when used (DNS
// rebinding) cannot reach this machine.
//
// The package decides nothing about who may reach what: the router computes
// a step's Grant (pure policy, from backend/webhost, which this package
// enforces) and the runtime hands it over with the call.
package web
