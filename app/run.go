package app

import (
	"io/fs"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
)

// Title is the window title; the desktop smoke test looks for it.
const Title = "ducklm"

// Run opens the window over a and blocks until it closes. It is a function,
// not a method, so that it is not bound to the frontend.
func Run(a *App, assets fs.FS, icon []byte) error {
	if a.svc != nil { // not while Wails generates bindings: no window then
		leanWebKit()
		if err := webKitDataIn(a.svc.Dir); err != nil {
			a.log.Warn("the web view keeps its storage in the default place", "err", err)
		}
	}
	return wails.Run(&options.App{
		Title:            Title,
		Width:            1280,
		Height:           820,
		MinWidth:         800,
		MinHeight:        600,
		AssetServer:      &assetserver.Options{Assets: assets},
		BackgroundColour: background(a),
		OnStartup:        a.startup,
		OnDomReady:       a.domReady,
		OnShutdown:       a.shutdown,
		Bind:             []any{a},
		Linux: &linux.Options{
			Icon:        icon,
			ProgramName: "ducklm",
			// WebKit's accelerated compositing doubles the web process's
			// memory (about 210 MB against 115 MB idle on the home screen,
			// measured by tests/perf under Xvfb) and buys this UI nothing:
			// its large drawings are a 2D canvas.
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
	})
}
