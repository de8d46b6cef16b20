// Package app is the only Go that knows Wails: it binds the backend's API
// facade to the window, forwards ledger events and model tokens to it, and
// gives the facade the window's native dialogs. It holds no logic.
package app

import (
	"context"
	"log/slog"
	"sync"

	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"ducklm/backend/api"
	"ducklm/backend/service"
)

// App is bound to the window: the exported methods of the embedded API are
// callable from the frontend through the generated bindings.
type App struct {
	*api.API
	svc *service.Service
	log *slog.Logger

	mu           sync.Mutex
	ctx          context.Context // Wails' context, set at startup
	fwd          *forwarder
	stopRaise    func()
	stopTokens   func()
	stopProgress func()
	stopRun      context.CancelFunc
}

// New returns the window's facade over svc. When the data directory could
// not be opened, svc is nil and startErr says why: the window still opens
// and shows that sentence with its fix instead of vanishing.
func New(svc *service.Service, startErr error, log *slog.Logger) *App {
	a := &App{API: api.New(svc, startErr, log), svc: svc, log: log}
	api.Configure(a.API, a.context, dialogs{a})
	return a
}

func (a *App) context() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx == nil {
		return context.Background()
	}
	return a.ctx
}

// dialogs are the window's native dialogs, for the API facade.
type dialogs struct{ a *App }

func (d dialogs) ChooseFolder(title string) (string, error) {
	return wruntime.OpenDirectoryDialog(d.a.context(), wruntime.OpenDialogOptions{Title: title, CanCreateDirectories: true})
}

func (d dialogs) SaveFile(o api.FileDialog) (string, error) {
	return wruntime.SaveFileDialog(d.a.context(), wruntime.SaveDialogOptions{Title: o.Title, DefaultDirectory: o.DefaultDir,
		DefaultFilename: o.DefaultName, CanCreateDirectories: true, Filters: filters(o)})
}

func (d dialogs) OpenFile(o api.FileDialog) (string, error) {
	return wruntime.OpenFileDialog(d.a.context(), wruntime.OpenDialogOptions{Title: o.Title, DefaultDirectory: o.DefaultDir,
		Filters: filters(o)})
}

func filters(o api.FileDialog) []wruntime.FileFilter {
	if o.Pattern == "" {
		return nil
	}
	return []wruntime.FileFilter{{DisplayName: o.PatternName, Pattern: o.Pattern}}
}
