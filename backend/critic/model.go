package critic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"ducklm/backend"
	"ducklm/backend/ollama"
)

const critiqueSchema = `{
  "type": "object",
  "properties": {
    "score": {"type": "number", "minimum": 0, "maximum": 1},
    "explanation": {"type": "string", "minLength": 1}
  },
  "required": ["score", "explanation"],
  "additionalProperties": false
}`

// CritiqueSchema returns the JSON Schema of a critic model's answer, sent
// as the chat's `format`.
func CritiqueSchema() json.RawMessage {
	return json.RawMessage(critiqueSchema)
}

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(critiqueSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("critique.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("critique.json")
})

// Caps on what a prompt quotes from a step.
const (
	maxStream = 4 << 10 // stdout, stderr each
	maxOutput = 2 << 10 // a tool's structured output, the step's args
)

const system = `You are the critic of ducklm, an assistant that carries out tasks on the user's own computer. You judge how well one step's result serves the task. You do not run anything and you do not decide what happens next.

Answer with one JSON object only: {"score": 0.0 to 1.0, "explanation": "one or two sentences"}.
Score 1 when the step did exactly what the task needed, about 0.5 when it did part of it or its result is doubtful, and 0 when it failed or did something else. A non-zero exit code, a timeout or an error message usually means a low score; an empty output is suspicious when the task needed information. The explanation says what in the result made you score it so.`

// Model critiques with a model through Ollama.
type Model struct {
	Client *ollama.Client
	// Options are model options; nil means {"temperature": 0}.
	Options map[string]any
}

// Evaluate asks req.Model to score the step. A model that cannot be asked,
// or whose answer is not a critique, is an error; WithFallback turns it into
// the heuristic critique.
func (m Model) Evaluate(ctx context.Context, req Request) (Critique, error) {
	if m.Client == nil {
		return Critique{}, backend.Errorf(backend.EUNAVAILABLE, "the critic has no Ollama client")
	}
	if req.Model == "" {
		return Critique{}, backend.Errorf(backend.EINVALID, "no critic model was chosen")
	}
	opts := m.Options
	if opts == nil {
		opts = map[string]any{"temperature": 0}
	}
	resp, err := m.Client.Chat(ctx, ollama.ChatRequest{
		Model: req.Model, Format: CritiqueSchema(), Options: opts, OnToken: req.OnToken,
		Messages: []ollama.Message{{Role: "system", Content: system}, {Role: "user", Content: prompt(req)}},
	})
	if err != nil {
		return Critique{}, err
	}
	return parse(resp.Content, req.Model)
}

func parse(content, model string) (Critique, error) {
	text := strings.TrimSpace(content)
	if strings.HasPrefix(text, "```") && strings.HasSuffix(text, "```") && len(text) >= 6 {
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(text[3:], "```"), "json"))
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return Critique{}, backend.Wrap(err, backend.EINVALID, "the critic model's answer is not valid JSON")
	}
	// The server's grammar fixes the answer's shape, not its bounds: what
	// has one meaning is mended, and the mending recorded.
	notes := mend(doc)
	sch, err := compiled()
	if err != nil {
		return Critique{}, backend.Wrap(err, backend.EINTERNAL, "the critique schema does not compile")
	}
	if err := sch.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		why := err.Error()
		if errors.As(err, &ve) {
			why = describe(ve)
		}
		return Critique{}, backend.Errorf(backend.EINVALID, "the critic model's answer does not match the critique schema: %s", why)
	}
	mended, err := json.Marshal(doc)
	if err != nil {
		return Critique{}, backend.Wrap(err, backend.EINVALID, "the critic model's answer cannot be read")
	}
	var c Critique
	if err := json.Unmarshal(mended, &c); err != nil {
		return Critique{}, backend.Wrap(err, backend.EINVALID, "the critic model's answer cannot be read")
	}
	c.Explanation = strings.TrimSpace(c.Explanation)
	c.Source, c.Model, c.Normalised = SourceModel, model, notes
	return c, nil
}

// mend takes a score outside 0–1 as the nearest bound and gives a blank
// explanation a sentence that says so; it returns what it changed.
func mend(doc any) []string {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	var notes []string
	if n, ok := m["score"].(json.Number); ok {
		if f, err := n.Float64(); err == nil && (f < 0 || f > 1) {
			bound := min(max(f, 0), 1)
			m["score"] = json.Number(strconv.FormatFloat(bound, 'f', -1, 64))
			notes = append(notes, fmt.Sprintf("score %s is outside 0–1: taken as %g", n, bound))
		}
	}
	if e, ok := m["explanation"].(string); ok && strings.TrimSpace(e) == "" {
		m["explanation"] = "The critic model gave a score without an explanation."
		notes = append(notes, "the explanation was empty")
	}
	return notes
}

// describe lists a validation error's leaf failures with their places.
func describe(ve *jsonschema.ValidationError) string {
	var parts []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil || strings.HasPrefix(u.Error.String(), "validation failed") {
			continue
		}
		where := u.InstanceLocation
		if where == "" {
			where = "the top level"
		}
		parts = append(parts, "at "+where+": "+u.Error.String())
	}
	if len(parts) == 0 {
		return ve.Error()
	}
	return strings.Join(parts, "; ")
}

// prompt describes the task and the step's result, with outputs capped.
func prompt(req Request) string {
	r := req.Result
	stdout, stderr := outputs(req)
	var b strings.Builder
	fmt.Fprintf(&b, "Task:\n%s\n\n", strings.TrimSpace(req.Task))
	s := req.Step
	fmt.Fprintf(&b, "Step %s (%s", s.ID, s.Kind)
	if s.Tool != "" {
		fmt.Fprintf(&b, ", tool %s", s.Tool)
	}
	b.WriteString(")")
	if s.Title != "" {
		fmt.Fprintf(&b, ": %s", s.Title)
	}
	b.WriteString("\n")
	if len(s.Args) > 0 {
		fmt.Fprintf(&b, "Args: %s\n", capText(string(s.Args), maxOutput))
	}
	fmt.Fprintf(&b, "\nResult: exit code %d", r.ExitCode)
	if r.TimedOut {
		b.WriteString(", timed out")
	}
	if r.Truncated {
		b.WriteString(", output cut at the output limit")
	}
	if r.Duration > 0 {
		fmt.Fprintf(&b, ", took %s", r.Duration)
	}
	b.WriteString("\n")
	if len(r.FilesChanged) > 0 {
		fmt.Fprintf(&b, "Files changed: %s\n", strings.Join(r.FilesChanged, ", "))
	}
	if len(r.Output) > 0 {
		fmt.Fprintf(&b, "Structured output:\n%s\n", capText(string(r.Output), maxOutput))
	}
	fmt.Fprintf(&b, "\nStdout:\n%s\n", orNone(capText(stdout, maxStream)))
	fmt.Fprintf(&b, "\nStderr:\n%s", orNone(capText(stderr, maxStream)))
	return b.String()
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty)"
	}
	return s
}
