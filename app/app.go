// Package app is the only Go that knows Wails: it binds the backend's API
// facade to the window, forwards ledger events and model tokens to it, and
// gives the facade the window's native dialogs. It holds no logic.
package app

import (
	"context"
	"log/slog"
	"os"
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
	// restartExe is the program to start again once the window has closed
	// ("" when no restart was asked).
	restartExe string
}

// New returns the window's facade over svc. When the data directory could
// not be opened, svc is nil and startErr says why: the window still opens
// and shows that sentence with its fix instead of vanishing.
func New(svc *service.Service, startErr error, log *slog.Logger) *App {
	a := &App{API: api.New(svc, startErr, log), svc: svc, log: log}
	api.Configure(a.API, a.context, dialogs{a})
	api.SetRestart(a.API, a.restart)
	return a
}

// restart closes the window; main starts ducklm again once the data
// directory is released (RestartAfter), so that a saved database opens.
func (a *App) restart() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.restartExe = exe
	a.mu.Unlock()
	wruntime.Quit(a.context())
	return nil
}

// RestartAfter returns the program to start again now that the window has
// closed, or "" when the person did not ask for a restart. It is a
// function, not a method, so that it is not bound to the frontend.
func RestartAfter(a *App) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.restartExe
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
