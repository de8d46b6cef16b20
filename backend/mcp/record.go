package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ducklm/backend"
)

// EventCall is the type of the event that records one call of an MCP client.
const EventCall = "mcp.call"

// Call is the payload of an EventCall: who called, what, and how it went.
type Call struct {
	// Client is the name and version the client gave ("" when it gave none).
	Client        string `json:"client"`
	ClientVersion string `json:"clientVersion,omitempty"`
	// Session is the transport's session id ("" over stdio).
	Session   string `json:"session,omitempty"`
	Transport string `json:"transport"`
	// Method is tools/call or resources/read; Tool or URI names what.
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	URI    string `json:"uri,omitempty"`
	// Arguments are the call's arguments as sent, unless longer than
	// maxRecordedArgs: then ArgumentsDigest and ArgumentsBytes stand in.
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	ArgumentsDigest string          `json:"argumentsDigest,omitempty"`
	ArgumentsBytes  int             `json:"argumentsBytes,omitempty"`
	// IDs are the runs, worlds, checkpoints and files the call named or
	// made, in order.
	IDs []string `json:"ids,omitempty"`
	// OK is false when the call failed; Error is the sentence it answered.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Ms    int64  `json:"ms"`
}

// maxRecordedArgs bounds the arguments a call's record keeps whole: a task
// or a plan fits; a world program is recorded by its digest.
const maxRecordedArgs = 4 << 10

// maxRecordedError bounds the error sentence a record keeps.
const maxRecordedError = 1 << 10

// idFields are the argument and answer fields that name what a call touched.
var idFields = []string{"runId", "worldId", "checkpointId", "runA", "runB", "root", "parentRunId", "file"}

// recordCalls is the receiving middleware that records every tools/call and
// resources/read once it is answered. A record that cannot be written is
// logged; the answer still goes out, since the work it describes is done
// and recorded on its own streams.
func (s *Server) recordCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" && method != "resources/read" {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		c := Call{Transport: s.transport, Method: method, OK: err == nil, Ms: time.Since(start).Milliseconds()}
		if ss, ok := req.GetSession().(*sdk.ServerSession); ok && ss != nil {
			c.Session = ss.ID()
		}
		var answer json.RawMessage
		switch r := req.(type) {
		case *sdk.CallToolRequest:
			c.Tool = r.Params.Name
			c.setArguments(r.Params.Arguments)
			c.setClient(r.ClientInfo())
			if tr, ok := res.(*sdk.CallToolResult); ok && tr != nil {
				if b, err := json.Marshal(tr.StructuredContent); err == nil {
					answer = b
				}
				if tr.IsError {
					c.OK = false
					c.Error = textOf(tr)
				}
			}
		case *sdk.ReadResourceRequest:
			c.URI = r.Params.URI
			c.setClient(r.ClientInfo())
			if _, id, ok := strings.Cut(r.Params.URI, "://"); ok {
				c.IDs = appendID(c.IDs, id[strings.LastIndexByte(id, '/')+1:])
			}
		}
		if err != nil {
			c.Error = err.Error()
		}
		c.Error = clip(c.Error, maxRecordedError)
		c.IDs = idsIn(c.IDs, c.Arguments)
		c.IDs = idsIn(c.IDs, answer)
		s.record(ctx, c)
		return res, err
	}
}

// record appends c to the server's stream. The record outlives the call: a
// client that cancels still has its call recorded.
func (s *Server) record(ctx context.Context, c Call) {
	payload, err := json.Marshal(c)
	if err != nil {
		s.log.Error("mcp call not recorded", "tool", c.Tool, "err", err)
		return
	}
	e := backend.Event{Type: EventCall, Payload: payload, Reality: backend.ExternalReal}
	for _, id := range c.IDs {
		if backend.CheckID(id, backend.KindRun) == nil {
			e.CorrelationID = id
			break
		}
	}
	if _, err := s.svc.Ledger.Append(context.WithoutCancel(ctx), s.stream, backend.ExpectAny, e); err != nil {
		s.log.Error("mcp call not recorded", "tool", c.Tool, "err", err)
	}
}

func (c *Call) setClient(impl *sdk.Implementation) {
	if impl != nil {
		c.Client, c.ClientVersion = clip(impl.Name, 200), clip(impl.Version, 100)
	}
}

func (c *Call) setArguments(args json.RawMessage) {
	if len(args) <= maxRecordedArgs {
		if json.Valid(args) {
			c.Arguments = args
		}
		return
	}
	sum := sha256.Sum256(args)
	c.ArgumentsDigest = "sha256:" + hex.EncodeToString(sum[:])
	c.ArgumentsBytes = len(args)
}

// idsIn appends the ducklm ids and paths that the top-level idFields of a
// JSON object hold (an object's nested "run" and "world" objects too).
func idsIn(ids []string, raw json.RawMessage) []string {
	if len(raw) == 0 {
		return ids
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return ids
	}
	for _, f := range idFields {
		var v string
		if json.Unmarshal(obj[f], &v) == nil && v != "" {
			if _, err := backend.KindOf(v); err == nil || f == "file" {
				ids = appendID(ids, v)
			}
		}
	}
	return ids
}

func appendID(ids []string, id string) []string {
	for _, have := range ids {
		if have == id {
			return ids
		}
	}
	return append(ids, clip(id, 300))
}

// textOf is the text of a result's content.
func textOf(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
