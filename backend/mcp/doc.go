// Package mcp serves ducklm's runtime to other agents over the Model Context
// Protocol, through the official Go SDK: `ducklm mcp serve` over stdio, and
// the /mcp endpoint of `ducklm serve` over streamable HTTP.
//
// It is an edge, like backend/httpapi and app/: every tool calls the API
// facade (backend/api) the window calls, so a run an agent submits is the
// run a person would have submitted from the window, under the person's
// settings. It holds no logic of its own beyond translating arguments and
// answers, reporting progress and recording each call.
//
// What it must never do:
//   - answer an approval. There is no tool to approve, deny or edit a step,
//     and a client cannot lower the approval mode below the person's
//     setting: approvals stay with the person at the window or the CLI.
//   - leave a call unrecorded: every tools/call and resources/read is an
//     mcp.call event on the server's own ledger stream (mcp_…), naming the
//     client, the tool and its arguments, and the runs or worlds it
//     touched, so the window's event feed shows work that arrived over MCP.
package mcp
