package app

import (
	"os"
	"path/filepath"
)

// leanWebKit sets up WebKit for a small footprint before the window opens
// (tests/perf measures the app's idle memory). The DMA-BUF renderer keeps
// GPU buffers around even when nothing is accelerated, and the window asks
// for no GPU compositing (see Run); a person may still turn the renderer
// back on by setting the variable to 0.
func leanWebKit() {
	if _, set := os.LookupEnv("WEBKIT_DISABLE_DMABUF_RENDERER"); !set {
		os.Setenv("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
	}
}

// webKitDataIn keeps the web view's own storage (local storage, HSTS, its
// databases) in the data directory's webview/ folder. WebKit puts it in
// $XDG_DATA_HOME/<program name>, which is ~/.local/share/ducklm whatever
// DUCKLM_HOME says: a window on another data directory wrote into the
// default one, and the default one mixed WebKit's files with its own.
// GLib reads the variable once, when GTK starts, so it is set before the
// window opens; tools never see it (their environment is built, not
// inherited).
func webKitDataIn(dataDir string) error {
	dir := filepath.Join(dataDir, "webview")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Setenv("XDG_DATA_HOME", dir)
}
