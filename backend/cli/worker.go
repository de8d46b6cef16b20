package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"ducklm/backend"
	"ducklm/backend/river"
	"ducklm/backend/service"
)

func init() {
	register("worker", "work deliberation branches queued on the team's PostgreSQL (no window)",
		"worker [--slots N] [--rescue-after D]", runWorker)
}

// runWorker joins the work queue on the shared database and runs branch
// jobs until it is stopped (Ctrl-C, SIGTERM). It holds no data directory
// lock: a worker writes only to the shared database.
func runWorker(env Env, args []string) error {
	fs := newFlags("worker")
	slots := fs.Int("slots", 1, "branches run at once")
	rescue := fs.Duration("rescue-after", 5*time.Minute, "how long a job of a worker that vanished waits before another worker takes it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("usage: ducklm worker [--slots N] [--rescue-after D]")
	}
	if *slots < 1 {
		return usageError("--slots must be a positive number, not %d", *slots)
	}
	url := os.Getenv(service.DatabaseURLEnv)
	if url == "" {
		return backend.Errorf(backend.EINVALID, "a worker works for the team's PostgreSQL: set DUCKLM_DATABASE_URL (or give --database-url before the command)")
	}
	ctx := env.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	dir, err := service.DataDir()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	svc, err := service.OpenWith(ctx, dir, service.Options{DatabaseURL: url, Log: log})
	if err != nil {
		return err
	}
	defer svc.Close()
	host, _ := os.Hostname()
	w, err := river.StartWorker(ctx, url, svc.Worlds, river.Options{Slots: *slots, RescueAfter: *rescue,
		JobTimeout: min(2*time.Minute, *rescue-time.Second), ID: fmt.Sprintf("%s-%d", host, os.Getpid()), Log: log})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "ducklm worker: working branches with %d slot(s); Ctrl-C stops\n", *slots)
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return w.Stop(stopCtx)
}
