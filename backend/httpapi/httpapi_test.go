package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	ducklmapi "ducklm/backend/api"
	"ducklm/backend/httpapi"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
)

const indexHTML = `<!doctype html><html><body><div id="root"></div><script type="module" src="./assets/app.js"></script></body></html>`

// bundle is one served data directory.
type bundle struct {
	t     *testing.T
	dir   string
	svc   *service.Service
	srv   *httptest.Server
	token string
}

// setup serves a fresh data directory; ollama is the fake Ollama's URL, or
// "" for an Ollama that does not answer.
func setup(t *testing.T, ollama string) *bundle {
	t.Helper()
	return setupWith(t, ollama, fstest.MapFS{
		"index.html":    {Data: []byte(indexHTML)},
		"assets/app.js": {Data: []byte("console.log('ducklm')")},
	})
}

// setupWith is setup serving assets as the embedded frontend.
func setupWith(t *testing.T, ollama string, assets fs.FS) *bundle {
	t.Helper()
	if ollama == "" {
		ollama = "127.0.0.1:1"
	}
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := service.OpenWith(ctx, dir, service.Options{OllamaHost: ollama, Log: log})
	require.NoError(t, err)
	a := ducklmapi.New(svc, nil, log)
	ducklmapi.Configure(a, func() context.Context { return ctx }, nil)
	token, err := httpapi.NewToken()
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(nil)
	h, err := httpapi.New(httpapi.Options{API: a, Service: svc, Token: token, Log: log, Heartbeat: 200 * time.Millisecond,
		Hosts:  []string{srv.Listener.Addr().String()},
		Assets: assets})
	require.NoError(t, err)
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(func() {
		h.Close() // ends event streams, which httptest.Server.Close waits for
		srv.Close()
		cancel()
		svc.Close()
	})
	return &bundle{t: t, dir: dir, svc: svc, srv: srv, token: token}
}

// post sends a call with the given headers and returns status and body.
func (b *bundle) post(method, body string, header map[string]string) (int, []byte) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/api/call/"+method, strings.NewReader(body))
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.srv.Client().Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return resp.StatusCode, data
}

// call makes an authorized call that must succeed and decodes its result.
func (b *bundle) call(out any, method string, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	body, err := json.Marshal(args)
	require.NoError(b.t, err)
	status, data := b.post(method, string(body), map[string]string{httpapi.TokenHeader: b.token})
	require.Equal(b.t, http.StatusOK, status, "%s: %s", method, data)
	if out != nil {
		require.NoError(b.t, json.Unmarshal(data, out), string(data))
	}
}

// failure makes an authorized call that must fail with status.
func (b *bundle) failure(status int, method, body string) string {
	b.t.Helper()
	got, data := b.post(method, body, map[string]string{httpapi.TokenHeader: b.token})
	require.Equal(b.t, status, got, "%s %s: %s", method, body, data)
	var e struct {
		Error string `json:"error"`
	}
	require.NoError(b.t, json.Unmarshal(data, &e), string(data))
	require.NotEmpty(b.t, e.Error)
	return e.Error
}

func errorOf(t *testing.T, data []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(data, &e), string(data))
	return e.Error
}

func TestTokenIsRequiredOnTheAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	status, data := b.post("Overview", "[]", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, errorOf(t, data), "token")

	status, _ = b.post("Overview", "[]", map[string]string{httpapi.TokenHeader: b.token[:len(b.token)-1] + "x"})
	require.Equal(t, http.StatusUnauthorized, status)

	status, _ = b.post("Overview", "[]", map[string]string{httpapi.TokenHeader: b.token})
	require.Equal(t, http.StatusOK, status)

	// A call carries the token in its header, never in the URL (which
	// logs, histories and links keep).
	resp, err := b.srv.Client().Post(b.srv.URL+"/api/call/Overview?token="+b.token, "application/json", strings.NewReader("[]"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	resp, err = b.srv.Client().Get(b.srv.URL + "/api/events")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// An EventSource cannot set headers: the event stream takes the query.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/api/events?token="+b.token, nil)
	require.NoError(t, err)
	resp, err = b.srv.Client().Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	resp.Body.Close()
}

func TestServerRefusesToStartWithoutAHostAllowList(t *testing.T) {
	t.Parallel()
	svc, err := service.OpenWith(context.Background(), t.TempDir(), service.Options{OllamaHost: "127.0.0.1:1"})
	require.NoError(t, err)
	defer svc.Close()
	_, err = httpapi.New(httpapi.Options{API: ducklmapi.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil))),
		Service: svc, Token: "0123456789abcdef0123456789abcdef"})
	require.ErrorContains(t, err, "Hosts")
}

