package taskgraph_test

import (
	"encoding/json"
	"fmt"

	"ducklm/backend/taskgraph"
)

func ExampleParse() {
	cat := taskgraph.MapCatalog{"shell_exec": json.RawMessage(`{"type": "object", "required": ["command"]}`)}
	_, err := taskgraph.Parse([]byte(`{"nodes": [
		{"id": "step-1", "kind": "tool", "tool": "shell_exec", "args": {"command": "uname -a"}},
		{"id": "step-2", "kind": "tool", "tool": "shell_exec", "args": {}, "depends_on": ["step-9"]}
	]}`), cat)
	fmt.Println(err)

	g, _ := taskgraph.Parse([]byte(`{"nodes": [
		{"id": "step-1", "kind": "tool", "tool": "shell_exec", "args": {"command": "uname -a"}},
		{"id": "step-2", "kind": "coder", "args": {"goal": "summarise step-1"}, "depends_on": ["step-1"]}
	]}`), cat)
	fmt.Println(g.Ready(nil))
	fmt.Println(g.Ready(map[string]taskgraph.StepState{"step-1": taskgraph.Done}))
	// Output:
	// step "step-2" has invalid args for tool shell_exec: missing property 'command'; step "step-2" depends on "step-9", which is not in the plan
	// [step-1]
	// [step-2]
}
