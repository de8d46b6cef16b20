package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/ollama/ollama/api"

	"ducklm/backend"
)

// Operations, for the sentences an error carries.
const (
	opVersion = "version"
	opList    = "list"
	opChat    = "chat"
	opEmbed   = "embed"
)

// call describes the request an error belongs to.
type call struct {
	op      string
	model   string
	started bool // part of the answer had arrived
}

// doing says what Ollama was doing, for "... while <doing>".
func (cl call) doing() string {
	switch cl.op {
	case opChat:
		return cl.model + " was answering"
	case opEmbed:
		return cl.model + " was embedding text"
	case opList:
		return "it listed its models"
	}
	return "it reported its version"
}

// can is what the call needed the model to do.
func (cl call) can() string {
	if cl.op == opEmbed {
		return "make embeddings"
	}
	return "chat"
}

// instead is what to choose in place of a model that cannot do the call.
func (cl call) instead() string {
	if cl.op == opEmbed {
		return "choose an embedding model as the embedder in Settings, such as nomic-embed-text (ollama pull nomic-embed-text), or the built-in ducklm-hash-384"
	}
	return "choose a chat model for this role in Settings, such as qwen2.5:7b (ollama pull qwen2.5:7b)"
}

// errDropped marks a stream that ended before Ollama said it was done.
var errDropped = errors.New("the stream ended before the final message")

// classify turns any failure of a call into a *backend.Error, once, so every
// caller shows the same sentence for the same trouble.
func (t *target) classify(ctx context.Context, err error, cl call) error {
	host := t.host.String()
	if ctxErr := ctx.Err(); ctxErr != nil {
		var tmo errCallTimeout
		cause := context.Cause(ctx)
		switch {
		case errors.As(cause, &tmo):
			return backend.Wrap(ctxErr, backend.EUNAVAILABLE,
				"Ollama at %s gave up after %s while %s (the call's time limit)", host, tmo.d, cl.doing())
		case errors.Is(ctxErr, context.DeadlineExceeded):
			return backend.Wrap(ctxErr, backend.EUNAVAILABLE,
				"the deadline passed while %s in Ollama at %s", cl.doing(), host)
		default:
			return backend.Wrap(ctxErr, backend.EUNAVAILABLE,
				"the request to Ollama at %s was cancelled while %s", host, cl.doing())
		}
	}

	var se api.StatusError
	if errors.As(err, &se) {
		return t.statusError(se, cl)
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return backend.Wrap(err, backend.EUNAVAILABLE,
			"Ollama at %s asks to be signed in (HTTP %d); run `ollama signin` or use a local server", host, ae.StatusCode)
	}

	if reason, ok := unreachable(err); ok && !cl.started {
		return backend.Wrap(err, backend.EUNAVAILABLE,
			"Ollama is not reachable at %s (%s); start it with `ollama serve`, or correct the Ollama host in Settings", host, reason)
	}
	if errors.Is(err, errDropped) || dropped(err) {
		if cl.op == opChat {
			return backend.Wrap(err, backend.EUNAVAILABLE,
				"the connection to Ollama dropped while %s", cl.doing())
		}
		return backend.Wrap(err, backend.EUNAVAILABLE,
			"the connection to Ollama at %s dropped while %s", host, cl.doing())
	}

	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return backend.Wrap(err, backend.EUNAVAILABLE,
			"the server at %s sent a reply that is not Ollama's while %s; check OLLAMA_HOST", host, cl.doing())
	}
	// What is left is an error Ollama wrote into the stream after it began
	// ({"error": "..."} on a 200 response), which the api package returns as
	// a plain error carrying Ollama's text.
	return backend.Errorf(backend.EUNAVAILABLE, "Ollama failed while %s: %s", cl.doing(), sentence(err.Error()))
}

func (t *target) statusError(se api.StatusError, cl call) error {
	host := t.host.String()
	msg := sentence(se.ErrorMessage)
	if msg == "" {
		msg = sentence(se.Status)
	}
	switch {
	case cl.model != "" && strings.Contains(se.ErrorMessage, "does not support"):
		// The server is fine; the model cannot do this (Ollama answers 400
		// or 501): choosing it again will not help, another model will.
		return backend.Wrap(se, backend.EINVALID, "model %s cannot %s (Ollama: %s); %s", cl.model, cl.can(), msg, cl.instead())
	case se.StatusCode == http.StatusNotFound && cl.model != "" && strings.Contains(se.ErrorMessage, "model"):
		return backend.Wrap(se, backend.ENOTFOUND,
			"model %s is not installed in Ollama (ollama pull %s)", cl.model, cl.model)
	case se.StatusCode == http.StatusNotFound:
		return backend.Wrap(se, backend.EUNAVAILABLE,
			"Ollama at %s does not offer what ducklm asked for while %s (%s); it may be too old, so update it", host, cl.doing(), msg)
	case se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests:
		return backend.Wrap(se, backend.EUNAVAILABLE,
			"Ollama at %s failed while %s: %s (HTTP %d)", host, cl.doing(), msg, se.StatusCode)
	}
	return backend.Wrap(se, backend.EINTERNAL,
		"Ollama at %s refused the request while %s: %s (HTTP %d)", host, cl.doing(), msg, se.StatusCode)
}

// unreachable reports whether err means no Ollama answered at all, and a
// short reason a person understands.
func unreachable(err error) (string, bool) {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "its host name does not resolve", true
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "connection refused", true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		if op.Timeout() {
			return "connecting timed out", true
		}
		return "cannot connect", true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "it did not answer in time", true
	}
	return "", false
}

// dropped reports whether err means an open connection was cut.
func dropped(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

// sentence trims Ollama's text to fit inside one of ours.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, ".")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
