package taskgraph_test

import (
	"testing"

	"ducklm/backend"
	"ducklm/backend/taskgraph"
)

// FuzzParse: arbitrary bytes never panic; a failure is always EINVALID with
// a message; a success is a DAG whose order puts every step after its
// dependencies.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `{"nodes": []}`, `{"nodes": [{}]}`, `{"nodes": null}`,
		`{"nodes": [{"id": "a", "kind": "tool", "tool": "world_sim"}]}`,
		`{"nodes": [{"id": "a", "kind": "tool", "tool": "shell_exec", "args": {"command": "ls"}, "depends_on": ["b"]}, {"id": "b", "kind": "coder", "args": {"goal": "g"}, "depends_on": ["a"]}]}`,
		`{"nodes": [{"id": "a", "kind": "tool", "tool": "shell_exec", "args": {"command": "ls"}, "depends_on": ["a", "a", "z"]}, {"id": "a", "kind": "x"}]}`,
		`{"nodes": [{"id": "x", "kind": "coder", "tool": "coder", "args": {"goal": "g", "language": "sh"}, "title": "t"}, {"id": 1}]}`,
		`{"nodes": [{"id": "a", "kind": "tool", "tool": "file_write", "args": {"path": "p", "content": "c"}, "depends_on": []}], "x": 1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := taskgraph.Parse(data, catalog)
		if err != nil {
			if code := backend.ErrorCode(err); code != backend.EINVALID {
				t.Fatalf("code %q for %q: %v", code, data, err)
			}
			if backend.ErrorMessage(err) == "" {
				t.Fatalf("empty message for %q", data)
			}
			return
		}
		order := g.Order()
		if len(order) != g.Len() {
			t.Fatalf("order has %d of %d steps", len(order), g.Len())
		}
		pos := map[string]int{}
		for i, id := range order {
			pos[id] = i
		}
		for _, n := range g.Nodes() {
			for _, d := range n.DependsOn {
				if pos[d] >= pos[n.ID] {
					t.Fatalf("%s runs before its dependency %s", n.ID, d)
				}
			}
		}
		if ready := g.Ready(nil); len(ready) == 0 {
			t.Fatalf("a valid graph has no ready step")
		}
	})
}
