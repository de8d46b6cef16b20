package ollamatest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
)

// DefaultModels are the models a server lists when Options name none.
var DefaultModels = []string{"qwen2.5:7b", "llama3.2:3b", "nomic-embed-text:latest"}

// DefaultVersion is the version /api/version reports when Options name none.
const DefaultVersion = "0.17.4"

// NoReply is the content of a chat nobody scripted.
const NoReply = "ollamatest: no reply was scripted for this chat"

// Options configure a Server. The zero value is a server with DefaultModels,
// 8-dimensional embeddings and no scripted replies.
type Options struct {
	Models    []string // installed models; "name" means "name:latest"
	EmbedDims int      // length of generated embedding vectors
	Version   string
}

// Reply scripts the answer to one chat.
type Reply struct {
	Content string
	// Chunks splits Content into this many stream messages of about equal
	// length; 0 streams one message per word (with its trailing space).
	Chunks int
	// Delay is slept before each chunk; the wait ends if the client leaves.
	Delay time.Duration
	// Status >= 400 answers with that status and {"error": Error} before
	// any chunk, as Ollama does for an unknown model or a failed load.
	Status int
	// Error with Status 0 is written as {"error": Error} after the chunks,
	// in place of the final message, as Ollama does when a runner dies
	// mid-answer.
	Error string
	// DropAfter > 0 closes the connection after that many chunks, without
	// the final message; < 0 closes it before anything is written.
	DropAfter int
	// DoneReason of the final message; "" means "stop".
	DoneReason string
	// Cut ends the stream cleanly after the chunks without the final
	// message, as Ollama does when a model repeats one token more than 30
	// times in a row.
	Cut bool
}

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Body   []byte
	Chat   *api.ChatRequest  // set for POST /api/chat
	Embed  *api.EmbedRequest // set for POST /api/embed
}

// EmbedFunc computes one embedding; an error answers the request with 500.
type EmbedFunc func(model, input string) ([]float32, error)

// Server is a fake Ollama. Its methods are safe for concurrent use.
type Server struct {
	mu       sync.Mutex
	models   []api.ListModelResponse
	dims     int
	version  string
	onChat   func(api.ChatRequest) Reply
	onEmbed  EmbedFunc
	failures map[string]Reply
	requests []Request

	hs  *httptest.Server
	url *url.URL
}

// New starts a server on a random loopback port. Close it when done.
func New(opts Options) *Server {
	s := newServer(opts)
	s.hs = httptest.NewServer(s)
	s.url, _ = url.Parse(s.hs.URL)
	return s
}

func newServer(opts Options) *Server {
	s := &Server{dims: opts.EmbedDims, version: opts.Version, failures: map[string]Reply{}}
	if s.dims <= 0 {
		s.dims = 8
	}
	if s.version == "" {
		s.version = DefaultVersion
	}
	names := opts.Models
	if names == nil {
		names = DefaultModels
	}
	s.SetModels(names...)
	return s
}

// Close stops the server, waiting for requests in flight.
func (s *Server) Close() {
	if s.hs != nil {
		s.hs.CloseClientConnections()
		s.hs.Close()
	}
}

// URL is the server's base URL, ready for ollama.New.
func (s *Server) URL() *url.URL {
	u := *s.url
	return &u
}

// SetModels replaces the installed models with synthesized entries.
func (s *Server) SetModels(names ...string) {
	list := make([]api.ListModelResponse, 0, len(names))
	for i, n := range names {
		list = append(list, ModelInfo(n, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(i)*time.Hour)))
	}
	s.SetModelList(list)
}

// SetModelList replaces the installed models with exactly these entries.
func (s *Server) SetModelList(list []api.ListModelResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]api.ListModelResponse(nil), list...)
}

// OnChat sets the function that scripts every chat's reply.
func (s *Server) OnChat(fn func(req api.ChatRequest) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChat = fn
}

// OnEmbed sets the function that computes embeddings; nil restores Vector.
func (s *Server) OnEmbed(fn EmbedFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onEmbed = fn
}

// Fail makes every request to path (e.g. "/api/tags") answer status with
// {"error": message}; status 0 lifts it.
func (s *Server) Fail(path string, status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.failures, path)
		return
	}
	s.failures[path] = Reply{Status: status, Error: message}
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Chats returns the chat requests received so far, in arrival order.
func (s *Server) Chats() []api.ChatRequest {
	var out []api.ChatRequest
	for _, r := range s.Requests() {
		if r.Chat != nil {
			out = append(out, *r.Chat)
		}
	}
	return out
}

// ServeHTTP routes a request the way Ollama's router does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Body: body}

	s.mu.Lock()
	fail, failing := s.failures[r.URL.Path]
	s.mu.Unlock()

	switch {
	case failing:
		s.record(rec)
		writeError(w, fail.Status, fail.Error)
	case r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.record(rec)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Ollama is running")
	case r.URL.Path == "/api/version" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.record(rec)
		s.mu.Lock()
		v := s.version
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"version": v})
	case r.URL.Path == "/api/tags" && r.Method == http.MethodGet:
		s.record(rec)
		s.mu.Lock()
		list := api.ListResponse{Models: append([]api.ListModelResponse{}, s.models...)}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, list)
	case r.URL.Path == "/api/chat" && r.Method == http.MethodPost:
		s.chat(w, r, rec)
	case r.URL.Path == "/api/embed" && r.Method == http.MethodPost:
		s.embed(w, rec)
	default:
		s.record(rec)
		// Ollama's router (gin) answers unknown routes in plain text.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "404 page not found")
	}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// installed reports whether name is listed, with Ollama's default tag.
func (s *Server) installed(name string) bool {
	want := fullName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.models {
		if fullName(m.Name) == want {
			return true
		}
	}
	return false
}

func fullName(name string) string {
	if i := strings.LastIndex(name, "/"); !strings.Contains(name[i+1:], ":") {
		return name + ":latest"
	}
	return name
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errMissingBody
	}
	return json.Unmarshal(body, v)
}

type constError string

func (e constError) Error() string { return string(e) }

const errMissingBody = constError("missing request body")
