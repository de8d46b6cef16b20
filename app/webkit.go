package app

import "os"

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
