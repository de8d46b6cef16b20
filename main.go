// Command ducklm is a local desktop runtime for autonomous, multi-model
// tasks. With no arguments it opens the window; with arguments it runs the
// headless command line. This file only wires: logic lives in backend/, the
// window facade in app/.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"ducklm/app"
	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/boot"
	"ducklm/backend/cli"
	"ducklm/backend/service"
)

//go:embed all:frontend/dist
var frontendDist embed.FS

//go:embed build/appicon.png
var icon []byte

func main() {
	boot.Done() // the collector, held off while the packages initialised
	args, err := cli.TakeDatabaseFlag(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "ducklm: %s\n", backend.ErrorMessage(err))
		os.Exit(cli.ExitUsage)
	}
	if len(args) == 0 {
		os.Exit(runWindow(api.OpenRequest{}))
	}
	cli.SetWindow(runWindow) // `ducklm open …`
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dist, err := fs.Sub(frontendDist, "frontend/dist"); err == nil {
		cli.SetAssets(dist) // for `ducklm serve`
	}
	os.Exit(cli.Run(cli.Env{Ctx: ctx, Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin}, args))
}

// runWindow opens the window on the data directory, showing open once the
// page is up; when another window holds the directory, that one comes
// forward and shows open instead.
func runWindow(open api.OpenRequest) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	assets, err := fs.Sub(frontendDist, "frontend/dist")
	if err != nil {
		log.Error("frontend assets", "err", err)
		return 1
	}
	if bindingsOnly {
		// `wails build` runs the binary to generate bindings: touch no data.
		if err := app.Run(app.New(nil, nil, log), assets, icon); err != nil {
			log.Error("bindings", "err", err)
			return 1
		}
		return 0
	}

	svc, lock, openErr := openForWindow()
	if lock == nil && errors.Is(openErr, service.ErrLocked) {
		dir, _ := service.DataDir()
		msg := ""
		if open.Screen != "" {
			b, _ := json.Marshal(open)
			msg = string(b)
		}
		if service.RaiseRunning(dir, msg) {
			fmt.Fprintf(os.Stderr, "ducklm is already running on %s; its window was brought forward.\n", dir)
			return 0
		}
		fmt.Fprintln(os.Stderr, backend.ErrorMessage(openErr))
		return 2
	}
	if openErr != nil {
		// The window still opens and explains what is wrong and how to fix it.
		log.Error("open data directory", "err", openErr)
	}
	release := func() {
		if svc != nil {
			svc.Close()
		}
		lock.Release()
	}
	win := app.New(svc, openErr, log)
	api.SetOpen(win.API, open)
	if err := app.Run(win, assets, icon); err != nil {
		release()
		log.Error("window", "err", err)
		fmt.Fprintf(os.Stderr, "ducklm could not open its window: %v\nRun `ducklm doctor` to check WebKitGTK and the display.\n", err)
		return 1
	}
	release()
	if exe := app.RestartAfter(win); exe != "" {
		// "Restart now": the data directory is free again; this process
		// becomes the new ducklm, with the same arguments and environment.
		log.Info("starting again", "program", exe)
		err := syscall.Exec(exe, os.Args, os.Environ())
		fmt.Fprintf(os.Stderr, "ducklm could not start again (%v); start it yourself.\n", err)
		return 1
	}
	return 0
}

func openForWindow() (*service.Service, *service.Lock, error) {
	dir, err := service.DataDir()
	if err != nil {
		return nil, nil, err
	}
	lock, err := service.AcquireLock(dir)
	if err != nil {
		return nil, nil, err
	}
	svc, err := service.Open(context.Background(), dir)
	if err != nil {
		return nil, lock, err
	}
	return svc, lock, nil
}
