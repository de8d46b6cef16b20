// Package xwindow finds and photographs ducklm's window on an X display for
// the tests that run the real desktop binary (tests/desktop, tests/package):
// xdotool finds it, ImageMagick's import takes the screenshot, and Drawn
// tells a drawn screen from a blank one.
package xwindow

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Xdotool runs xdotool and returns its trimmed output.
func Xdotool(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "xdotool", args...).CombinedOutput()
	require.NoError(t, err, "xdotool %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// Main returns the largest visible window titled ducklm (GTK also maps
// small helper windows with the same title, which may be gone by the time
// they are measured), waiting up to 30s for one.
func Main(t testing.TB) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		best, bestArea := "", 0
		for _, wid := range strings.Fields(Xdotool(t, "search", "--sync", "--onlyvisible", "--name", "^ducklm$")) {
			geo, err := geometry(wid)
			if err != nil {
				continue // unmapped since the search
			}
			w, _ := strconv.Atoi(geo["WIDTH"])
			h, _ := strconv.Atoi(geo["HEIGHT"])
			if w*h > bestArea {
				best, bestArea = wid, w*h
			}
		}
		if best != "" || time.Now().After(deadline) {
			require.NotEmpty(t, best, "no ducklm window could be measured")
			return best
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Geometry is the window's X, Y, WIDTH and HEIGHT as xdotool reports them.
func Geometry(t testing.TB, wid string) map[string]string {
	t.Helper()
	geo, err := geometry(wid)
	require.NoError(t, err)
	return geo
}

func geometry(wid string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "xdotool", "getwindowgeometry", "--shell", wid).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("xdotool getwindowgeometry %s: %v: %s", wid, err, out)
	}
	geo := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			geo[k] = v
		}
	}
	return geo, nil
}

// Capture screenshots the screen cropped to the window: WebKit paints
// through its own surfaces, which `import -window ID` misses.
func Capture(t testing.TB, wid, path string) {
	t.Helper()
	geo := Geometry(t, wid)
	crop := fmt.Sprintf("%sx%s+%s+%s", geo["WIDTH"], geo["HEIGHT"], geo["X"], geo["Y"])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "import", "-window", "root", "-crop", crop, "+repage", path).CombinedOutput()
	require.NoError(t, err, "import: %s", out)
}

// Drawn checks the screenshot has the variety of a drawn screen (text,
// cards, colours), not one flat colour of an empty or failed webview.
func Drawn(t testing.TB, path string) error {
	t.Helper()
	img := Decode(t, path)
	b := img.Bounds()
	require.GreaterOrEqual(t, b.Dx(), 900, "window width")
	require.GreaterOrEqual(t, b.Dy(), 600, "window height")
	colours := map[uint32]int{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			colours[Key(img, x, y)]++
		}
	}
	// The most common colour is the background; a drawn screen has many
	// pixels of others.
	most, total := 0, 0
	for _, n := range colours {
		total += n
		most = max(most, n)
	}
	other := float64(total-most) / float64(total)
	if len(colours) <= 40 || other <= 0.03 {
		return fmt.Errorf("%s looks blank: %d distinct colours, %.1f%% non-background pixels", path, len(colours), other*100)
	}
	return nil
}

// Key is the pixel's colour as 0xRRGGBB.
func Key(img image.Image, x, y int) uint32 {
	r, g, b, _ := img.At(x, y).RGBA()
	return (r>>8)<<16 | (g>>8)<<8 | b>>8
}

// Decode reads a PNG file.
func Decode(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	return img
}

// Difference is the share of pixels that differ between two screenshots.
func Difference(t testing.TB, a, b string) float64 {
	t.Helper()
	ia, ib := Decode(t, a), Decode(t, b)
	bounds := ia.Bounds().Intersect(ib.Bounds())
	diff, total := 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			total++
			if Key(ia, x, y) != Key(ib, x, y) {
				diff++
			}
		}
	}
	return float64(diff) / float64(max(total, 1))
}
