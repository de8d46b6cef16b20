package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
)

const model = "qwen2.5:7b"

func setup(t *testing.T) (*ollamatest.Server, *ollama.Client) {
	t.Helper()
	srv := ollamatest.NewServer(t)
	return srv, ollama.New(srv.URL(), nil)
}

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, code, backend.ErrorCode(err), "error: %v", err)
}

func TestChatStreamsTokensInOrder(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: "alpha beta gamma delta", Chunks: 4}
	})
	var tokens []string
	resp, err := c.Chat(context.Background(), ollama.ChatRequest{
		Model:    model,
		Messages: []ollama.Message{{Role: "user", Content: "say four words"}},
		OnToken:  func(s string) { tokens = append(tokens, s) },
	})
	require.NoError(t, err)
	require.Len(t, tokens, 4)
	require.Equal(t, "alpha beta gamma delta", strings.Join(tokens, ""))
	require.Equal(t, "alpha beta gamma delta", resp.Content)
	require.Equal(t, model, resp.Model)
	require.Equal(t, "stop", resp.DoneReason)
	require.Equal(t, 4, resp.EvalTokens)
	require.Equal(t, 3, resp.PromptTokens)
	require.Positive(t, resp.Duration)
}

func TestChatSendsFormatMessagesAndOptions(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	schema := json.RawMessage(`{"type":"object","properties":{"score":{"type":"number"}},"required":["score"]}`)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply { return ollamatest.Reply{Content: `{"score":0.5}`} })
	msgs := []ollama.Message{{Role: "system", Content: "judge"}, {Role: "user", Content: "how good?"}}
	resp, err := c.Chat(context.Background(), ollama.ChatRequest{
		Model: model, Messages: msgs, Format: schema, Options: map[string]any{"temperature": 0},
	})
	require.NoError(t, err)
	require.JSONEq(t, `{"score":0.5}`, resp.Content)

	chats := srv.Chats()
	require.Len(t, chats, 1)
	got := chats[0]
	require.JSONEq(t, string(schema), string(got.Format))
	require.NotNil(t, got.Stream)
	require.True(t, *got.Stream)
	require.Equal(t, map[string]any{"temperature": float64(0)}, got.Options)
	require.Len(t, got.Messages, 2)
	for i, m := range msgs {
		require.Equal(t, m.Role, got.Messages[i].Role)
		require.Equal(t, m.Content, got.Messages[i].Content)
	}
}

func TestChatRejectsBadFormatWithoutCalling(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	_, err := c.Chat(context.Background(), ollama.ChatRequest{Model: model, Format: json.RawMessage(`["x"]`)})
	requireCode(t, err, backend.EINVALID)
	_, err = c.Chat(context.Background(), ollama.ChatRequest{})
	requireCode(t, err, backend.EINVALID)
	require.Empty(t, srv.Requests())
}

func TestModelsAndVersion(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	srv.SetModels("qwen2.5:7b", "nomic-embed-text")
	models, err := c.Models(context.Background())
	require.NoError(t, err)
	require.Len(t, models, 2)
	require.Equal(t, "qwen2.5:7b", models[0].Name)
	require.Equal(t, "qwen2.5", models[0].Family)
	require.Equal(t, "7B", models[0].ParameterSize)
	require.Positive(t, models[0].Size)
	require.False(t, models[0].Modified.IsZero())
	require.Equal(t, "nomic-embed-text:latest", models[1].Name)

	v, err := c.Version(context.Background())
	require.NoError(t, err)
	require.Equal(t, ollamatest.DefaultVersion, v)
	require.Equal(t, srv.URL().String(), c.Host())
}

