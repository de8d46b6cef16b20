// Package mcpclient puts the tools of the MCP servers the user added
// (settings.MCPServer, in the data directory) into ducklm's catalog, named
// mcp__SERVER__TOOL with the server's own input schemas, and runs their
// calls as steps.
//
// A server started from a command runs under bubblewrap: the system
// read-only, its command and the package tree it lives in (the outermost
// node_modules folder above it, or the file itself) read-only, one
// writable folder (its own in the data directory, or the run's workspace
// when the user said so for that server), no network unless the user
// allowed it, memory, CPU, process and time limits, and its process group
// killed when ducklm closes it. A server reached by URL is dialled only
// through backend/web's checked dialer, for its own host, with its private
// addresses only when the user approved them.
//
// Nothing here decides whether a call may run: the router rates it
// (router.MCPRisk) from what the user said of the tool (backend.MCPTool).
package mcpclient
