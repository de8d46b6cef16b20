package ollamatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
)

// Script is a server's configuration and replies, read from a JSON file so
// a server in its own process can be scripted. The file's format:
//
//	{
//	  "version":    "0.17.4",                      // optional
//	  "models":     ["qwen2.5:7b", "nomic-embed-text"], // optional; DefaultModels if absent
//	  "embed_dims": 8,                             // optional
//	  "replies": [
//	    {
//	      "match":  "hostname",   // substring of the last user message; "" matches any
//	      "system": "planner",    // optional substring of the first system message
//	      "model":  "qwen2.5:7b", // optional exact model name
//	      "times":  1,            // optional: used at most this often, then skipped
//
//	      "content": "text",      // the reply, or:
//	      "json": {"decision": "respond", ...}, // a JSON value sent as the reply (compact)
//	      "chunks": 4, "delay_ms": 20, "done_reason": "stop",
//	      "status": 500, "error": "out of memory", "drop_after": 2,
//	      "cut": true             // end without the final message (Ollama's repeat cut)
//	    }
//	  ],
//	  "default": {"content": "..."} // optional: when no reply matches
//	}
//
// Replies are tried in file order and the first match answers; matching is
// case-sensitive. The answer fields mean what Reply's fields mean. When
// nothing matches and there is no default, the reply is NoReply.
type Script struct {
	Version   string        `json:"version"`
	Models    []string      `json:"models"`
	EmbedDims int           `json:"embed_dims"`
	Replies   []ScriptReply `json:"replies"`
	Default   *ScriptReply  `json:"default"`

	mu   sync.Mutex
	used []int
}

// ScriptReply is one entry of a Script.
type ScriptReply struct {
	Match      string          `json:"match"`
	System     string          `json:"system"`
	Model      string          `json:"model"`
	Times      int             `json:"times"`
	Content    string          `json:"content"`
	JSON       json.RawMessage `json:"json"`
	Chunks     int             `json:"chunks"`
	DelayMS    int             `json:"delay_ms"`
	DoneReason string          `json:"done_reason"`
	Status     int             `json:"status"`
	Error      string          `json:"error"`
	DropAfter  int             `json:"drop_after"`
	Cut        bool            `json:"cut"`
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ollamatest script: %w", err)
	}
	return ParseScript(data)
}

// ParseScript reads a script from JSON.
func ParseScript(data []byte) (*Script, error) {
	var sc Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("ollamatest script is not valid: %w", err)
	}
	for i, r := range sc.Replies {
		if r.JSON != nil && r.Content != "" {
			return nil, fmt.Errorf("ollamatest script: reply %d has both content and json", i)
		}
	}
	return &sc, nil
}

// Options returns the server options the script names.
func (sc *Script) Options() Options {
	return Options{Models: sc.Models, EmbedDims: sc.EmbedDims, Version: sc.Version}
}

// Reply answers one chat; it is the function to pass to Server.OnChat.
func (sc *Script) Reply(req api.ChatRequest) Reply {
	var last, system string
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m.Content
		}
		if m.Role == "system" && system == "" {
			system = m.Content
		}
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.used) != len(sc.Replies) {
		sc.used = make([]int, len(sc.Replies))
	}
	for i, r := range sc.Replies {
		if !strings.Contains(last, r.Match) || !strings.Contains(system, r.System) ||
			(r.Model != "" && r.Model != req.Model) || (r.Times > 0 && sc.used[i] >= r.Times) {
			continue
		}
		sc.used[i]++
		return r.reply()
	}
	if sc.Default != nil {
		return sc.Default.reply()
	}
	return Reply{Content: NoReply}
}

func (r ScriptReply) reply() Reply {
	content := r.Content
	if r.JSON != nil {
		var b bytes.Buffer
		if json.Compact(&b, r.JSON) == nil {
			content = b.String() // keys stay in the order the script wrote them
		}
	}
	return Reply{
		Content: content, Chunks: r.Chunks, Delay: time.Duration(r.DelayMS) * time.Millisecond,
		Status: r.Status, Error: r.Error, DropAfter: r.DropAfter, DoneReason: r.DoneReason, Cut: r.Cut,
	}
}

// NewFromScript starts a server on a random loopback port, scripted by sc.
func NewFromScript(sc *Script) *Server {
	s := New(sc.Options())
	s.OnChat(sc.Reply)
	return s
}

// Serve answers on l as scripted by sc (nil: defaults, NoReply) until l
// fails. It is for a server in its own process.
func Serve(l net.Listener, sc *Script) error {
	if sc == nil {
		sc = &Script{}
	}
	s := newServer(sc.Options())
	s.url = &url.URL{Scheme: "http", Host: l.Addr().String()}
	s.OnChat(sc.Reply)
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(l)
}

// ListenAndServe listens on addr (e.g. "127.0.0.1:0"), prints one line
// "ollamatest listening on http://HOST:PORT" to stdout so a parent process
// can read the port, and serves as scriptFile says ("" for no script) until
// the process ends.
func ListenAndServe(addr, scriptFile string) error {
	var sc *Script
	if scriptFile != "" {
		var err error
		if sc, err = LoadScript(scriptFile); err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("ollamatest cannot listen on %s: %w", addr, err)
	}
	fmt.Fprintf(os.Stdout, "ollamatest listening on http://%s\n", l.Addr())
	return Serve(l, sc)
}