func TestStaticAssetsNeedNoTokenAndCarrySecurityHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	resp, err := b.srv.Client().Get(b.srv.URL + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, indexHTML, string(body))
	require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'")
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))

	resp, err = b.srv.Client().Get(b.srv.URL + "/assets/app.js")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Cache-Control"), "immutable")

	for _, p := range []string{"/assets/", "/missing.js", "/../etc/passwd"} {
		resp, err = b.srv.Client().Get(b.srv.URL + p)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, p)
	}
}

func TestTheFaviconIsServed(t *testing.T) {
	t.Parallel()
	// frontend/public is what Vite copies into dist, which main.go embeds:
	// a browser asks for /favicon.ico on every page, and a 404 is a console
	// error in every session.
	b := setupWith(t, "", os.DirFS("../../frontend/public"))
	resp, err := b.srv.Client().Get(b.srv.URL + "/favicon.ico")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// image/x-icon sniffed, or the system's mime.types (image/vnd.microsoft.icon).
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "image/"), resp.Header.Get("Content-Type"))
	require.True(t, bytes.HasPrefix(body, []byte{0, 0, 1, 0}), "an ICO file")

	index, err := os.ReadFile("../../frontend/index.html")
	require.NoError(t, err)
	require.Contains(t, string(index), `<link rel="icon" href="./favicon.ico"`)
}

func TestForeignOriginIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	status, data := b.post("Overview", "[]", map[string]string{httpapi.TokenHeader: b.token, "Origin": "http://evil.example"})
	require.Equal(t, http.StatusForbidden, status)
	require.Contains(t, errorOf(t, data), "evil.example")

	// Another port on the same host is another origin.
	status, _ = b.post("Overview", "[]", map[string]string{httpapi.TokenHeader: b.token, "Origin": "http://127.0.0.1:1"})
	require.Equal(t, http.StatusForbidden, status)

	status, _ = b.post("Overview", "[]", map[string]string{httpapi.TokenHeader: b.token, "Origin": b.srv.URL})
	require.Equal(t, http.StatusOK, status)
}

func TestHostsGuardAgainstDNSRebinding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	svc, err := service.OpenWith(context.Background(), dir, service.Options{OllamaHost: "127.0.0.1:1"})
	require.NoError(t, err)
	defer svc.Close()
	h, err := httpapi.New(httpapi.Options{API: ducklmapi.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil))),
		Service: svc, Token: "0123456789abcdef0123456789abcdef", Hosts: []string{"127.0.0.1:9"}})
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodGet, "http://attacker.example:9/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusMisdirectedRequest, rec.Code)

	require.Subset(t, h.Methods(), []string{"Overview", "SubmitTask", "RunDetail", "Fork", "History", "Workers"})
	require.NotContains(t, h.Methods(), "ready")

	req = httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/api/call/RiskRules", strings.NewReader("[]"))
	req.Header.Set(httpapi.TokenHeader, "0123456789abcdef0123456789abcdef")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

