// Package ollamatest is a fake Ollama server for tests and end-to-end runs:
// it speaks the wire protocol the real github.com/ollama/ollama/api client
// uses (GET /api/version, GET /api/tags, POST /api/chat streaming NDJSON or
// one JSON object, POST /api/embed, HEAD and GET /) and answers chats with
// scripted replies, so ducklm's model paths run without model weights.
//
// A Server records every request, so a test can assert the messages and the
// `format` schema that were sent. Replies are scripted per chat with OnChat
// (content split into stream chunks, a delay per chunk, an HTTP error, an
// error written mid-stream, a connection dropped after N chunks), or from a
// JSON script file for a server in its own process (see Script and
// ListenAndServe).
//
// The package does not import "testing": NewServer takes any value with
// Helper and Cleanup, so a hidden CLI can link it without test flags. It
// never runs a model and never reaches the network beyond its listener.
package ollamatest
