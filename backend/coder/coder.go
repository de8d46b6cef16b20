// Package coder is the coder: a model writes a helper script for a coder
// step. It only writes; the script is stored, shown for approval and run by
// the sandbox like any other step. It never runs what it writes.
package coder

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"ducklm/backend"
	"ducklm/backend/ollama"
	"ducklm/backend/runtime"
)

var _ runtime.Coder = Model{}

// Model writes scripts with an Ollama model.
type Model struct {
	Client *ollama.Client
	// Fallback is the model used when a request names none.
	Fallback string
}

// maxScript bounds what a model may hand back as a script.
const maxScript = 64 << 10

func schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","additionalProperties":false,"required":["language","script"],
"properties":{"language":{"type":"string","enum":["sh","python"]},"script":{"type":"string","minLength":1},"explanation":{"type":"string"}}}`)
}

// Write asks the model for a script that achieves req.Goal.
func (m Model) Write(ctx context.Context, req runtime.CoderRequest) (runtime.CoderScript, error) {
	model := req.Model
	if model == "" {
		model = m.Fallback
	}
	if m.Client == nil || model == "" {
		return runtime.CoderScript{}, backend.Errorf(backend.EUNAVAILABLE, "no coder model is available: start Ollama with a code model, or replace the coder step with a shell step")
	}
	lang := req.Language
	if lang != "python" {
		lang = "sh"
	}
	system := "You are the coder of ducklm. Write one self-contained " + lang + " script that achieves the goal. " +
		"It runs in a sandbox whose working directory is the task's workspace, with a read-only system, " +
		"no network unless approved, and time and memory limits. Print results to standard output. " +
		`Answer with JSON only: {"language": "` + lang + `", "script": "...", "explanation": "one sentence"}.`
	user := fmt.Sprintf("Task: %s\nGoal of this step: %s", req.Task, req.Goal)
	resp, err := m.Client.Chat(ctx, ollama.ChatRequest{Model: model, Format: schema(), OnToken: req.OnToken,
		Messages: []ollama.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Options:  map[string]any{"temperature": 0}})
	if err != nil {
		return runtime.CoderScript{}, err
	}
	var out struct {
		Language string `json:"language"`
		Script   string `json:"script"`
	}
	if err := json.Unmarshal([]byte(resp.Content), &out); err != nil || strings.TrimSpace(out.Script) == "" {
		return runtime.CoderScript{}, backend.Errorf(backend.EINVALID, "the coder model %s did not answer with a script", model)
	}
	if len(out.Script) > maxScript {
		return runtime.CoderScript{}, backend.Errorf(backend.ELIMIT, "the coder model %s wrote a script of %d bytes, more than %d", model, len(out.Script), maxScript)
	}
	if out.Language != "python" {
		out.Language = "sh"
	}
	return runtime.CoderScript{Language: out.Language, Source: out.Script, Model: resp.Model}, nil
}
