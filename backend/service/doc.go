// Package service opens a ducklm data directory and wires the services that
// live in it (database, ledger, event bus, blob store) for the three edges
// that use them: the desktop window (app/), the HTTP server and the CLI. It
// holds no policy; each capability lives in its own package.
package service
