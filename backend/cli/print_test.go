package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/memorypolicy"
	"ducklm/backend/runtime"
)

// printEvent prints one event as a terminal line, with nothing printed
// before it.
func printEvent(w io.Writer, e backend.Event) { (&printer{}).print(w, e) }

// printEvent decodes a payload only for a line that shows some of it; what
// each line shows is unchanged.
func TestPrintEventLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, payload, want string
	}{
		{runtime.EvStepStarted, `{"step":"s1","tool":"file_read","args":{"path":"f.txt"}}`, "   7  step.started             s1 file_read {\"path\":\"f.txt\"}\n"},
		{runtime.EvStepFinished, `{"step":"s1","exitCode":0,"stdoutTail":"hello\nworld\n"}`, "   7  step.finished            s1 exit 0\n      hello\n      world\n"},
		// A column of numbers keeps its alignment: only blank lines before it and white space after it go.
		{runtime.EvStepFinished, `{"step":"s1","exitCode":0,"stdoutTail":"\n  1 notes.txt\n  3 data.csv\n  4 total\n"}`,
			"   7  step.finished            s1 exit 0\n        1 notes.txt\n        3 data.csv\n        4 total\n"},
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
		{runtime.EvStepFinished, `{"step":"r","exitCode":0,"output":{"path":"a.txt","bytes":6,"encoding":"utf-8","content":"alpha\n"}}`, "   7  step.finished            r exit 0\n      alpha\n"},
		{runtime.EvStepFinished, `{"step":"b","exitCode":0,"output":{"path":"a.png","bytes":3,"encoding":"base64","content":"iVBO"}}`, "   7  step.finished            b exit 0\n"},
		{runtime.EvPlanProposed, `{"graphFrom":"request","attempt":1,"source":"explicit"}`, "   7  plan.proposed            the plan given with the task\n"},
		{runtime.EvPlanProposed, `{"graph":{"nodes":[{"id":"a"},{"id":"b"}]},"model":"tiny:latest","attempt":2,"source":"model"}`, "   7  plan.proposed            2 steps by tiny:latest\n"},
		{runtime.EvPlanAccepted, `{"graph":{"nodes":[{"id":"a"}]},"model":"tiny:latest","attempt":1,"source":"model"}`, "   7  plan.accepted            1 step\n"},
		{runtime.EvCritique, `{"step":"s1","score":0.9,"explanation":"fine"}`, "   7  critic.scored            s1 score 0.9: fine\n"},
		{memory.EvDecided, `{"decision":"merge","text":"a long text nobody reads here"}`, "   7  memory.decided           decided (ducklm memory ls shows what is kept)\n"},
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

// A memory decision says what became of a result, read with the run's
// policy table as the window reads it: one made after its result's line
// (the late path) also says whose result it was, and one made with the
// result is a line under it.
func TestAMemoryDecisionSaysWhatItKept(t *testing.T) {
	t.Parallel()
	policy, err := json.Marshal(memory.PolicyPayload{Digest: "sha256:t", Table: memorypolicy.Thresholds})
	require.NoError(t, err)
	decided := func(in memorypolicy.Input, memoryID string) []byte {
		data, err := json.Marshal(memory.DecidedPayload{Input: in, TableDigest: "sha256:t", MemoryID: memoryID})
		require.NoError(t, err)
		return data
	}
	in := memorypolicy.Input{CriticScore: 0.9, MemoryType: memorypolicy.Observation, RuntimeWeight: 0.5, TextRunes: 141}
	exact := in
	exact.Dedup = memorypolicy.Dedup{ExactMatch: true, NearestSimilarity: 1}
	low := in
	low.CriticScore, low.RuntimeWeight = 0.1, 0.1
	var out bytes.Buffer
	pr := &printer{}
	for _, e := range []backend.Event{
		{Seq: 3, Type: memory.EvPolicy, Payload: policy, Reality: backend.ExternalReal},
		{Seq: 8, ID: "evt_count", Type: runtime.EvStepFinished, Payload: []byte(`{"step":"count","exitCode":0}`)},
		{Seq: 9, Type: memory.EvDecided, CausationID: "evt_count", Payload: decided(in, "mem_1"), Reality: backend.ExternalReal},
		{Seq: 10, Type: memory.EvDecided, CausationID: "evt_elsewhere", Payload: decided(low, ""), Reality: backend.ExternalReal},
		{Seq: 11, Type: memory.EvSkipped, CausationID: "evt_count", Payload: []byte(`{"stage":"embed","reason":"the embedding model is gone"}`)},
		{Seq: 12, ID: "evt_again", Type: runtime.EvStepFinished, Reality: backend.ExternalReal,
			Payload: []byte(`{"step":"again","exitCode":0,"memory":` + string(decided(exact, "mem_1")) + `}`)},
	} {
		pr.print(&out, e)
	}
	require.Equal(t, "   8  step.finished            count exit 0\n"+
		"   9  memory.decided           count: kept as observation mem_1\n"+
		"  10  memory.decided           not kept: worth 0.10 (critic 0.10, runtime weight 0.10) is below the 0.50 an observation needs\n"+
		"  11  memory.skipped           count: not kept: the embedding model is gone\n"+
		"  12  step.finished            again exit 0\n      memory: merged into mem_1, which holds the same text\n", out.String())
}
