// Package api is the one facade the user interfaces call: the desktop
// window (app/, through Wails bindings) and the browser (`ducklm serve`,
// through backend/httpapi) bind the same methods. Every method takes and
// returns plain JSON-friendly values and errors whose text is a sentence for
// a person. It holds no logic of its own: each method delegates to a
// service and translates its error once, here.
package api

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"ducklm/backend"
	"ducklm/backend/doctor"
	"ducklm/backend/service"
	"ducklm/backend/store"
)

// API is the facade. Its exported methods are the UI's whole vocabulary.
type API struct {
	svc      *service.Service
	startErr error
	log      *slog.Logger
	ctx      func() context.Context
	dialogs  Dialogs
	// restart quits the window and starts ducklm again (nil in a browser).
	restart func() error

	openMu sync.Mutex
	open   *OpenRequest // what `ducklm open` asked the window to show

	// deliberating holds the cancel of each running deliberation and world
	// run on workers, by op.
	deliberatingMu sync.Mutex
	deliberating   map[string]context.CancelFunc
}

// Dialogs are the native dialogs of the desktop window; the browser has none.
type Dialogs interface {
	ChooseFolder(title string) (string, error)
	// SaveFile and OpenFile answer the chosen path, "" when cancelled.
	SaveFile(opts FileDialog) (string, error)
	OpenFile(opts FileDialog) (string, error)
}

// FileDialog describes a native save or open dialog.
type FileDialog struct {
	Title       string
	DefaultDir  string
	DefaultName string
	// Pattern filters the files shown ("*.ducklm"); PatternName names it.
	Pattern     string
	PatternName string
}

// New returns the facade over svc. When the data directory could not be
// opened, svc is nil and startErr says why: every call then answers with
// that sentence, and the UI shows it with its fix.
func New(svc *service.Service, startErr error, log *slog.Logger) *API {
	return &API{svc: svc, startErr: startErr, log: log, ctx: context.Background}
}

// Configure sets where calls get their context (the window's lifetime) and
// the window's native dialogs (nil in a browser). It is a function, not a
// method, so that the UI bindings never see it.
func Configure(a *API, ctx func() context.Context, dialogs Dialogs) {
	a.ctx = ctx
	a.dialogs = dialogs
}

// ready reports the start-up failure, if any, as the error of every call.
func (a *API) ready() error {
	if a.svc == nil {
		return errors.New(backend.ErrorMessage(a.startErr))
	}
	return nil
}

// fail logs err in full and returns the sentence a person should see.
func (a *API) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	a.log.Error(op, "code", backend.ErrorCode(err), "err", err)
	return errors.New(backend.ErrorMessage(err))
}

// Overview returns what the first screen shows.
func (a *API) Overview() (service.Overview, error) {
	if err := a.ready(); err != nil {
		return service.Overview{}, err
	}
	o, err := a.svc.Overview(a.ctx(), 50)
	if err == nil {
		a.log.Info("overview served", "events", o.Counts.Events, "worlds", o.Counts.Worlds)
	}
	return o, a.fail("overview", err)
}

// Checks runs the doctor's checks of this machine.
func (a *API) Checks() ([]doctor.Check, error) {
	dir := ""
	var schema func(context.Context) (int64, int64, error)
	if a.svc != nil {
		dir = a.svc.Dir
		schema = func(ctx context.Context) (int64, int64, error) {
			have, err := a.svc.DB.SchemaVersion(ctx)
			return have, store.LatestSchemaVersion(), err
		}
	} else if d, err := service.DataDir(); err == nil {
		dir = d
	}
	return doctor.Run(a.ctx(), doctor.DefaultEnv(dir, schema)), nil
}