func TestEmbedShapes(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServerWith(t, ollamatest.Options{EmbedDims: 16})
	c := ollama.New(srv.URL(), nil)
	inputs := []string{"one", "two", "one"}
	vecs, err := c.Embed(context.Background(), "nomic-embed-text", inputs)
	require.NoError(t, err)
	require.Len(t, vecs, 3)
	for i, v := range vecs {
		require.Len(t, v, 16)
		require.Equal(t, ollamatest.Vector("nomic-embed-text", inputs[i], 16), v)
	}
	require.Equal(t, vecs[0], vecs[2])
	require.NotEqual(t, vecs[0], vecs[1])

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.JSONEq(t, `{"model":"nomic-embed-text","input":["one","two","one"],"options":null}`, string(reqs[0].Body))

	empty, err := c.Embed(context.Background(), "nomic-embed-text", nil)
	require.NoError(t, err)
	require.Empty(t, empty)
	require.Len(t, srv.Requests(), 1, "no inputs, no request")
}

func TestEmbedScriptedAndFailing(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	srv.OnEmbed(func(model, input string) ([]float32, error) {
		if input == "bad" {
			return nil, errors.New("the runner crashed")
		}
		return []float32{float32(len(input)), 1}, nil
	})
	vecs, err := c.Embed(context.Background(), "nomic-embed-text", []string{"abc"})
	require.NoError(t, err)
	require.Equal(t, [][]float32{{3, 1}}, vecs)

	_, err = c.Embed(context.Background(), "nomic-embed-text", []string{"bad"})
	requireCode(t, err, backend.EUNAVAILABLE)
	require.Contains(t, err.Error(), "the runner crashed")

	_, err = c.Embed(context.Background(), "missing-embedder", []string{"x"})
	requireCode(t, err, backend.ENOTFOUND)
	require.Equal(t, "model missing-embedder is not installed in Ollama (ollama pull missing-embedder)", backend.ErrorMessage(err))
}

// closedPort returns the URL of a loopback port nothing listens on.
func closedPort(t *testing.T) *url.URL {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return &url.URL{Scheme: "http", Host: addr}
}

func TestUnreachableHost(t *testing.T) {
	t.Parallel()
	host := closedPort(t)
	c := ollama.New(host, nil)
	ctx := context.Background()

	_, err := c.Chat(ctx, ollama.ChatRequest{Model: model, Messages: []ollama.Message{{Role: "user", Content: "hi"}}})
	requireCode(t, err, backend.EUNAVAILABLE)
	msg := backend.ErrorMessage(err)
	require.Equal(t, "Ollama is not reachable at "+host.String()+" (connection refused); start it with `ollama serve`, or correct the Ollama host in Settings", msg)

	_, err = c.Models(ctx)
	requireCode(t, err, backend.EUNAVAILABLE)
	require.Contains(t, backend.ErrorMessage(err), host.String())
	_, err = c.Embed(ctx, "e", []string{"x"})
	requireCode(t, err, backend.EUNAVAILABLE)
	_, err = c.Version(ctx)
	requireCode(t, err, backend.EUNAVAILABLE)
}

func TestUnresolvableHost(t *testing.T) {
	t.Parallel()
	c := ollama.New(&url.URL{Scheme: "http", Host: "ollama.invalid:11434"}, nil)
	_, err := c.Models(context.Background())
	requireCode(t, err, backend.EUNAVAILABLE)
	require.Contains(t, backend.ErrorMessage(err), "http://ollama.invalid:11434")
	require.Contains(t, backend.ErrorMessage(err), "ollama serve")
}

func TestChatModelNotFound(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	_, err := c.Chat(context.Background(), ollama.ChatRequest{Model: "nope:1b", Messages: []ollama.Message{{Role: "user", Content: "hi"}}})
	requireCode(t, err, backend.ENOTFOUND)
	require.Equal(t, "model nope:1b is not installed in Ollama (ollama pull nope:1b)", backend.ErrorMessage(err))
}

func TestChatHTTPErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		reply ollamatest.Reply
		code  string
		want  string
	}{
		{"server error", ollamatest.Reply{Status: 500, Error: "llama runner process has terminated: out of memory"}, backend.EUNAVAILABLE,
			"Ollama at %s failed while qwen2.5:7b was answering: llama runner process has terminated: out of memory (HTTP 500)"},
		{"busy", ollamatest.Reply{Status: 503, Error: "server busy, please try again.  maximum pending requests exceeded"}, backend.EUNAVAILABLE,
			"Ollama at %s failed while qwen2.5:7b was answering: server busy, please try again.  maximum pending requests exceeded (HTTP 503)"},
		{"bad request", ollamatest.Reply{Status: 400, Error: "invalid options"}, backend.EINTERNAL,
			"Ollama at %s refused the request while qwen2.5:7b was answering: invalid options (HTTP 400)"},
		{"error mid-stream", ollamatest.Reply{Content: "half an", Error: "an error was encountered while running the model: unexpected EOF"}, backend.EUNAVAILABLE,
			"Ollama failed while qwen2.5:7b was answering: an error was encountered while running the model: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, c := setup(t)
			srv.OnChat(func(api.ChatRequest) ollamatest.Reply { return tc.reply })
			_, err := c.Chat(context.Background(), ollama.ChatRequest{Model: model})
			requireCode(t, err, tc.code)
			want := tc.want
			if strings.Contains(want, "%s") {
				want = strings.Replace(want, "%s", srv.URL().String(), 1)
			}
			require.Equal(t, want, backend.ErrorMessage(err))
		})
	}
}

func TestTagsFailureAndMissingRoute(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	srv.Fail("/api/tags", 500, "manifests are unreadable")
	_, err := c.Models(context.Background())
	requireCode(t, err, backend.EUNAVAILABLE)
	require.Contains(t, backend.ErrorMessage(err), "manifests are unreadable")

	srv.Fail("/api/tags", 0, "")
	_, err = c.Models(context.Background())
	require.NoError(t, err)

	// An Ollama too old to have /api/embed answers gin's plain-text 404.
	srv.Fail("/api/embed", 404, "404 page not found")
	_, err = c.Embed(context.Background(), "nomic-embed-text", []string{"x"})
	requireCode(t, err, backend.EUNAVAILABLE)
	require.Contains(t, backend.ErrorMessage(err), "too old")
}

func TestSlowStreamStopsAtDeadline(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: strings.Repeat("slow ", 100), Delay: 300 * time.Millisecond}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Chat(ctx, ollama.ChatRequest{Model: model})
	require.Less(t, time.Since(start), 10*time.Second, "the stream goes on for 30 s")
	requireCode(t, err, backend.EUNAVAILABLE)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, backend.ErrorMessage(err), "deadline")
}

func TestSlowStreamStopsAtCallTimeout(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: "a b c d e f", Delay: time.Second}
	})
	var mu sync.Mutex
	var got []string
	start := time.Now()
	// Seconds apart, so that a loaded machine keeps the order: the first
	// token at 1 s, the request's limit at 1.5 s, the client's at 10 s.
	_, err := c.WithTimeout(10*time.Second).Chat(context.Background(), ollama.ChatRequest{
		Model: model, Timeout: 1500 * time.Millisecond,
		OnToken: func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() },
	})
	require.Less(t, time.Since(start), 6*time.Second)
	requireCode(t, err, backend.EUNAVAILABLE)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, backend.ErrorMessage(err), "gave up after 1.5s while qwen2.5:7b was answering")
	mu.Lock()
	require.Equal(t, []string{"a "}, got, "tokens before the timeout were delivered")
	mu.Unlock()
}

func TestCancelStopsStream(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: "a b c d e f", Delay: 200 * time.Millisecond}
	})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := c.Chat(ctx, ollama.ChatRequest{Model: model, OnToken: func(string) { cancel() }})
	requireCode(t, err, backend.EUNAVAILABLE)
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, backend.ErrorMessage(err), "cancelled")
}

