package app

import (
	"github.com/wailsapp/wails/v2/pkg/options"

	"ducklm/backend/settings"
)

// The window's colour before the page paints: --bg of the light and dark
// palettes in frontend/src/tokens.css.
var (
	lightBackground = options.RGBA{R: 248, G: 248, B: 246, A: 255}
	darkBackground  = options.RGBA{R: 22, G: 22, B: 20, A: 255}
)

// background is the window's first colour: dark when the settings choose the
// dark theme, so the window does not flash light before the page paints.
// ("system" starts light: the page follows the system as soon as it loads.)
func background(a *App) *options.RGBA {
	c := lightBackground
	if a.svc != nil {
		if s, err := settings.Load(a.svc.Dir); err == nil && s.Theme == "dark" {
			c = darkBackground
		}
	}
	return &c
}
