package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ducklm/backend"
)

// BenchmarkFollowPrint prints the events of a real 20-step run (file reads,
// as scripts/bench.sh task runs them) the way `ducklm run` follows a run:
// what the command line adds to each step on top of the loop.
func BenchmarkFollowPrint(b *testing.B) {
	b.Setenv("DUCKLM_HOME", filepath.Join(b.TempDir(), "home"))
	b.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("hello\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	var nodes []string
	for i := 0; i < 20; i++ {
		dep := "[]"
		if i > 0 {
			dep = fmt.Sprintf(`["s%d"]`, i-1)
		}
		nodes = append(nodes, fmt.Sprintf(`{"id":"s%d","kind":"tool","tool":"file_read","args":{"path":"f.txt"},"depends_on":%s}`, i, dep))
	}
	plan := filepath.Join(b.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(`{"nodes":[`+strings.Join(nodes, ",")+`]}`), 0o600); err != nil {
		b.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := Env{Ctx: context.Background(), Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader("")}
	if code := Run(env, []string{"run", "--plan", plan, "--approve", "auto", "--workspace", ws, "--json"}); code != ExitOK {
		b.Fatalf("ducklm run: exit %d: %s", code, errOut.String())
	}
	var events []backend.Event
	dec := json.NewDecoder(&out)
	for dec.More() {
		var e backend.Event
		if err := dec.Decode(&e); err != nil {
			b.Fatal(err)
		}
		events = append(events, e)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range events {
			printEvent(io.Discard, e)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*20)/1e3, "us/step")
}
