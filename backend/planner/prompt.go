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
	if f := strings.TrimSpace(req.Feedback); f != "" {
		user.WriteString("\nYour previous answer was rejected: " + f + "\nAnswer again with a corrected JSON object.\n")
	}
	return []ollama.Message{
		{Role: "system", Content: strings.TrimRight(sys.String(), "\n")},
		{Role: "user", Content: strings.TrimRight(user.String(), "\n")},
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