func TestBadCallsAreAnsweredWithASentence(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	require.Equal(t, `there is no API method "Nope"`, b.failure(http.StatusBadRequest, "Nope", "[]"))
	// Unexported methods and helpers are not part of the vocabulary.
	require.Contains(t, b.failure(http.StatusBadRequest, "ready", "[]"), "no API method")
	require.Contains(t, b.failure(http.StatusBadRequest, "Configure", "[]"), "no API method")

	require.Equal(t, "RunDetail takes 1 argument (a string), but the call sent 0",
		b.failure(http.StatusBadRequest, "RunDetail", "[]"))
	require.Equal(t, "Overview takes no arguments, but the call sent 1",
		b.failure(http.StatusBadRequest, "Overview", `["x"]`))
	require.Equal(t, "argument 1 of RunDetail must be a string, not a number",
		b.failure(http.StatusBadRequest, "RunDetail", `[42]`))
	require.Equal(t, "argument 3 of History must be a whole number, not a string",
		b.failure(http.StatusBadRequest, "History", `["r", 0, "ten"]`))
	require.Contains(t, b.failure(http.StatusBadRequest, "SubmitTask", `[{"task": 7}]`), "argument 1 of SubmitTask must be a string, not a number")
	require.Equal(t, "the body of a call to Overview must be a JSON array of its arguments",
		b.failure(http.StatusBadRequest, "Overview", `{"a":1}`))
	require.Contains(t, b.failure(http.StatusBadRequest, "Overview", `[] []`), "JSON array")

	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/api/call/Overview", nil)
	require.NoError(t, err)
	req.Header.Set(httpapi.TokenHeader, b.token)
	resp, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	// A method's own error is the facade's sentence.
	msg := b.failure(http.StatusUnprocessableEntity, "RunDetail", `["not-a-run"]`)
	require.NotContains(t, msg, "sql")
	msg = b.failure(http.StatusUnprocessableEntity, "ChooseFolder", `["Pick"]`)
	require.Contains(t, msg, "type the path instead")
}

func TestBodyIsLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	pad := strings.Repeat(" ", httpapi.MaxBodyBytes-16)
	msg := b.failure(http.StatusRequestEntityTooLarge, "ValidatePlan", `["{}"`+pad+strings.Repeat(" ", 17)+`]`)
	require.Contains(t, msg, "8 MiB")
	// Just under the limit is read (and answered by the facade).
	var check ducklmapi.PlanCheck
	b.call(&check, "ValidatePlan", "{}"+pad[:1<<20])
	status, _ := b.post("ValidatePlan", `["{}"`+pad+`]`, map[string]string{httpapi.TokenHeader: b.token})
	require.Equal(t, http.StatusOK, status)
}

func TestCallsEndToEnd(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	var o service.Overview
	b.call(&o, "Overview")
	require.Equal(t, b.dir, o.DataDir)
	require.Zero(t, o.Counts.Runs)

	var rules []json.RawMessage
	b.call(&rules, "RiskRules") // a method without an error result
	require.NotEmpty(t, rules)

	plan := `{"nodes":[{"id":"step-1","kind":"tool","tool":"file_write","args":{"path":"hello.txt","content":"hi"},"depends_on":[]}]}`
	var run backend.WorldRun
	b.call(&run, "SubmitTask", ducklmapi.TaskInput{Task: "write a greeting", Plan: plan, ApprovalMode: string(runtime.AutoSandboxed)})
	require.NotEmpty(t, run.ID)

	var runs []runtime.RunSummary
	b.call(&runs, "Runs")
	require.Len(t, runs, 1)
	require.Equal(t, run.ID, runs[0].Run.ID)

	var detail ducklmapi.RunDetail
	b.call(&detail, "RunDetail", run.ID)
	require.Equal(t, run.ID, detail.Run.ID)
	require.NotNil(t, detail.State)

	// A method with only an error result answers null.
	require.Eventually(t, func() bool {
		b.call(&detail, "RunDetail", run.ID)
		return detail.Run.Status.Terminal()
	}, 20*time.Second, 50*time.Millisecond)
	status, data := b.post("CancelRun", `["`+run.ID+`"]`, map[string]string{httpapi.TokenHeader: b.token})
	if status == http.StatusOK {
		require.Equal(t, "null\n", string(data))
	} else {
		require.Equal(t, http.StatusUnprocessableEntity, status, string(data))
	}

	b.call(&o, "Overview")
	require.Equal(t, int64(1), o.Counts.Runs)
	require.Equal(t, int64(1), o.Counts.TaskRuns, "the Runs list's count")
	require.Zero(t, o.Counts.SimulatedWorlds, "a task run's world is real: the Worlds screen does not list it")
	require.Equal(t, int64(1), o.Counts.Worlds)
	require.NotEmpty(t, o.RecentEvents)
}

