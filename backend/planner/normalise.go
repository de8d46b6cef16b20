package planner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// normaliseAnswer mends, in place, what a model's answer (decoded by
// decodeJSON) gets wrong in a way that has one meaning, and says what it
// mended. Ollama turns the plan schema into a grammar that fixes structure,
// key names, types, enums and required keys, but not numeric bounds,
// lengths or rules across fields; of those, only the unambiguous are mended
// here — everything else is left for the schema check and a replan:
//   - a confidence outside 0–1 is taken as the nearest bound;
//   - step ids and dependencies lose surrounding spaces;
//   - an empty step id that no step depends on becomes step-N (its place);
//   - a dependency listed twice is listed once;
//   - a coder step's "tool" is dropped (coder steps have none).
func normaliseAnswer(doc any) []string {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	var notes []string
	if n, ok := root["confidence"].(json.Number); ok {
		if f, err := n.Float64(); err == nil && (f < 0 || f > 1) {
			bound := min(max(f, 0), 1)
			root["confidence"] = json.Number(strconv.FormatFloat(bound, 'f', -1, 64))
			notes = append(notes, fmt.Sprintf("confidence %s is outside 0–1: taken as %g", n, bound))
		}
	}
	plan, _ := root["plan"].(map[string]any)
	nodes, _ := plan["nodes"].([]any)
	used := map[string]bool{}
	referenced := map[string]bool{}
	for i, raw := range nodes {
		node, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		if id, ok := node["id"].(string); ok {
			if t := strings.TrimSpace(id); t != id {
				node["id"] = t
				notes = append(notes, fmt.Sprintf("step id %q of plan.nodes[%d] lost its surrounding spaces", id, i))
			}
			used[node["id"].(string)] = true
		}
		deps, _ := node["depends_on"].([]any)
		var kept []any
		for _, d := range deps {
			s, ok := d.(string)
			if !ok {
				kept = append(kept, d)
				continue
			}
			t := strings.TrimSpace(s)
			if t != s {
				notes = append(notes, fmt.Sprintf("plan.nodes[%d] dependency %q lost its surrounding spaces", i, s))
			}
			if slices.Contains(kept, any(t)) {
				notes = append(notes, fmt.Sprintf("plan.nodes[%d] listed dependency %q twice: once is enough", i, t))
				continue
			}
			kept = append(kept, t)
			referenced[t] = true
		}
		if deps != nil {
			if kept == nil {
				kept = []any{}
			}
			node["depends_on"] = kept
		}
		if node["kind"] == "coder" {
			if _, ok := node["tool"]; ok {
				delete(node, "tool")
				notes = append(notes, fmt.Sprintf("plan.nodes[%d] is a coder step, so its \"tool\" was dropped", i))
			}
		}
	}
	for i, raw := range nodes {
		node, ok := raw.(map[string]any)
		if !ok || node["id"] != "" || referenced[""] {
			continue
		}
		id := fmt.Sprintf("step-%d", i+1)
		if used[id] {
			continue
		}
		node["id"] = id
		used[id] = true
		notes = append(notes, fmt.Sprintf("plan.nodes[%d] had an empty id: named %s after its place", i, id))
	}
	return notes
}
