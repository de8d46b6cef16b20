// Package app is the only Go that knows Wails: a thin facade bound to the
// window and the emitters that push ledger events to it. It holds no logic;
// every method delegates to backend services and translates errors into
// sentences once, here.
package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"ducklm/backend"
	"ducklm/backend/doctor"
	"ducklm/backend/service"
	"ducklm/backend/sqlite"
)

// App is bound to the window: its exported methods are callable from the
// frontend through the generated bindings.
type App struct {
	svc      *service.Service
	startErr error
	log      *slog.Logger

	mu        sync.Mutex
	ctx       context.Context // Wails' context, set at startup
	fwd       *forwarder
	stopRaise func()
}

// New returns the facade over svc. When the data directory could not be
// opened, svc is nil and startErr says why: the window still opens and
// shows that sentence with its fix instead of vanishing.
func New(svc *service.Service, startErr error, log *slog.Logger) *App {
	return &App{svc: svc, startErr: startErr, log: log}
}

// Overview returns what the first screen shows.
func (a *App) Overview() (service.Overview, error) {
	if err := a.ready(); err != nil {
		return service.Overview{}, err
	}
	o, err := a.svc.Overview(a.context(), 50)
	if err == nil {
		a.log.Info("overview served", "events", o.Counts.Events, "worlds", o.Counts.Worlds)
	}
	return o, a.userError("overview", err)
}

// Checks runs the doctor's checks of this machine.
func (a *App) Checks() ([]doctor.Check, error) {
	dir := ""
	var schema func(context.Context) (int64, int64, error)
	if a.svc != nil {
		dir = a.svc.Dir
		schema = func(ctx context.Context) (int64, int64, error) {
			have, err := a.svc.DB.SchemaVersion(ctx)
			return have, sqlite.LatestSchemaVersion(), err
		}
	} else if d, err := service.DataDir(); err == nil {
		dir = d
	}
	return doctor.Run(a.context(), doctor.DefaultEnv(dir, schema)), nil
}

// ready reports the start-up failure, if any, as the error of every call.
func (a *App) ready() error {
	if a.svc == nil {
		return errors.New(backend.ErrorMessage(a.startErr))
	}
	return nil
}

func (a *App) context() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx == nil {
		return context.Background()
	}
	return a.ctx
}

// userError logs err in full and returns the sentence a person should see.
func (a *App) userError(op string, err error) error {
	if err == nil {
		return nil
	}
	a.log.Error(op, "code", backend.ErrorCode(err), "err", err)
	return errors.New(backend.ErrorMessage(err))
}
