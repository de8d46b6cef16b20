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

// OfProcess returns the largest visible window titled ducklm that process
// pid maps (GTK names its toplevels' process in _NET_WM_PID), waiting up to
// 90s for one: with two ducklm windows on one display, Main cannot tell
// them apart.
func OfProcess(t testing.TB, pid int) string {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		best, bestArea := "", 0
		out, _ := exec.Command("xdotool", "search", "--all", "--onlyvisible", "--pid", strconv.Itoa(pid), "--name", "^ducklm$").Output()
		for _, wid := range strings.Fields(string(out)) {
			geo, err := geometry(wid)
			if err != nil {
				continue
			}
			w, _ := strconv.Atoi(geo["WIDTH"])
			h, _ := strconv.Atoi(geo["HEIGHT"])
			if w*h > bestArea {
				best, bestArea = wid, w*h
			}
		}
		if best != "" && bestArea >= 900*600 {
			return best
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d mapped no ducklm window within 90s", pid)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Read is the text a screenshot shows, read by tesseract (OCR), lower-cased,
// one line of the screen a line: read twice, off the picture enlarged twice
// as it is and with its contrast stretched (the interface's 12–14 px type
// reads much better enlarged; dark text on the yellow buttons only with the
// contrast stretched, while the stretch loses some light grey text), the
// two readings one after the other.
func Read(t testing.TB, path string) string {
	t.Helper()
	var all strings.Builder
	for _, pre := range ocrViews {
		all.Write(tesseract(t, path, pre, "4", ""))
	}
	return strings.ToLower(all.String())
}

// ocrViews are the ways Read and Find prepare a screenshot for tesseract.
var ocrViews = [][]string{{"-resize", "200%"}, {"-resize", "200%", "-level", "20%,80%"}}

// tesseract reads path, prepared with ImageMagick's options pre, in page
// segmentation mode psm, as text (format "") or as "tsv".
func tesseract(t testing.TB, path string, pre []string, psm, format string) []byte {
	t.Helper()
	big := path + ".ocr.png"
	defer os.Remove(big)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append(append([]string{path, "-colorspace", "Gray"}, pre...), big)
	out, err := exec.CommandContext(ctx, "convert", args...).CombinedOutput()
	require.NoError(t, err, "convert: %s", out)
	targs := []string{big, "stdout", "--psm", psm}
	if format != "" {
		targs = append(targs, format)
	}
	cmd := exec.CommandContext(ctx, "tesseract", targs...)
	// One thread: on 2 cores tesseract's OpenMP threads took twice the
	// time (3.1 s against 1.5 s a screenshot, the same text).
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	text, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "tesseract: %s", stderr)
	return text
}

// Find returns the centre, in the screenshot's pixels, of the first place
// tesseract reads label on it, so a test can click what a person would
// click by what it says: a line whose words are label's (case and trailing
// punctuation aside: a button's whole caption, "Approve" and not "Edit and
// approve…"), or, when no line is, a run of words within a line (a task in
// a list's row).
func Find(t testing.TB, path, label string) (x, y int, ok bool) {
	t.Helper()
	want := strings.Fields(strings.ToLower(label))
	type word struct {
		text                     string
		left, top, width, height int
	}
	centre := func(ws []word) (int, int) {
		l, tp, r, b := ws[0].left, ws[0].top, 0, 0
		for _, w := range ws {
			l, tp = min(l, w.left), min(tp, w.top)
			r, b = max(r, w.left+w.width), max(b, w.top+w.height)
		}
		return (l + r) / 4, (tp + b) / 4 // the picture was enlarged twice
	}
	matches := func(ws []word) bool {
		for k := range want {
			if ws[k].text != want[k] {
				return false
			}
		}
		return true
	}
	parsed := map[int][][]word{}
	parse := func(i int) [][]word {
		if lines, ok := parsed[i]; ok {
			return lines
		}
		var lines [][]word
		index := map[string]int{}
		for _, row := range strings.Split(string(tesseract(t, path, ocrViews[i], "11", "tsv")), "\n") {
			f := strings.Split(row, "\t")
			if len(f) < 12 || f[0] != "5" || strings.TrimSpace(f[11]) == "" {
				continue
			}
			key := f[2] + ":" + f[3] + ":" + f[4] // block, paragraph, line
			n, seen := index[key]
			if !seen {
				n = len(lines)
				index[key] = n
				lines = append(lines, nil)
			}
			w := word{text: strings.ToLower(strings.TrimRight(f[11], ".,:;…"))}
			w.left, _ = strconv.Atoi(f[6])
			w.top, _ = strconv.Atoi(f[7])
			w.width, _ = strconv.Atoi(f[8])
			w.height, _ = strconv.Atoi(f[9])
			lines[n] = append(lines[n], w)
		}
		parsed[i] = lines
		return lines
	}
	// A whole line before a run of words within one; the contrast-stretched
	// view first (it reads the buttons), the plain one when that has none.
	for _, whole := range []bool{true, false} {
		for i := len(ocrViews) - 1; i >= 0; i-- {
			for _, ws := range parse(i) {
				for at := 0; at+len(want) <= len(ws); at++ {
					if whole && (at > 0 || len(ws) != len(want)) {
						break
					}
					if matches(ws[at : at+len(want)]) {
						x, y := centre(ws[at : at+len(want)])
						return x, y, true
					}
				}
			}
		}
	}
	return 0, 0, false
}
