// Command fakeserver is a small MCP server over stdio for ducklm's client
// tests, written by hand so it can misbehave: `fakeserver garbage` prints
// what is not JSON-RPC; `fakeserver ok` serves echo, big (an answer past
// 50 MB), fail (an isError answer), die (exits during the call), change
// (announces a new tool with tools/list_changed), long (100 KB of text and
// an embedded binary resource), slow (answers after a
// minute; a cancellation it receives is written to cancelled.txt in its
// folder) and broken (an input schema that is not JSON Schema).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

type request struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
}

var (
	out   = bufio.NewWriterSize(os.Stdout, 1<<20)
	outMu sync.Mutex
)

func send(v any) {
	outMu.Lock()
	defer outMu.Unlock()
	data, _ := json.Marshal(v)
	out.Write(data)
	out.WriteByte('\n')
	out.Flush()
}

func reply(id json.RawMessage, result any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func text(s string, isError bool) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}, "isError": isError}
}

func main() {
	mode := "ok"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if mode == "garbage" {
		for i := 0; i < 50; i++ {
			fmt.Println("Hello! I am not JSON-RPC, just a chatty program.")
		}
		time.Sleep(time.Minute)
		return
	}
	late := false
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		var req request
		if json.Unmarshal(in.Bytes(), &req) != nil {
			continue
		}
		if req.ID == nil {
			if req.Method == "notifications/cancelled" {
				_ = os.WriteFile("cancelled.txt", append([]byte(nil), in.Bytes()...), 0o644)
			}
			continue
		}
		switch req.Method {
		case "initialize":
			reply(req.ID, map[string]any{"protocolVersion": "2025-06-18",
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo":   map[string]any{"name": "fake", "version": "1"}})
		case "tools/list":
			obj := func(props string) json.RawMessage {
				return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
			}
			tools := []any{
				map[string]any{"name": "echo", "description": "Says it back.", "inputSchema": obj(`"message":{"type":"string"}`),
					"annotations": map[string]any{"readOnlyHint": true}},
				map[string]any{"name": "big", "inputSchema": obj("")},
				map[string]any{"name": "fail", "inputSchema": obj("")},
				map[string]any{"name": "die", "inputSchema": obj("")},
				map[string]any{"name": "change", "inputSchema": obj("")},
				map[string]any{"name": "slow", "inputSchema": obj("")},
				map[string]any{"name": "long", "inputSchema": obj("")},
				map[string]any{"name": "broken", "inputSchema": obj(`"a":{"type":"strang"}`)},
			}
			if late {
				tools = append(tools, map[string]any{"name": "late", "inputSchema": obj("")})
			}
			reply(req.ID, map[string]any{"tools": tools})
		case "tools/call":
			switch req.Params.Name {
			case "echo", "late":
				reply(req.ID, text(fmt.Sprint(req.Params.Arguments["message"]), false))
			case "big":
				reply(req.ID, text(strings.Repeat("x", 51<<20), false))
			case "fail":
				reply(req.ID, text("the disk is full", true))
			case "die":
				fmt.Fprintln(os.Stderr, "fakeserver: dying on purpose")
				os.Exit(3)
			case "long":
				// 100 KB of text and an embedded binary resource.
				reply(req.ID, map[string]any{"content": []any{
					map[string]any{"type": "text", "text": strings.Repeat("duck ", 20<<10)},
					map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///report.bin", "mimeType": "application/octet-stream", "blob": "AAECAw=="}},
				}})
			case "slow":
				go func(id json.RawMessage) {
					time.Sleep(time.Minute)
					reply(id, text("too late", false))
				}(req.ID)
			case "change":
				late = true
				reply(req.ID, text("changed", false))
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
			default:
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32602, "message": "no such tool"}})
			}
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
}
