package ollamatest_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/require"

	"ducklm/backend/ollama/ollamatest"
)

const script = `{
  "models": ["qwen2.5:7b", "nomic-embed-text"],
  "embed_dims": 4,
  "replies": [
    {"match": "hostname", "system": "planner", "times": 1, "content": "not json"},
    {"match": "hostname", "system": "planner", "json": {"decision": "respond", "reason": "r", "confidence": 0.5, "response": "hi"}},
    {"match": "boom", "status": 500, "error": "out of memory"},
    {"model": "llama3.2:3b", "content": "llama speaking"}
  ],
  "default": {"content": "default reply", "chunks": 2}
}`

func chat(t *testing.T, c *api.Client, model, system, user string) (string, error) {
	t.Helper()
	var sb strings.Builder
	err := c.Chat(context.Background(), &api.ChatRequest{
		Model:    model,
		Messages: []api.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
	}, func(r api.ChatResponse) error { sb.WriteString(r.Message.Content); return nil })
	return sb.String(), err
}

func TestScriptMatchesInOrder(t *testing.T) {
	t.Parallel()
	sc, err := ollamatest.ParseScript([]byte(script))
	require.NoError(t, err)
	srv := ollamatest.NewFromScript(sc)
	t.Cleanup(srv.Close)
	c := api.NewClient(srv.URL(), http.DefaultClient)

	got, err := chat(t, c, "qwen2.5:7b", "You are the planner", "Task: show the hostname")
	require.NoError(t, err)
	require.Equal(t, "not json", got, "the first match answers")
	got, err = chat(t, c, "qwen2.5:7b", "You are the planner", "Task: show the hostname")
	require.NoError(t, err)
	require.Equal(t, `{"decision":"respond","reason":"r","confidence":0.5,"response":"hi"}`, got, "times:1 is used up; json keeps its key order")
	got, err = chat(t, c, "qwen2.5:7b", "You are the critic", "Task: show the hostname")
	require.NoError(t, err)
	require.Equal(t, "default reply", got, "system must match too")

	_, err = chat(t, c, "qwen2.5:7b", "", "boom")
	var se api.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 500, se.StatusCode)
	require.Equal(t, "out of memory", se.ErrorMessage)

	_, err = chat(t, c, "llama3.2:3b", "", "x")
	require.ErrorAs(t, err, &se)
	require.Equal(t, 404, se.StatusCode, "the script's model list replaces the defaults")
	require.Equal(t, "model 'llama3.2:3b' not found", se.ErrorMessage)

	resp, err := c.Embed(context.Background(), &api.EmbedRequest{Model: "nomic-embed-text", Input: "x"})
	require.NoError(t, err)
	require.Equal(t, [][]float32{ollamatest.Vector("nomic-embed-text", "x", 4)}, resp.Embeddings)
}

func TestParseScriptRejectsMistakes(t *testing.T) {
	t.Parallel()
	_, err := ollamatest.ParseScript([]byte(`{"replies": [{"match": "x", "content": "a", "json": {}}]}`))
	require.ErrorContains(t, err, "both content and json")
	_, err = ollamatest.ParseScript([]byte(`{"replys": []}`))
	require.ErrorContains(t, err, "replys")
	_, err = ollamatest.LoadScript(filepath.Join(t.TempDir(), "missing.json"))
	require.Error(t, err)
	require.Error(t, ollamatest.ListenAndServe("127.0.0.1:0", filepath.Join(t.TempDir(), "missing.json")))
}

func TestServeOnListener(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o600))
	sc, err := ollamatest.LoadScript(path)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- ollamatest.Serve(l, sc) }()

	c := api.NewClient(&url.URL{Scheme: "http", Host: l.Addr().String()}, http.DefaultClient)
	require.NoError(t, c.Heartbeat(context.Background()))
	v, err := c.Version(context.Background())
	require.NoError(t, err)
	require.Equal(t, ollamatest.DefaultVersion, v)
	got, err := chat(t, c, "qwen2.5:7b", "", "anything")
	require.NoError(t, err)
	require.Equal(t, "default reply", got)

	require.NoError(t, l.Close())
	require.Error(t, <-done)
}

func TestNonStreamingChatAndRecording(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(t)
	srv.OnChat(func(req api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: "whole answer", DoneReason: "length"}
	})
	c := api.NewClient(srv.URL(), http.DefaultClient)
	stream := false
	var msgs []api.ChatResponse
	err := c.Chat(context.Background(), &api.ChatRequest{
		Model: "llama3.2:3b", Stream: &stream, Format: []byte(`"json"`),
		Messages: []api.Message{{Role: "user", Content: "hi"}},
	}, func(r api.ChatResponse) error { msgs = append(msgs, r); return nil })
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.True(t, msgs[0].Done)
	require.Equal(t, "length", msgs[0].DoneReason)
	require.Equal(t, "whole answer", msgs[0].Message.Content)

	err = c.Chat(context.Background(), &api.ChatRequest{Model: "llama3.2:3b", Format: []byte(`[1]`)},
		func(api.ChatResponse) error { return nil })
	require.ErrorContains(t, err, "invalid format")

	chats := srv.Chats()
	require.Len(t, chats, 2)
	require.Equal(t, "llama3.2:3b", chats[0].Model)
	require.Equal(t, `"json"`, string(chats[0].Format))
	reqs := srv.Requests()
	require.Equal(t, "/api/chat", reqs[0].Path)
	require.Equal(t, http.MethodPost, reqs[0].Method)
}

func TestEmbedInputForms(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(t)
	c := api.NewClient(srv.URL(), http.DefaultClient)
	ctx := context.Background()

	one, err := c.Embed(ctx, &api.EmbedRequest{Model: "nomic-embed-text", Input: "solo"})
	require.NoError(t, err)
	require.Len(t, one.Embeddings, 1)
	require.Len(t, one.Embeddings[0], 8)
	var norm float64
	for _, f := range one.Embeddings[0] {
		norm += float64(f) * float64(f)
	}
	require.InDelta(t, 1, norm, 1e-5, "vectors are unit length")

	short, err := c.Embed(ctx, &api.EmbedRequest{Model: "nomic-embed-text", Input: []string{"a", "b"}, Dimensions: 3})
	require.NoError(t, err)
	require.Len(t, short.Embeddings, 2)
	require.Len(t, short.Embeddings[1], 3)

	none, err := c.Embed(ctx, &api.EmbedRequest{Model: "nomic-embed-text", Input: ""})
	require.NoError(t, err)
	require.Empty(t, none.Embeddings)

	_, err = c.Embed(ctx, &api.EmbedRequest{Model: "nomic-embed-text", Input: []int{1}})
	require.ErrorContains(t, err, "invalid input type")
}

func TestModelInfo(t *testing.T) {
	t.Parallel()
	m := ollamatest.ModelInfo("qwen2.5:7b", modified)
	require.Equal(t, "qwen2.5", m.Details.Family)
	require.Equal(t, "7B", m.Details.ParameterSize)
	require.Equal(t, int64(4.2e9), m.Size)
	m = ollamatest.ModelInfo("library/nomic-embed-text", modified)
	require.Equal(t, "library/nomic-embed-text:latest", m.Name)
	require.Equal(t, "nomic-embed-text", m.Details.Family)
	require.Empty(t, m.Details.ParameterSize)
}

var modified = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
