package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"ducklm/backend"
	"ducklm/backend/river"
	"ducklm/backend/service"
)

func init() {
	register("worker", "work deliberation branches and world runs queued on the team's PostgreSQL (no window)",
		"worker [--slots N] [--rescue-after D]", runWorker)
}

// runWorker joins the work queue on the shared database and runs branch
// jobs until it is stopped (Ctrl-C, SIGTERM). It holds no data directory
// lock: a worker writes only to the shared database.
func runWorker(env Env, args []string) error {
	fs := newFlags("worker")
	slots := fs.Int("slots", 1, "branches run at once")
	rescue := fs.Duration("rescue-after", 5*time.Minute, "how long a job of a worker that hangs waits before another worker takes it (it also bounds a job; a worker that dies is replaced within seconds)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("usage: ducklm worker [--slots N] [--rescue-after D]")
	}
	if *slots < 1 {
		return usageError("--slots must be a positive number, not %d", *slots)
	}
	ctx := env.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	river.ProcsForSlots(*slots)
	url, err := teamDatabase()
	if err != nil {
		return err
	}
	if url == "" {
		return backend.Errorf(backend.EINVALID, "a worker works for the team's PostgreSQL: %s", chooseTeamDatabase)
	}
	dir, err := service.DataDir()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	svc, err := service.OpenWith(ctx, dir, service.Options{DatabaseURL: url, Quiet: true, Log: log})
	if err != nil {
		return err
	}
	defer svc.Close()
	w, err := river.StartWorker(ctx, url, svc.Worlds, river.Options{Slots: *slots, RescueAfter: *rescue,
		JobTimeout: min(2*time.Minute, *rescue-time.Second), WorldRunTimeout: *rescue - time.Second, Recorder: svc.DB, Log: log})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "ducklm worker %s: working branches and world runs with %d slot(s); Ctrl-C stops\n", w.ID, *slots)
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return w.Stop(stopCtx)
}

// teamDatabase is the team's PostgreSQL this data directory is set to use —
// the variable, the flag before the command or Settings → Database — or ""
// when it keeps its own SQLite.
func teamDatabase() (string, error) {
	dir, err := service.DataDir()
	if err != nil {
		return "", err
	}
	choice, err := service.ChooseDatabase(dir, service.Options{})
	return choice.URL, err
}

// chooseTeamDatabase is how to give a command the team's PostgreSQL.
const chooseTeamDatabase = "set DUCKLM_DATABASE_URL (or give --database-url before the command, or choose the database in the window's Settings)"
