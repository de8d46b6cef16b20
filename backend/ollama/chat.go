package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"ducklm/backend"
)

// Message is one turn of a chat.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// ChatRequest is one chat call.
type ChatRequest struct {
	Model    string
	Messages []Message
	// Format constrains the answer: a JSON Schema object, or the JSON string
	// "json" for any JSON; nil for free text.
	Format json.RawMessage
	// Options are model options (temperature, num_ctx, seed, ...).
	Options map[string]any
	// OnToken, if set, receives each piece of the answer as it arrives, in
	// order. It runs on the caller's goroutine and slows the stream if slow.
	OnToken func(string)
	// Timeout bounds this call; 0 uses the client's timeout.
	Timeout time.Duration
}

// ChatResponse is the whole answer of a finished chat.
type ChatResponse struct {
	Content      string
	Model        string
	DoneReason   string // "stop", or "length" when the answer hit the token limit
	PromptTokens int
	EvalTokens   int
	Duration     time.Duration // Ollama's total time, or the wall time if it sent none
	// Unstreamed says the stream was cut and the answer came from asking
	// again without streaming.
	Unstreamed bool
}

// DoneRepeat is ChatResponse.DoneReason for an answer Ollama cut because
// the model repeated one token too often; Chat returns it with
// ErrRepetition.
const DoneRepeat = "repeat"

// ErrRepetition is wrapped by the error of a chat whose model looped on one
// token until Ollama stopped it (more than 30 identical tokens in a row).
// The answer so far comes with it; the server itself is fine.
var ErrRepetition = errors.New("the model repeated one token until Ollama stopped it")

// repeatLimit is Ollama's: llm/server.go stops a completion after more than
// 30 identical tokens (compared without surrounding spaces).
const repeatLimit = 30

// repeatCounter tracks the last token of a stream and how often it came in
// a row, the way Ollama does.
type repeatCounter struct {
	last string
	run  int
}

func (r *repeatCounter) add(tok string) {
	t := strings.TrimSpace(tok)
	if r.run > 0 && t == r.last {
		r.run++
		return
	}
	r.last, r.run = t, 1
}

// cut reports whether a stream that ended without its final message ended
// on Ollama's repeat limit.
func (r *repeatCounter) cut() bool { return r.run >= repeatLimit }

func (r *repeatCounter) describe() string {
	if r.last == "" {
		return "white space"
	}
	return strconv.Quote(r.last)
}

// Chat sends the messages and streams the answer, handing each token to
// req.OnToken. It returns the assembled answer once Ollama says it is done;
// a stream that ends without that is an error, never a short answer.
//
// A stream cut after it began (the connection dropped, the server
// restarted) is asked once more without streaming (DESIGN.md: streaming
// failure → sync fallback): the whole answer then comes in one reply,
// ChatResponse.Unstreamed says so, and no more tokens reach OnToken. Only
// when that fails too is the cut an error.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	resp, err, cut := c.chat(ctx, req, true)
	if !cut {
		return resp, err
	}
	sync, serr, _ := c.chat(ctx, req, false)
	if serr != nil {
		return resp, err // the cut, as it happened
	}
	sync.Unstreamed = true
	return sync, nil
}

// chat makes one chat call, streamed or not. cut reports a stream that
// began and was cut (not a cancel, not Ollama's repeat limit).
func (c *Client) chat(ctx context.Context, req ChatRequest, stream bool) (_ ChatResponse, _ error, cut bool) {
	cl := call{op: opChat, model: req.Model}
	if req.Model == "" {
		return ChatResponse{}, backend.Errorf(backend.EINVALID, "no chat model was named"), false
	}
	if err := checkFormat(req.Format); err != nil {
		return ChatResponse{}, err, false
	}
	msgs := make([]api.Message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	areq := &api.ChatRequest{Model: req.Model, Messages: msgs, Stream: &stream, Format: req.Format, Options: req.Options}

	t := c.current()
	ctx, cancel := c.callContext(ctx, req.Timeout)
	defer cancel()
	start := time.Now()
	var (
		content strings.Builder
		out     ChatResponse
		done    bool
		repeats repeatCounter
	)
	err := t.api.Chat(ctx, areq, func(r api.ChatResponse) error {
		cl.started = true
		if tok := r.Message.Content; tok != "" {
			content.WriteString(tok)
			repeats.add(tok)
			if req.OnToken != nil && stream {
				req.OnToken(tok)
			}
		}
		if r.Done {
			done = true
			out.Model = r.Model
			out.DoneReason = r.DoneReason
			out.PromptTokens = r.PromptEvalCount
			out.EvalTokens = r.EvalCount
			out.Duration = r.TotalDuration
		}
		return nil
	})
	// api.Client.Chat reads the stream with a bufio.Scanner and ignores its
	// error, so a cancelled context or a cut connection ends the stream with
	// a nil error: only the missing final "done" message tells them apart
	// from a finished answer.
	if err == nil && !done {
		err = errDropped
		if repeats.cut() && ctx.Err() == nil {
			// Ollama ends an answer whose model repeats one token more
			// than 30 times without a final message; the server is fine.
			return ChatResponse{Content: content.String(), Model: req.Model, DoneReason: DoneRepeat},
				backend.Wrap(ErrRepetition, backend.EINVALID,
					"%s repeated %s over and over, so Ollama stopped its answer; a larger model, or a retry at a higher temperature, may answer",
					req.Model, repeats.describe()), false
		}
	}
	if stream && cl.started && ctx.Err() != nil {
		t.release(req.Model)
	}
	if err != nil {
		cut := stream && cl.started && ctx.Err() == nil && (errors.Is(err, errDropped) || dropped(err))
		return ChatResponse{}, t.classify(ctx, err, cl), cut
	}
	out.Content = content.String()
	if out.Model == "" {
		out.Model = req.Model
	}
	if out.Duration <= 0 {
		out.Duration = time.Since(start)
	}
	return out, nil, false
}

// checkFormat rejects what Ollama would reject only after loading the model.
func checkFormat(f json.RawMessage) error {
	s := strings.TrimSpace(string(f))
	switch {
	case s == "", s == "null", s == `""`, s == `"json"`:
		return nil
	case strings.HasPrefix(s, "{") && json.Valid(f):
		return nil
	}
	return backend.Errorf(backend.EINVALID, `a chat format must be "json" or a JSON Schema object`)
}

// release has the server unload model after this client left one of its
// answers mid-stream (a cancel, a deadline). Ollama (0.17 and before) can
// keep the model's only slot held when its client goes while it streams:
// its handler stops reading the answer, the goroutine that feeds it waits
// forever with the slot, and every later call to the model waits too
// (ollama/ollama#17131). Unloading the model ends that runner, and the next
// call loads it again (in a moment for a model in the system's cache). The
// unload is asked before the call returns, so the caller's next call finds
// it under way (Ollama then waits for it and loads the model anew) instead
// of queueing behind the held slot, which would keep the model from being
// unloaded at all. A failure changes nothing and is dropped.
func (t *target) release(model string) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_ = t.api.Generate(ctx, &api.GenerateRequest{Model: model, KeepAlive: &api.Duration{}},
		func(api.GenerateResponse) error { return nil })
}

// releaseTimeout bounds how long a cancelled call waits for its unload.
const releaseTimeout = 3 * time.Second
