package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/memorypolicy"
)

// StepWeight is the runtime weight FromStep gives a step's result: a tool's
// output is worth keeping when the critic says the step served the task.
const StepWeight = 0.5

// Step is what a finished step offers the memory store.
type Step struct {
	RunID   string
	EventID string // the step.finished event
	Task    string
	Tool    string
	Args    json.RawMessage
	// Stdout is the output the runtime kept (its tail); Output is the
	// tool's structured output, if any.
	Stdout      string
	Output      json.RawMessage
	CriticScore float64
	Tick        int64
}

// stepTextMax bounds a step candidate's text well under the policy's limit.
const stepTextMax = 1500

// FromStep turns a finished step into a candidate: an observation of what
// the tool printed, or, for a simulated world's result (world_sim marks its
// output {"hypothesis": true, "world": ...}), a world-local hypothesis of
// that world. The policy decides whether it is kept.
func FromStep(s Step) Candidate {
	c := Candidate{Type: memorypolicy.Observation, RunID: s.RunID, EventID: s.EventID,
		CriticScore: s.CriticScore, RuntimeWeight: StepWeight, Tick: s.Tick}
	var sim struct {
		Hypothesis bool            `json:"hypothesis"`
		World      string          `json:"world"`
		State      json.RawMessage `json:"state"`
	}
	out := strings.TrimSpace(s.Stdout)
	if json.Unmarshal(s.Output, &sim) == nil && sim.Hypothesis {
		c.Type, c.Reality, c.WorldID = memorypolicy.Hypothesis, backend.WorldLocal, sim.World
		if len(sim.State) > 0 {
			out = compactJSON(sim.State)
		}
	}
	text := fmt.Sprintf("%s %s printed: %s", s.Tool, compactJSON(s.Args), out)
	if out == "" {
		// A tool that prints nothing is remembered by what it returned:
		// the text or content it read (as a reference's "text" takes it),
		// else its output as JSON.
		text = fmt.Sprintf("%s %s printed nothing", s.Tool, compactJSON(s.Args))
		if returned := returnedText(s.Output); returned != "" {
			text = fmt.Sprintf("%s %s returned: %s", s.Tool, compactJSON(s.Args), returned)
		}
	}
	var fetched struct {
		FinalURL  string `json:"final_url"`
		Status    int    `json:"status"`
		FetchedAt string `json:"fetched_at"`
	}
	if json.Unmarshal(s.Output, &fetched) == nil && fetched.FinalURL != "" && fetched.FetchedAt != "" {
		// What a server answered is a fact about that server at that time:
		// the memory says which and when, and keeps both as provenance.
		text = fmt.Sprintf("%s: %s answered %d at %s: %s", s.Tool, fetched.FinalURL, fetched.Status, fetched.FetchedAt, out)
		c.URL = fetched.FinalURL
		if at, err := time.Parse(time.RFC3339Nano, fetched.FetchedAt); err == nil {
			c.ObservedAt = at.UTC()
		}
	}
	if task := strings.TrimSpace(s.Task); task != "" {
		text = fmt.Sprintf("For the task %q, %s", clipRunes(task, 200), text)
	}
	c.Text = clipRunes(text, stepTextMax)
	return c
}

// ContextLines renders retrieved memories for the context builder, one line
// each, saying what they are: a hypothesis names its simulated world.
func ContextLines(rs []Retrieved) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		label := string(r.Type)
		if r.Provenance.Reality == backend.WorldLocal {
			label = "hypothesis from simulated world " + r.Provenance.WorldID + ", not a fact"
		}
		out = append(out, fmt.Sprintf("[%s, similarity %.2f] %s", label, r.Similarity, r.Text))
	}
	return out
}

// ReturnedText is the main text a tool returned in its structured output:
// its "text" or "content" string, trimmed; "" when it has none, and for a
// binary file's content (base64).
func ReturnedText(output json.RawMessage) string {
	var o struct {
		Text     string `json:"text"`
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	}
	if len(output) == 0 || json.Unmarshal(output, &o) != nil {
		return ""
	}
	if t := strings.TrimSpace(o.Text); t != "" {
		return t
	}
	if o.Encoding == "base64" {
		return ""
	}
	return strings.TrimSpace(o.Content)
}

// returnedText is what a tool that printed nothing is remembered by: the
// text it returned, else its output as compact JSON. Left out of it: a
// binary file's content (what the file was is worth keeping, not its
// bytes) and a file's digest beside its path (the tools' receipt of the
// bytes, not something learnt, and 64 hex digits the secret scan would
// redact as a token).
func returnedText(output json.RawMessage) string {
	if t := ReturnedText(output); t != "" {
		return t
	}
	if len(bytes.TrimSpace(output)) == 0 {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(output, &fields) == nil {
		_, binary := fields["encoding"]
		binary = binary && string(fields["encoding"]) == `"base64"`
		_, path := fields["path"]
		_, digest := fields["sha256"]
		if binary || (path && digest) {
			if binary {
				delete(fields, "content")
			}
			if path {
				delete(fields, "sha256")
			}
			data, _ := json.Marshal(fields)
			return string(data)
		}
	}
	return compactJSON(output)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// AnswerWeight is the runtime weight FromAnswer gives a run's answer: the
// orchestrator read the results and answered the task with them.
const AnswerWeight = 0.7

// Answer is what a run's answer offers the memory store.
type Answer struct {
	RunID   string
	EventID string // the run.answered event
	Task    string
	Text    string
	// Cites are the steps it rests on; CriticScore is the critic's mean
	// score of them (0.5 when it rests on none).
	Cites       []string
	CriticScore float64
	Tick        int64
}

// FromAnswer turns a run's answer into a candidate fact, with the run and
// its answer as provenance. The policy decides whether it is kept.
func FromAnswer(a Answer) Candidate {
	text := a.Text
	if task := strings.TrimSpace(a.Task); task != "" {
		text = fmt.Sprintf("For the task %q, the answer was: %s", clipRunes(task, 200), a.Text)
	}
	if len(a.Cites) > 0 {
		text += " (from steps " + strings.Join(a.Cites, ", ") + ")"
	}
	return Candidate{Type: memorypolicy.Fact, RunID: a.RunID, EventID: a.EventID, CriticScore: a.CriticScore,
		RuntimeWeight: AnswerWeight, Tick: a.Tick, Text: clipRunes(strings.TrimSpace(text), stepTextMax)}
}
