package cli

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/runtime"
)

// printEvent decodes a payload only for a line that shows some of it; what
// each line shows is unchanged.
func TestPrintEventLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, payload, want string
	}{
		{runtime.EvStepStarted, `{"step":"s1","tool":"file_read","args":{"path":"f.txt"}}`, "   7  step.started             s1 file_read {\"path\":\"f.txt\"}\n"},
		{runtime.EvStepFinished, `{"step":"s1","exitCode":0,"stdoutTail":"hello\nworld\n"}`, "   7  step.finished            s1 exit 0\n      hello\n      world\n"},
		{runtime.EvStepFinished, `{"step":"s2","exitCode":1,"error":"no such file","placement":{"workers":2,"branches":8}}`,
			"   7  step.finished            s2 did not run: no such file\n      ran on the team's workers: 8 branches on 2 workers\n"},
		{runtime.EvStepFinished, `{"step":"ok","exitCode":0,"error":"the coder failed: tiny repeated \"*\""}`,
			"   7  step.finished            ok did not run: the coder failed: tiny repeated \"*\"\n"},
		{runtime.EvStepFinished, `{"step":"s5","exitCode":-1,"timedOut":true,"stdoutTail":"partial\n"}`,
			"   7  step.finished            s5 timed out\n      partial\n"},
		{runtime.EvStepFinished, `{"step":"s3","exitCode":0,"stdoutTail":"hi\n","critique":{"score":0.9,"explanation":"The step succeeded and produced output.","source":"heuristic","modelError":"no critic model is available","decision":"noop"},"checkpointId":"ckp_1"}`,
			"   7  step.finished            s3 exit 0 · score 0.9 (rule of thumb): The step succeeded and produced output.\n      hi\n"},
		{runtime.EvStepFinished, `{"step":"s4","exitCode":0,"critique":{"score":0.75,"explanation":"Mostly right.","source":"model","model":"m"}}`,
			"   7  step.finished            s4 exit 0 · score 0.75: Mostly right.\n"},
		{runtime.EvCritique, `{"step":"s1","score":0.9,"explanation":"fine"}`, "   7  critic.scored            s1 score 0.9: fine\n"},
		{memory.EvDecided, `{"decision":"merge","text":"a long text nobody reads here"}`, "   7  memory.decided           \n"},
		{runtime.EvDecision, `{"kind":"run_tool"}`, ""},
		{runtime.EvCheckpoint, `{"blob":"sha256:00"}`, ""},
		{runtime.EvCompleted, `{"reason":"Every step of the plan is done."}`, "   7  run.completed            Every step of the plan is done.\n"},
		{runtime.EvStepStarted, `not json`, "   7  step.started               \n"},
	} {
		var out bytes.Buffer
		printEvent(&out, backend.Event{Seq: 7, Type: c.typ, Payload: []byte(c.payload)})
		require.Equal(t, c.want, out.String(), "%s %s", c.typ, c.payload)
	}
}

// A command's && and redirections read as typed on the terminal (the
// approval prompt, a step's start), not as JSON's HTML escapes; an escaped
// backslash before them stays as it was, and the text is still JSON.
func TestCompactGivesBackWhatJSONEscapesForHTML(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{"command":"ls -la \u0026\u0026 echo done \u003e out.txt \u003c in.txt"}`, `{"command":"ls -la && echo done > out.txt < in.txt"}`},
		{`{"a":"\\u0026"}`, `{"a":"\\u0026"}`},
		{`{"a":"\\\u0026"}`, `{"a":"\\&"}`},
		{`{"a":"\u00e9\"\u0026"}`, `{"a":"\u00e9\"&"}`},
		{`{ "a" : 1 }`, `{"a":1}`},
	} {
		got := compact(json.RawMessage(c.in))
		require.Equal(t, c.want, got, c.in)
		require.True(t, json.Valid([]byte(got)), got)
	}
}
