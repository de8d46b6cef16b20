package httpapi

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"ducklm/backend/api"
	"ducklm/backend/service"
)

// TokenHeader is the request header that carries the server's token; an
// EventSource, which cannot set headers, passes it as the query parameter
// `token` instead.
const TokenHeader = "X-Ducklm-Token"

// MaxBodyBytes bounds the body of one API call: the largest argument the
// UI sends is a world program or a plan, far below it.
const MaxBodyBytes = 8 << 20

// contentSecurityPolicy lets the page load only its own files and talk only
// to its own server. Inline styles stay allowed because React sets style
// attributes; scripts never run inline.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// Options configure a Server.
type Options struct {
	// API is the facade whose exported methods are served; configure it
	// (api.Configure) with the server's lifetime context, not a request's.
	API *api.API
	// Service supplies the event bus, the ledger head and the token hub.
	Service *service.Service
	// Assets holds the built frontend (index.html at its root); nil serves
	// only the API.
	Assets fs.FS
	// Token must be presented on every /api request (NewToken makes one),
	// in the TokenHeader; only the event stream may take it in the query.
	Token string
	// Hosts are the only Host header values answered (e.g.
	// "127.0.0.1:8080", "localhost:8080"): a page that reaches the server
	// through DNS rebinding names its own host and is refused. Required.
	Hosts []string
	Log   *slog.Logger
	// MCP, when set, is the MCP endpoint (backend/mcp) served at /mcp
	// behind the same host, origin and token checks as /api.
	MCP http.Handler
	// Heartbeat is how often a quiet event stream sends a comment (15 s
	// when zero).
	Heartbeat time.Duration
}

// Server is the http.Handler of `ducklm serve`.
type Server struct {
	svc     *service.Service
	token   []byte
	hosts   map[string]bool
	log     *slog.Logger
	methods map[string]method
	static  http.Handler
	assets  fs.FS
	mcp     http.Handler
	// heartbeat is how often a quiet event stream sends a comment.
	heartbeat time.Duration

	mu      sync.Mutex
	closed  bool
	streams map[chan struct{}]struct{}
}

// NewToken returns a fresh random 128-bit token, hex encoded.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// New returns the server for opts.
func New(opts Options) (*Server, error) {
	if opts.API == nil || opts.Service == nil {
		return nil, errors.New("httpapi: an API and its service are required")
	}
	if len(opts.Hosts) == 0 {
		// Without it a page on any DNS name that resolves here could call us.
		return nil, errors.New("httpapi: Hosts must list the host names the server answers for")
	}
	if len(opts.Token) < 16 {
		return nil, errors.New("httpapi: the token must be at least 16 characters")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{svc: opts.Service, token: []byte(opts.Token), log: log,
		methods: methodsOf(opts.API), assets: opts.Assets, mcp: opts.MCP, heartbeat: opts.Heartbeat, streams: map[chan struct{}]struct{}{}}
	if s.heartbeat <= 0 {
		s.heartbeat = defaultHeartbeat
	}
	s.hosts = map[string]bool{}
	for _, h := range opts.Hosts {
		s.hosts[strings.ToLower(h)] = true
	}
	if opts.Assets != nil {
		s.static = http.FileServerFS(opts.Assets)
	}
	return s, nil
}

// Methods lists the API methods the server answers, sorted.
func (s *Server) Methods() []string {
	return slices.Sorted(maps.Keys(s.methods))
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the page URL holds the token
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")

	if !s.hosts[strings.ToLower(r.Host)] {
		writeError(w, http.StatusMisdirectedRequest, "ducklm serve does not answer for the host "+quote(r.Host)+"; open the address it printed")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != ownOrigin(r) {
		writeError(w, http.StatusForbidden, "ducklm serve answers only its own pages, not "+quote(o))
		return
	}
	p := r.URL.Path
	if p == "/api" || strings.HasPrefix(p, "/api/") {
		h.Set("Cache-Control", "no-store")
		if !s.authorized(r, p == "/api/events") {
			writeError(w, http.StatusUnauthorized, "this request has no valid token; open the address `ducklm serve` printed, with its token")
			return
		}
		switch {
		case strings.HasPrefix(p, "/api/call/"):
			s.serveCall(w, r, strings.TrimPrefix(p, "/api/call/"))
		case p == "/api/events":
			s.serveEvents(w, r)
		default:
			writeError(w, http.StatusNotFound, "there is no API endpoint "+quote(p))
		}
		return
	}
	if p == MCPPath || strings.HasPrefix(p, MCPPath+"/") {
		h.Set("Cache-Control", "no-store")
		s.serveMCP(w, r, strings.TrimPrefix(p, MCPPath))
		return
	}
	s.serveStatic(w, r)
}

// MCPPath is where the MCP endpoint answers: at MCPPath with the token in
// the TokenHeader (or as an Authorization bearer), or at MCPPath/TOKEN for
// a client that can be given only a URL.
const MCPPath = "/mcp"

// serveMCP checks the token of a request to the MCP endpoint, whose path
// after MCPPath is rest, and hands it over.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, rest string) {
	if s.mcp == nil {
		writeError(w, http.StatusNotFound, "this ducklm serve has no MCP endpoint")
		return
	}
	t := r.Header.Get(TokenHeader)
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && t == "" {
		t = strings.TrimSpace(b)
	}
	if rest != "" {
		// A token in the path is the endpoint's address; a header
		// naming another token is a mistake, not a second chance.
		if t != "" && t != rest[1:] {
			t = ""
		} else {
			t = rest[1:]
		}
	}
	if t == "" || subtle.ConstantTimeCompare([]byte(t), s.token) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ducklm"`)
		writeError(w, http.StatusUnauthorized, "this request has no valid token; use the MCP address `ducklm serve` printed, with its token")
		return
	}
	s.mcp.ServeHTTP(w, r)
}

// authorized reports whether r carries the token, compared in constant time.
// The token belongs in the header; the query string may carry it only where
// a browser cannot send a header (the event stream's EventSource): a token in
// a URL ends up in logs and histories, and a call must not be a link.
func (s *Server) authorized(r *http.Request, queryOK bool) bool {
	t := r.Header.Get(TokenHeader)
	if t == "" && queryOK {
		t = r.URL.Query().Get("token")
	}
	return t != "" && subtle.ConstantTimeCompare([]byte(t), s.token) == 1
}

func ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// serveStatic serves the embedded frontend. The files hold no data, so they
// need no token; index.html is never cached so a new build is picked up, and
// folders are not listed.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "only GET and HEAD are answered here")
		return
	}
	if s.static == nil {
		writeError(w, http.StatusNotFound, "this ducklm was built without its user interface; run make build")
		return
	}
	p := path.Clean("/" + r.URL.Path)
	if p == "/" || p == "/index.html" {
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		fi, err := fs.Stat(s.assets, strings.TrimPrefix(p, "/"))
		if err != nil || fi.IsDir() {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(p, "/assets/") {
			// Vite names these by content hash.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
	}
	s.static.ServeHTTP(w, r)
}

// Close ends every open event stream (http.Server.Shutdown waits for
// handlers, and an event stream never ends by itself). Register it with
// http.Server.RegisterOnShutdown.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.streams {
		close(c)
		delete(s.streams, c)
	}
}

// errorBody is every failed response's body.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, sentence string) {
	writeJSON(w, status, errorBody{Error: sentence})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":"the answer could not be encoded as JSON"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

// quote clips and quotes a value from a request for a sentence.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
