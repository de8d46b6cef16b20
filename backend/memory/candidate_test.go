package memory_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
)

func TestFromStepAndContextLines(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ev := backend.NewID(backend.KindEvent)
	c := memory.FromStep(memory.Step{RunID: f.run, EventID: ev, Task: "what is this machine's hostname", Tool: "shell_exec",
		Args: json.RawMessage(`{ "command": "hostnamectl" }`), Stdout: "Static hostname: build-07\n  Chassis: vm\n", CriticScore: 0.9, Tick: 4})
	require.Equal(t, mp.Observation, c.Type)
	require.Equal(t, memory.StepWeight, c.RuntimeWeight)
	require.Equal(t, `For the task "what is this machine's hostname", shell_exec {"command":"hostnamectl"} printed: Static hostname: build-07
  Chassis: vm`, c.Text)
	d := f.consider(t, c)
	require.Equal(t, mp.Store, d.Decision.Action, d.Decision.Reason)
	require.EqualValues(t, 4, f.events(t, memory.EvDecided)[0].WorldLocalTime)

	world := backend.NewID(backend.KindWorld)
	sim := memory.FromStep(memory.Step{RunID: f.run, EventID: ev, Tool: "world_sim", Args: json.RawMessage(`{"example":"branching_grid"}`),
		Output: json.RawMessage(`{"hypothesis":true,"world":"` + world + `","state":{"pos":[3, 4]}}`), CriticScore: 0.8})
	require.Equal(t, mp.Hypothesis, sim.Type)
	require.Equal(t, backend.WorldLocal, sim.Reality)
	require.Equal(t, world, sim.WorldID)
	require.Contains(t, sim.Text, `printed: {"pos":[3,4]}`)
	f.consider(t, sim)

	long := memory.FromStep(memory.Step{RunID: f.run, Tool: "shell_exec", Stdout: strings.Repeat("x", 5000)})
	require.Len(t, []rune(long.Text), 1500)

	got, err := f.store.Retrieve(f.ctx, "hostname of the machine", 5, memory.Filter{})
	require.NoError(t, err)
	lines := memory.ContextLines(got)
	require.Len(t, lines, 2)
	require.True(t, strings.HasPrefix(lines[0], "[observation, similarity "), lines[0])
	require.Contains(t, lines[1], "[hypothesis from simulated world "+world+", not a fact, similarity")
}

func TestFromStepKeepsAFetchedPagesURLAndTime(t *testing.T) {
	t.Parallel()
	c := memory.FromStep(memory.Step{RunID: "run_1", EventID: "evt_1", Task: "summarise the notes", Tool: "web_fetch",
		Args:        json.RawMessage(`{"url":"https://news.example/notes"}`),
		Stdout:      "Version 2.4 adds a fetch tool.",
		Output:      json.RawMessage(`{"final_url":"https://news.example/notes/2.4","status":200,"fetched_at":"2026-12-01T18:00:00Z","text":"…"}`),
		CriticScore: 0.9})
	require.Equal(t, mp.Observation, c.Type)
	require.Equal(t, "run_1", c.RunID)
	require.Equal(t, "evt_1", c.EventID)
	require.Contains(t, c.Text, "web_fetch: https://news.example/notes/2.4 answered 200 at 2026-12-01T18:00:00Z: Version 2.4 adds a fetch tool.")
	require.Equal(t, "https://news.example/notes/2.4", c.URL)
	require.Equal(t, "2026-12-01T18:00:00Z", c.ObservedAt.Format(time.RFC3339))
}

// A tool that prints nothing but returns what it did (a file read, a file
// written, an MCP tool's text) is remembered by that: what was read, what
// was written. It was "file_read {...} printed: " with nothing after it.
func TestFromStepRemembersWhatAToolReturnedWhenItPrintedNothing(t *testing.T) {
	t.Parallel()
	read := memory.FromStep(memory.Step{RunID: "run_1", Task: "what port does nginx use", Tool: "file_read",
		Args:   json.RawMessage(`{"path":"nginx.conf"}`),
		Output: json.RawMessage(`{"path":"nginx.conf","bytes":21,"sha256":"ab","encoding":"utf-8","truncated":false,"content":"listen 8080;\nworkers 4;\n"}`)})
	require.Equal(t, `For the task "what port does nginx use", file_read {"path":"nginx.conf"} returned: listen 8080;
workers 4;`, read.Text)
	mcp := memory.FromStep(memory.Step{RunID: "run_1", Tool: "mcp_call", Args: json.RawMessage(`{"tool":"echo"}`),
		Output: json.RawMessage(`{"text":"Echo: hi"}`)})
	require.Equal(t, `mcp_call {"tool":"echo"} returned: Echo: hi`, mcp.Text)
	wrote := memory.FromStep(memory.Step{RunID: "run_1", Tool: "file_write", Args: json.RawMessage(`{"path":"a.txt","content":"x"}`),
		Output: json.RawMessage(`{"path":"a.txt", "bytes":1,"sha256":"2d"}`)})
	require.Equal(t, `file_write {"path":"a.txt","content":"x"} returned: {"bytes":1,"path":"a.txt"}`, wrote.Text,
		"a file's digest is its receipt, not something learnt")
	hashed := memory.FromStep(memory.Step{RunID: "run_1", Tool: "mcp_call", Args: json.RawMessage(`{"tool":"hash"}`),
		Output: json.RawMessage(`{"sha256":"2d","algorithm":"sha256"}`)})
	require.Equal(t, `mcp_call {"tool":"hash"} returned: {"sha256":"2d","algorithm":"sha256"}`, hashed.Text, "a digest a tool was asked for is kept")
	binary := memory.FromStep(memory.Step{RunID: "run_1", Tool: "file_read", Args: json.RawMessage(`{"path":"a.png"}`),
		Output: json.RawMessage(`{"path":"a.png","bytes":3,"sha256":"cd","encoding":"base64","truncated":false,"content":"iVBO"}`)})
	require.Equal(t, `file_read {"path":"a.png"} returned: {"bytes":3,"encoding":"base64","path":"a.png","truncated":false}`, binary.Text)
	nothing := memory.FromStep(memory.Step{RunID: "run_1", Tool: "shell_exec", Args: json.RawMessage(`{"command":"true"}`)})
	require.Equal(t, `shell_exec {"command":"true"} printed nothing`, nothing.Text)
}