// sse reads one event stream: one goroutine parses it into msgs.
type sse struct {
	t    *testing.T
	body io.ReadCloser
	msgs chan result
}

type message struct {
	event, id, data string
	comment         bool
}

type result struct {
	m   message
	err error
}

func (b *bundle) events(header map[string]string) *sse {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/api/events?token="+b.token, nil)
	require.NoError(b.t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.srv.Client().Do(req)
	require.NoError(b.t, err)
	require.Equal(b.t, http.StatusOK, resp.StatusCode)
	require.Equal(b.t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := stream(b.t, resp.Body)
	// The stream opens with a comment, before any event.
	require.True(b.t, s.next().comment)
	return s
}

func stream(t *testing.T, body io.ReadCloser) *sse {
	s := &sse{t: t, body: body, msgs: make(chan result, 64)}
	t.Cleanup(func() { body.Close() })
	go func() {
		r := bufio.NewReader(body)
		for {
			m, err := read(r)
			s.msgs <- result{m, err}
			if err != nil {
				close(s.msgs)
				return
			}
		}
	}()
	return s
}

// read parses one message (an event or a comment block).
func read(r *bufio.Reader) (message, error) {
	var m message
	lines := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return m, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if lines > 0 {
				return m, nil
			}
			continue
		}
		lines++
		switch {
		case strings.HasPrefix(line, ":"):
			m.comment = true
		case strings.HasPrefix(line, "event: "):
			m.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			m.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			m.data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// next returns the next message, failing after 30 s.
func (s *sse) next() message {
	s.t.Helper()
	select {
	case r, ok := <-s.msgs:
		require.True(s.t, ok, "the stream ended")
		require.NoError(s.t, r.err)
		return r.m
	case <-time.After(30 * time.Second):
		s.t.Fatal("no message within 30s")
		return message{}
	}
}

// until reads messages until one is the named event and satisfies ok.
func (s *sse) until(event string, ok func(m message) bool) message {
	s.t.Helper()
	for {
		if m := s.next(); m.event == event && ok(m) {
			return m
		}
	}
}

func TestEventsStreamLedgerEventsAppendedAfterConnecting(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	ctx := context.Background()
	// An event committed before the stream opens is not sent again.
	_, err := b.svc.Ledger.Append(ctx, backend.NewID(backend.KindRun), 0,
		backend.Event{Type: "test.before", Payload: []byte(`{}`), Reality: backend.ExternalReal})
	require.NoError(t, err)

	s := b.events(nil)
	stream := backend.NewID(backend.KindRun)
	appended, err := b.svc.Ledger.Append(ctx, stream, 0,
		backend.Event{Type: "test.after", Payload: []byte(`{"n":1}`), Reality: backend.ExternalReal},
		backend.Event{Type: "test.after", Payload: []byte(`{"n":2}`), Reality: backend.ExternalReal})
	require.NoError(t, err)

	m := s.until(httpapi.EventLedger, func(message) bool { return true })
	var events []backend.Event
	require.NoError(t, json.Unmarshal([]byte(m.data), &events))
	require.Len(t, events, 2, "both appends arrive in one batch")
	require.Equal(t, "test.after", events[0].Type)
	require.Equal(t, stream, events[1].Stream)
	require.Equal(t, int64(2), events[1].Seq)
	require.JSONEq(t, `{"n":2}`, string(events[1].Payload))
	require.Equal(t, appended[1].Pos, events[1].Pos)
	require.Equal(t, "3", m.id, "the id is the last global position, for Last-Event-ID")

	// A quiet stream sends heartbeats.
	require.True(t, s.next().comment)
}

func TestEventsStreamResumesAfterLastEventID(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	ctx := context.Background()
	for i := range 3 {
		_, err := b.svc.Ledger.Append(ctx, backend.NewID(backend.KindRun), 0,
			backend.Event{Type: "test.missed", Payload: []byte(`{}`), Reality: backend.ExternalReal, WorldLocalTime: int64(i)})
		require.NoError(t, err)
	}
	s := b.events(map[string]string{"Last-Event-ID": "1"})
	m := s.until(httpapi.EventLedger, func(message) bool { return true })
	var events []backend.Event
	require.NoError(t, json.Unmarshal([]byte(m.data), &events))
	require.Len(t, events, 2)
	require.Equal(t, int64(2), events[0].Pos)
	require.Equal(t, int64(3), events[1].Pos)
}

func TestEventsStreamModelTokens(t *testing.T) {
	t.Parallel()
	fake := ollamatest.NewServer(t)
	plan := `{"decision":"plan","reason":"list the files","confidence":0.9,"plan":{"nodes":[` +
		`{"id":"step-1","kind":"tool","tool":"shell_exec","args":{"command":"ls -la"},"depends_on":[],"title":"list the workspace"}]}}`
	fake.OnChat(func(req api.ChatRequest) ollamatest.Reply {
		if strings.Contains(req.Messages[0].Content, "planner of ducklm") {
			return ollamatest.Reply{Content: plan, Chunks: 8}
		}
		return ollamatest.Reply{Content: `{"score":0.9,"verdict":"pass","reason":"ok"}`}
	})
	b := setup(t, fake.URL().String())
	s := b.events(nil)

	var run backend.WorldRun
	b.call(&run, "SubmitTask", ducklmapi.TaskInput{Task: "list the workspace", ApprovalMode: string(runtime.AskEvery)})

	var text strings.Builder
	s.until(httpapi.EventTokens, func(m message) bool {
		var tokens []service.Token
		require.NoError(t, json.Unmarshal([]byte(m.data), &tokens))
		for _, tok := range tokens {
			require.Equal(t, run.ID, tok.RunID)
			text.WriteString(tok.Text)
		}
		return strings.Contains(text.String(), `"decision"`)
	})
	require.NoError(t, s.body.Close())
}

func TestServerCloseEndsEventStreams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	svc, err := service.OpenWith(context.Background(), dir, service.Options{OllamaHost: "127.0.0.1:1"})
	require.NoError(t, err)
	defer svc.Close()
	token, _ := httpapi.NewToken()
	srv := httptest.NewUnstartedServer(nil)
	h, err := httpapi.New(httpapi.Options{API: ducklmapi.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil))), Service: svc, Token: token,
		Hosts: []string{srv.Listener.Addr().String()}})
	require.NoError(t, err)
	srv.Config.Handler = h
	srv.Start()
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/api/events?token=" + token)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	h.Close()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err, "the stream ends cleanly")
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream did not end when the server closed")
	}
	// A closed server opens no new stream.
	resp2, err := srv.Client().Get(srv.URL + "/api/events?token=" + token)
	require.NoError(t, err)
	resp2.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp2.StatusCode)
}

func TestEventsStreamOutlivesTheServerReadTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	// `ducklm serve` sets a ReadTimeout for calls; a stream must not be cut by it.
	slow := httptest.NewUnstartedServer(b.srv.Config.Handler)
	slow.Config.ReadTimeout = 200 * time.Millisecond
	slow.Start()
	t.Cleanup(func() {
		slow.CloseClientConnections()
		slow.Close()
	})
	req, err := http.NewRequest(http.MethodGet, slow.URL+"/api/events?token="+b.token, nil)
	require.NoError(t, err)
	req.Host = b.srv.Listener.Addr().String() // the one host the handler answers for
	resp, err := slow.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	s := stream(t, resp.Body)
	require.True(t, s.next().comment)
	time.Sleep(600 * time.Millisecond)
	_, err = b.svc.Ledger.Append(context.Background(), backend.NewID(backend.KindRun), 0,
		backend.Event{Type: "test.late", Payload: []byte(`{}`), Reality: backend.ExternalReal})
	require.NoError(t, err)
	m := s.until(httpapi.EventLedger, func(message) bool { return true })
	require.Contains(t, m.data, "test.late")
}
