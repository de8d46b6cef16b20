package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"ducklm/backend"
	"ducklm/backend/router"
	"ducklm/backend/taskgraph"
)

// resolveReady fills in the earlier results that the arguments of the
// ready steps name (taskgraph.Ref), before the router decides about them:
// the risk, the approval card and the step's start all read the resolved
// args. It looks at the ready steps only (a decision costs the same however
// long the plan), and reports whether it changed any step: the router's
// view must then be built again. A reference that cannot be resolved (a
// line past the end, a value too large) fails its step with the reason,
// without running it.
func (c *Controller) resolveReady(ctx context.Context, st *RunState, ready []router.ReadyStep) (changed bool, err error) {
	var failed []backend.Event
	for _, r := range ready {
		rec := st.Steps[r.Node.ID]
		if rec == nil || len(rec.Resolved) > 0 || len(rec.ApprovedArgs) > 0 || !taskgraph.HasRefs(rec.Node.Args) {
			continue
		}
		args, err := taskgraph.Substitute(rec.Node.Args, func(ref taskgraph.Ref) (string, error) { return c.refValue(ctx, st, ref) })
		if err != nil {
			failed = append(failed, event(EvStepFinished, stepFinished{Step: rec.Node.ID,
				Error: "its arguments could not take the earlier results they name: " + err.Error()}, st.Ticks))
			continue
		}
		rec.Resolved, changed = args, true
	}
	if len(failed) == 0 {
		return changed, nil
	}
	if err := c.appendWith(ctx, st, nil, failed...); err != nil {
		return true, err
	}
	return true, c.catchUp(ctx, st)
}

// refValue is the value a reference names.
func (c *Controller) refValue(ctx context.Context, st *RunState, r taskgraph.Ref) (string, error) {
	rec := st.Steps[r.From]
	if rec == nil || rec.Result == nil {
		return "", fmt.Errorf("%s has no result", r.From)
	}
	res := rec.Result
	var text string
	switch r.Take {
	case "stdout":
		text = c.outputOf(ctx, res.Stdout, res.StdoutTail)
	case "stderr":
		text = c.outputOf(ctx, res.Stderr, res.StderrTail)
	case "text":
		text = c.resultText(ctx, rec)
	case "exit_code":
		text = strconv.Itoa(res.ExitCode)
	case "output":
		v, err := outputPath(res.Output, r.Path)
		if err != nil {
			return "", fmt.Errorf("%s's output: %w", r.From, err)
		}
		text = v
	default:
		return "", fmt.Errorf("%q is not a result a step has", r.Take)
	}
	v, err := r.Pick(text)
	if err != nil {
		return "", err
	}
	if len(v) > taskgraph.MaxRefBytes {
		return "", fmt.Errorf("%s's %s is %d bytes, more than the %d an argument may take; take one line of it, or have the step write a file",
			r.From, r.Take, len(v), taskgraph.MaxRefBytes)
	}
	return v, nil
}

// outputOf is a step's whole stdout or stderr: the blob when the event
// holds only its tail.
func (c *Controller) outputOf(ctx context.Context, ref *backend.BlobRef, tail string) string {
	if ref == nil {
		return tail
	}
	data, err := c.d.Blobs.Get(ctx, *ref)
	if err != nil {
		c.d.Log("read step output", "blob", ref.Digest, "err", err)
		return tail
	}
	return string(data)
}

// resultText is a step's main text: what it printed, else the text of its
// structured output (a web page's text, a read file's content), else that
// output as JSON.
func (c *Controller) resultText(ctx context.Context, rec *StepRecord) string {
	res := rec.Result
	if res == nil {
		return ""
	}
	if out := c.outputOf(ctx, res.Stdout, res.StdoutTail); strings.TrimSpace(out) != "" {
		return out
	}
	if len(res.Output) > 0 {
		var fields map[string]json.RawMessage
		if json.Unmarshal(res.Output, &fields) == nil {
			for _, k := range []string{"text", "content"} {
				var s string
				if json.Unmarshal(fields[k], &s) == nil && s != "" {
					return s
				}
			}
		}
		return string(res.Output)
	}
	return c.outputOf(ctx, res.Stderr, res.StderrTail)
}

// outputPath picks a dot path ("items.0.name") of a structured output; a
// string is itself, anything else its JSON.
func outputPath(out json.RawMessage, path string) (string, error) {
	if len(out) == 0 {
		return "", fmt.Errorf("there is no structured output")
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return "", fmt.Errorf("it is not JSON")
	}
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			switch cur := v.(type) {
			case map[string]any:
				next, ok := cur[part]
				if !ok {
					return "", fmt.Errorf("it has no field %q (path %q)", part, path)
				}
				v = next
			case []any:
				i, err := strconv.Atoi(part)
				if err != nil || i < 0 || i >= len(cur) {
					return "", fmt.Errorf("it has no item %q (path %q)", part, path)
				}
				v = cur[i]
			default:
				return "", fmt.Errorf("%q is past a value with no fields (path %q)", part, path)
			}
		}
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	data, _ := json.Marshal(v)
	return string(data), nil
}

// truncateUTF8 is s cut to at most n bytes, on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// lastUTF8 is the last n bytes of s at most, from a rune boundary.
func lastUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
