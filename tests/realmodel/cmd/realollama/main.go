// Command realollama runs a real Ollama server with ducklm's tiny test
// models (see package realmodel) for the browser journeys: it prints
// "realollama listening on http://HOST:PORT" once the models are ready and
// stops the server (and its model runners) on SIGTERM or SIGINT; if it is
// killed, the server dies with it (parent-death signal).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"ducklm/tests/realmodel"
)

func main() {
	dir, err := os.MkdirTemp("", "ducklm-realollama-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "realollama:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv, err := realmodel.Start(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "realollama:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	defer srv.Stop()
	fmt.Printf("realollama listening on %s\n", srv.URL())
	<-ctx.Done()
}