// unloads lists the model unloads a fake server received (a generate call
// with keep_alive 0 and no prompt).
func unloads(t *testing.T, srv *ollamatest.Server) []string {
	t.Helper()
	var out []string
	for _, r := range srv.Requests() {
		if r.Path != "/api/generate" {
			continue
		}
		var g struct {
			Model     string `json:"model"`
			Prompt    string `json:"prompt"`
			KeepAlive string `json:"keep_alive"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &g))
		require.Empty(t, g.Prompt)
		require.Equal(t, "0s", g.KeepAlive)
		out = append(out, g.Model)
	}
	return out
}

// A stream this client leaves (a cancel, a deadline) has the model unloaded
// before the call returns: Ollama 0.17 can keep the model's only slot held
// by a stream whose client went (ollama/ollama#17131), and the unload ends
// that runner. A stream that ends by itself, or that never began, does not.
func TestALeftStreamUnloadsItsModel(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	srv.OnChat(func(r api.ChatRequest) ollamatest.Reply {
		if r.Messages[0].Content == "quick" {
			return ollamatest.Reply{Content: "done"}
		}
		return ollamatest.Reply{Content: "a b c d e f", Delay: 200 * time.Millisecond}
	})
	_, err := c.Chat(context.Background(), ollama.ChatRequest{Model: model, Messages: []ollama.Message{{Role: "user", Content: "quick"}}})
	require.NoError(t, err)
	require.Empty(t, unloads(t, srv), "a stream that ended by itself")

	ctx, cancel := context.WithCancel(context.Background())
	_, err = c.Chat(ctx, ollama.ChatRequest{Model: model, Messages: []ollama.Message{{Role: "user", Content: "long"}},
		OnToken: func(string) { cancel() }})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, []string{model}, unloads(t, srv), "a cancelled stream, before the call returned")

	_, err = c.Chat(context.Background(), ollama.ChatRequest{Model: model, Messages: []ollama.Message{{Role: "user", Content: "long"}},
		Timeout: 300 * time.Millisecond})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, []string{model, model}, unloads(t, srv), "a stream past its deadline")

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = c.Chat(ctx, ollama.ChatRequest{Model: model, Messages: []ollama.Message{{Role: "user", Content: "long"}}})
	require.Error(t, err)
	require.Len(t, unloads(t, srv), 2, "a call cancelled before its stream began")
}

func TestDroppedStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		dropAfter int
		tokens    int
	}{{"mid-stream", 2, 2}, {"before the final message", 5, 5}, {"before any byte", -1, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, c := setup(t)
			srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
				return ollamatest.Reply{Content: "one two three four five", DropAfter: tc.dropAfter}
			})
			n := 0
			_, err := c.Chat(context.Background(), ollama.ChatRequest{Model: model, OnToken: func(string) { n++ }})
			requireCode(t, err, backend.EUNAVAILABLE)
			require.Equal(t, "the connection to Ollama dropped while qwen2.5:7b was answering", backend.ErrorMessage(err))
			require.Equal(t, tc.tokens, n)
		})
	}
}

func TestFromEnvReadsOllamaHost(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:4321")
	require.Equal(t, "http://127.0.0.1:4321", ollama.FromEnv().Host())
	t.Setenv("OLLAMA_HOST", "")
	require.Equal(t, "http://127.0.0.1:11434", ollama.FromEnv().Host())
}

func TestNotOllamaAtHost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!DOCTYPE html><p>router login</p>")
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	_, err = ollama.New(u, nil).Models(context.Background())
	requireCode(t, err, backend.EUNAVAILABLE)
	require.Equal(t, "the server at "+srv.URL+" sent a reply that is not Ollama's while it listed its models; check OLLAMA_HOST", backend.ErrorMessage(err))
}

func TestChatCutForRepetitionIsNotADroppedServer(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	// Ollama ends a stream whose model repeats one token more than 30 times
	// without a final message, as a clean end of the response.
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: `{"a":` + strings.Repeat(" ", 31), Chunks: 36, Cut: true}
	})
	resp, err := c.Chat(context.Background(), ollama.ChatRequest{Model: model, Messages: []ollama.Message{{Role: "user", Content: "x"}}})
	requireCode(t, err, backend.EINVALID)
	require.ErrorIs(t, err, ollama.ErrRepetition)
	require.Equal(t, model+" repeated white space over and over, so Ollama stopped its answer; a larger model, or a retry at a higher temperature, may answer",
		backend.ErrorMessage(err))
	require.Equal(t, ollama.DoneRepeat, resp.DoneReason)
	require.Equal(t, `{"a":`+strings.Repeat(" ", 31), resp.Content, "the answer so far comes with the error")

	// A stream cut short of the limit is a dropped connection: it is asked
	// once more without streaming, and that answer is the answer.
	var streamed []bool
	srv.OnChat(func(req api.ChatRequest) ollamatest.Reply {
		streamed = append(streamed, req.Stream == nil || *req.Stream)
		return ollamatest.Reply{Content: strings.Repeat("o", 10), Chunks: 10, Cut: true}
	})
	var tokens []string
	resp, err = c.Chat(context.Background(), ollama.ChatRequest{Model: model, Messages: []ollama.Message{{Role: "user", Content: "x"}},
		OnToken: func(tok string) { tokens = append(tokens, tok) }})
	require.NoError(t, err)
	require.True(t, resp.Unstreamed)
	require.Equal(t, strings.Repeat("o", 10), resp.Content)
	require.Equal(t, []bool{true, false}, streamed, "asked again without streaming")
	require.Len(t, tokens, 10, "the tokens of the cut stream, none of the unstreamed answer")

	// When the unstreamed call fails too, the cut is the error, as before.
	srv.OnChat(func(req api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: strings.Repeat("o", 10), Chunks: 10, DropAfter: 3}
	})
	_, err = c.Chat(context.Background(), ollama.ChatRequest{Model: model, Messages: []ollama.Message{{Role: "user", Content: "x"}}})
	requireCode(t, err, backend.EUNAVAILABLE)
	require.NotErrorIs(t, err, ollama.ErrRepetition)
	require.Contains(t, backend.ErrorMessage(err), "dropped")
}

func TestModelThatCannotDoTheCallSaysWhatToChoose(t *testing.T) {
	t.Parallel()
	srv, c := setup(t)
	// What a real Ollama 0.17.4 answers when a model cannot embed (HTTP
	// 501), or an embedding model is asked to chat (HTTP 400).
	srv.OnChat(func(api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Status: http.StatusBadRequest, Error: `"nomic-embed-text" does not support chat`}
	})
	_, err := c.Chat(context.Background(), ollama.ChatRequest{Model: "nomic-embed-text", Messages: []ollama.Message{{Role: "user", Content: "x"}}})
	requireCode(t, err, backend.EINVALID)
	require.Equal(t, `model nomic-embed-text cannot chat (Ollama: "nomic-embed-text" does not support chat); choose a chat model for this role in Settings, such as qwen2.5:7b (ollama pull qwen2.5:7b)`,
		backend.ErrorMessage(err))

	embed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotImplemented)
		_, _ = w.Write([]byte(`{"error":"this model does not support embeddings"}`))
	}))
	t.Cleanup(embed.Close)
	u, _ := url.Parse(embed.URL)
	_, err = ollama.New(u, nil).Embed(context.Background(), "tiny", []string{"x"})
	requireCode(t, err, backend.EINVALID)
	require.Equal(t, "model tiny cannot make embeddings (Ollama: this model does not support embeddings); choose an embedding model as the embedder in Settings, "+
		"such as nomic-embed-text (ollama pull nomic-embed-text), or the built-in ducklm-hash-384", backend.ErrorMessage(err))
}
