package ollamatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ollama/ollama/api"
)

func (s *Server) chat(w http.ResponseWriter, r *http.Request, rec Request) {
	var req api.ChatRequest
	if err := decode(rec.Body, &req); err != nil {
		s.record(rec)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	rec.Chat = &req
	s.record(rec)

	switch {
	case req.Model == "":
		writeError(w, http.StatusBadRequest, "model is required")
		return
	case !s.installed(req.Model):
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	case !validFormat(req.Format):
		// Ollama finds this only when the runner starts, and reports it as a 500.
		writeError(w, http.StatusInternalServerError,
			fmt.Sprintf("invalid format: %q; expected \"json\" or a valid JSON Schema object", req.Format))
		return
	}

	s.mu.Lock()
	script := s.onChat
	s.mu.Unlock()
	reply := Reply{Content: NoReply}
	if script != nil {
		reply = script(req)
	}
	if reply.Status >= 400 {
		writeError(w, reply.Status, reply.Error)
		return
	}
	if reply.DropAfter < 0 {
		panic(http.ErrAbortHandler) // the server closes the connection unanswered
	}
	streaming := req.Stream == nil || *req.Stream
	chunks := split(reply.Content, reply.Chunks)
	start := time.Now()
	if !streaming {
		if !pause(r, reply.Delay*time.Duration(len(chunks))) {
			return
		}
		if reply.DropAfter > 0 {
			panic(http.ErrAbortHandler)
		}
		if reply.Error != "" {
			writeError(w, http.StatusInternalServerError, reply.Error)
			return
		}
		final := finalMessage(req, reply, len(chunks), start)
		final.Message.Content = reply.Content
		writeJSON(w, http.StatusOK, final)
		return
	}

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	for i, c := range chunks {
		if reply.DropAfter > 0 && i == reply.DropAfter {
			panic(http.ErrAbortHandler)
		}
		if !pause(r, reply.Delay) {
			return
		}
		enc.Encode(api.ChatResponse{
			Model: req.Model, CreatedAt: time.Now().UTC(),
			Message: api.Message{Role: "assistant", Content: c},
		})
		flush()
	}
	if reply.DropAfter > 0 {
		panic(http.ErrAbortHandler)
	}
	if reply.Cut {
		return
	}
	if reply.Error != "" {
		enc.Encode(map[string]string{"error": reply.Error})
		return
	}
	enc.Encode(finalMessage(req, reply, len(chunks), start))
}

// finalMessage is the "done" message that closes a stream, with the counts
// and durations Ollama reports.
func finalMessage(req api.ChatRequest, reply Reply, evals int, start time.Time) api.ChatResponse {
	reason := reply.DoneReason
	if reason == "" {
		reason = "stop"
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content))
	}
	total := time.Since(start)
	return api.ChatResponse{
		Model: req.Model, CreatedAt: time.Now().UTC(),
		Message: api.Message{Role: "assistant"},
		Done:    true, DoneReason: reason,
		Metrics: api.Metrics{
			TotalDuration: total + time.Millisecond, LoadDuration: time.Millisecond,
			PromptEvalCount: prompt, PromptEvalDuration: time.Millisecond,
			EvalCount: evals, EvalDuration: total,
		},
	}
}

// validFormat mirrors Ollama: nothing, null, "", "json", or an object.
func validFormat(f json.RawMessage) bool {
	s := strings.TrimSpace(string(f))
	switch s {
	case "", "null", `""`, `"json"`:
		return true
	}
	return strings.HasPrefix(s, "{") && json.Valid(f)
}

// pause waits d, or reports false if the client went away first.
func pause(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// split cuts s into n pieces of about equal rune count, or into words with
// their trailing spaces when n <= 0. Concatenated, the pieces are s.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 {
		var out []string
		start := 0
		for i, r := range s {
			if r == ' ' || r == '\n' {
				out = append(out, s[start:i+utf8.RuneLen(r)])
				start = i + utf8.RuneLen(r)
			}
		}
		if start < len(s) {
			out = append(out, s[start:])
		}
		return out
	}
	runes := []rune(s)
	if n > len(runes) {
		n = len(runes)
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, string(runes[i*len(runes)/n:(i+1)*len(runes)/n]))
	}
	return out
}
