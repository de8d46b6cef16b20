// Command fakeollama is the Ollama of the end-to-end journeys: it serves the
// fake in backend/ollama/ollamatest, scripted by a JSON file (see
// ollamatest.Script), and prints "ollamatest listening on http://HOST:PORT"
// so the harness can point OLLAMA_HOST at it. It runs no model.
package main

import (
	"flag"
	"fmt"
	"os"

	"ducklm/backend/ollama/ollamatest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	script := flag.String("script", "", "script file (JSON)")
	flag.Parse()
	if err := ollamatest.ListenAndServe(*addr, *script); err != nil {
		fmt.Fprintln(os.Stderr, "fakeollama:", err)
		os.Exit(1)
	}
}
