package planner

import (
	"bytes"
	"encoding/json"
	"strings"

	"ducklm/backend/ollama"
)

const systemIntro = `You are the planner of ducklm, an assistant that carries out tasks on the user's own computer. You do not run anything yourself: you answer with one JSON object, and ducklm checks it and runs the steps it describes.

Answer with the JSON object only, no text before or after it:
{"decision": "plan" | "respond" | "fail", "reason": "why, in one sentence", "confidence": 0.0 to 1.0, "plan": {"nodes": [...]}, "response": "..."}

Choose the decision:
- "respond" when the task needs no tool, such as a question you can answer from the context alone. Put the answer in "response" and leave out "plan".
- "plan" when the task needs tools. Put the steps in "plan" and leave out "response".
- "fail" when no plan with the tools below can do the task. Say why in "reason".

Each step in "plan.nodes" is {"id": "step-1", "kind": "tool", "tool": "<tool name>", "args": {...}, "depends_on": [], "title": "what this step does"}:
- Number the ids step-1, step-2, ... in the order the steps should run.
- "depends_on" lists the ids of the earlier steps whose results this step needs, or [] if none.
- "kind" is "tool" to call one of the tools below with "args" that match its args schema, or "coder" to have a helper script written and run when no tool fits; a coder step leaves out "tool" and gives "args": {"goal": "what the script must do"}.
- Use only the tools listed below, by their exact names. Never invent a tool or an argument.
- Use the fewest steps that do the task.
- A task that names a URL, or asks what a web page says, reads it with web_fetch and that exact URL (method GET unless the task says what to send). Use browser only for a page that shows its text only with JavaScript. Never use shell_exec with curl or wget for a page.

"confidence" is how sure you are, from 0 to 1, that your answer does the task.`

// messages builds the chat for one planning attempt: the role, rules and
// catalog as the system message; the task, context and any feedback on the
// previous attempt as the user message.
func messages(req Request) []ollama.Message {
	var sys strings.Builder
	sys.WriteString(systemIntro)
	sys.WriteString("\n\nTools:\n")
	if len(req.Catalog) == 0 {
		sys.WriteString("(none: answer with \"respond\", \"fail\", or coder steps)\n")
	}
	for _, t := range req.Catalog {
		sys.WriteString("- " + t.Name + ": " + strings.TrimSpace(t.Description) + "\n")
		if len(t.ArgsSchema) > 0 {
			sys.WriteString("  args schema: " + compact(t.ArgsSchema) + "\n")
		}
	}

	var user strings.Builder
	user.WriteString("Task:\n" + strings.TrimSpace(req.Task) + "\n")
	if c := strings.TrimSpace(req.Context); c != "" {
		user.WriteString("\nContext:\n" + c + "\n")
	}
	if r := req.Revision; r != nil {
		user.WriteString("\n" + revisionText(r))
	}
	msgs := []ollama.Message{
		{Role: "system", Content: strings.TrimRight(sys.String(), "\n")},
		{Role: "user", Content: strings.TrimRight(user.String(), "\n")},
	}
	f := strings.TrimSpace(req.Feedback)
	if f == "" {
		return msgs
	}
	// The model sees what it answered and exactly why it was refused, as
	// turns of the conversation, so it can correct rather than start over.
	if prev := strings.TrimSpace(req.Previous); prev != "" {
		msgs = append(msgs, ollama.Message{Role: "assistant", Content: prev})
	}
	return append(msgs, ollama.Message{Role: "user",
		Content: "Your previous answer was rejected: " + f + "\nAnswer again with a corrected JSON object."})
}

// revisionText tells the model which steps finished and which failed, and
// what a revised plan may contain.
func revisionText(r *Revision) string {
	var b strings.Builder
	b.WriteString("A plan for this task was being carried out, and a step failed.\n")
	if len(r.Done) > 0 {
		b.WriteString("These steps finished and stay as they are (do not repeat them; new steps may list their ids in \"depends_on\"):\n")
		for _, s := range r.Done {
			b.WriteString(outcomeLine(s))
		}
	}
	b.WriteString("These steps failed after their retries:\n")
	for _, s := range r.Failed {
		b.WriteString(outcomeLine(s))
	}
	b.WriteString("Answer with a revised plan whose nodes are only the new steps that finish the task another way " +
		"(new ids, not the ids above), or \"fail\" if the task cannot be done with the tools.\n")
	return b.String()
}

func outcomeLine(s StepOutcome) string {
	what := s.Tool
	if s.Kind == "coder" || what == "" {
		what = "coder"
	}
	line := "- " + s.ID + " (" + what
	if len(s.Args) > 0 {
		line += " " + compact(s.Args)
	}
	line += ")"
	if s.Result != "" {
		line += ": " + strings.Join(strings.Fields(s.Result), " ")
	}
	return line + "\n"
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
