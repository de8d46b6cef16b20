// Package httpapi serves ducklm's user interface to a browser on this
// machine (`ducklm serve`): the embedded frontend files, every exported
// method of the API facade (backend/api) as POST /api/call/{Method}, and the
// window's events (committed ledger events and streamed model tokens) as a
// Server-Sent Events stream at GET /api/events; and, when given one, the MCP
// endpoint (backend/mcp) at /mcp, for other agents.
//
// It is an edge, like app/ for the desktop window: it holds no logic and
// calls no service except through the facade, apart from following the
// event bus and the token hub exactly as the window does. It never serves
// /api or /mcp without the per-start token, never answers a page of another origin,
// and never serves a file outside the embedded assets.
package httpapi
