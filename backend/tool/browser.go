package tool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/web"
	"ducklm/backend/webhost"
)

// Browser renders one page in Debian's Chromium, driven through the
// DevTools protocol (chromedp) over a pipe, for pages that show their text
// only with JavaScript. Chromium runs inside bubblewrap like every
// sandboxed step (read-only system, the run's workspace only, its time,
// memory and process limits, its whole process group killed on timeout or
// cancel), with a throw-away profile in the workspace and every request
// through the guarded proxy: the same host grants as web_fetch.
type Browser struct {
	Net   *web.Net
	Blobs backend.BlobStore
	// Chromium is the browser's path; "" looks for chromium, then
	// chromium-browser.
	Chromium string
}

var _ backend.Tool = (*Browser)(nil)

const browserSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "browser arguments",
  "type": "object",
  "additionalProperties": false,
  "required": ["url"],
  "properties": {
    "url": {"type": "string", "minLength": 1, "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://", "description": "The http or https page to render."},
    "wait_for": {"type": "string", "minLength": 1, "description": "A CSS selector to wait for before reading the page, when its text comes late."},
    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 86400, "description": "Give up after this many seconds (default 60); the step's time limit caps it."}
  }
}`

// browserOutput is Browser's ToolResult.Output.
type browserOutput struct {
	URL        string           `json:"url"`
	FinalURL   string           `json:"final_url"`
	Status     int64            `json:"status,omitempty"`
	Title      string           `json:"title,omitempty"`
	Text       string           `json:"text"`
	FetchedAt  time.Time        `json:"fetched_at"`
	Screenshot *backend.BlobRef `json:"screenshot,omitempty"`
	Refused    []string         `json:"refused,omitempty"` // hosts the guard refused requests to
	Error      string           `json:"error,omitempty"`
}

// Name implements backend.Tool.
func (*Browser) Name() string { return "browser" }

// Description implements backend.Tool.
func (*Browser) Description() string {
	return "Renders one web page in a sandboxed Chromium (JavaScript runs) and returns its visible text, " +
		"title and final URL, with a screenshot kept as a blob. Use it only for a page whose text needs " +
		"JavaScript; web_fetch is lighter for everything else. It reaches only hosts the user approved, " +
		"like web_fetch; the page's requests to other hosts are refused."
}

// ArgsSchema implements backend.Tool.
func (*Browser) ArgsSchema() json.RawMessage { return json.RawMessage(browserSchema) }

type browserArgs struct {
	URL            string `json:"url"`
	WaitFor        string `json:"wait_for"`
	TimeoutSeconds *int64 `json:"timeout_seconds"`
}

const defaultBrowserTimeout = web.BrowserDefaultTimeout

func (t *Browser) chromium() (string, error) {
	if t.Chromium != "" {
		return t.Chromium, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", backend.Errorf(backend.EUNAVAILABLE, "Chromium is not installed, so the browser tool cannot run; install it (sudo apt-get install chromium) or use web_fetch")
}

// Run implements backend.Tool. A page refused by the guard, timed out or
// failed is a result with exit code 1; an error means the call could not
// run (bad args, no Chromium, no sandbox, cancelled).
func (t *Browser) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	start := time.Now()
	var args browserArgs
	if err := decodeArgs(t.Name(), call.Args, &args); err != nil {
		return backend.ToolResult{}, err
	}
	if args.URL == "" {
		return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "browser needs a url")
	}
	u, host, err := webhost.ParseURL(args.URL)
	if err != nil {
		return backend.ToolResult{}, err
	}
	ws, err := openWorkspace(call)
	if err != nil {
		return backend.ToolResult{}, err
	}
	defer ws.close()
	lim := limits(call)
	if s := args.TimeoutSeconds; s != nil {
		if *s < 1 || *s > 86400 {
			return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "timeout_seconds must be between 1 and 86400")
		}
		lim.Timeout = min(lim.Timeout, time.Duration(*s)*time.Second)
	} else {
		lim.Timeout = min(lim.Timeout, defaultBrowserTimeout)
	}
	path, err := t.chromium()
	if err != nil {
		return backend.ToolResult{}, err
	}
	if _, ok, why := sandboxAvailable(); !ok {
		return backend.ToolResult{}, backend.Errorf(backend.EUNAVAILABLE, "%s; the browser runs only in the sandbox", why)
	}
	out := browserOutput{URL: u.String(), FinalURL: u.String(), FetchedAt: time.Now().UTC()}
	grant := webhost.Grant{Hosts: call.Hosts, Private: call.PrivateHosts}
	if err := t.Net.Check(grant, host); err != nil {
		// Refused before a browser starts: nothing is requested.
		out.Error = backend.ErrorMessage(err)
		return backend.ToolResult{ExitCode: 1, Stderr: []byte(out.Error + "\n"), Output: mustJSON(out),
			Duration: time.Since(start), Sandboxed: true}, nil
	}
	proxy, err := t.Net.StartProxy(grant)
	if err != nil {
		return backend.ToolResult{}, backend.Wrap(err, backend.EINTERNAL, "the browser's proxy could not start")
	}
	defer proxy.Close()

	page, err := t.render(ctx, path, proxy.Addr(), ws, lim, u.String(), args.WaitFor)
	res := backend.ToolResult{Duration: time.Since(start), Sandboxed: true}
	out.Refused = proxy.Refused()
	if ctx.Err() != nil {
		return res, backend.Wrap(ctx.Err(), backend.ELIMIT, "the browser was cancelled")
	}
	if err != nil {
		out.Error = backend.ErrorMessage(err)
		res.ExitCode, res.TimedOut = 1, errors.Is(err, context.DeadlineExceeded) || backend.ErrorCode(err) == backend.ELIMIT
		res.Stderr = []byte(out.Error + "\n")
		res.Output = mustJSON(out)
		return res, nil
	}
	out.FinalURL, out.Status, out.Title, out.Text = page.url, page.status, page.title, page.text
	if t.Blobs != nil && len(page.screenshot) > 0 {
		ref, err := t.Blobs.Put(context.WithoutCancel(ctx), page.screenshot, "image/png")
		if err != nil {
			return backend.ToolResult{}, backend.Wrap(err, backend.EINTERNAL, "the screenshot could not be stored")
		}
		out.Screenshot = &ref
	}
	text := page.text
	if int64(len(text)) > lim.OutputBytes {
		text, res.Truncated = clipUTF8(text, int(lim.OutputBytes)), true
	}
	if len(out.Text) > maxInlineText {
		out.Text = clipUTF8(out.Text, maxInlineText)
	}
	res.Stdout = []byte(strings.TrimRight(text, "\n") + "\n")
	var notes []string
	if len(out.Refused) > 0 {
		notes = append(notes, "Requests to hosts not approved (the page's, or Chromium's own calls home) were refused, so nothing was sent to them: "+strings.Join(out.Refused, ", ")+
			" (approve a step that names one, or allow it for the run or in Settings)")
	}
	if page.status >= 400 {
		res.ExitCode = 1
		notes = append(notes, out.FinalURL+" answered "+strconv.FormatInt(page.status, 10))
	}
	if len(notes) > 0 {
		res.Stderr = []byte(strings.Join(notes, "\n") + "\n")
	}
	res.Output = mustJSON(out)
	return res, nil
}

type renderedPage struct {
	url, title, text string
	status           int64
	screenshot       []byte
}

// pipeShim gives Chromium its DevTools pipe where it expects it (fd 3 to
// read, fd 4 to write) from the fds 4 and 5 the sandbox hands over.
const pipeShim = `exec 3<&4 4>&5 5>&-; exec "$@"`

// render starts Chromium in the sandbox, loads pageURL and reads it. The
// browser's whole sandbox is gone when it returns.
func (t *Browser) render(ctx context.Context, chromium, proxy string, ws *workspace, lim backend.Limits, pageURL, waitFor string) (renderedPage, error) {
	hostProfile, err := os.MkdirTemp(ws.fdPath(), ".ducklm-browser-*")
	if err != nil {
		return renderedPage{}, backend.Wrap(err, backend.EINTERNAL, "the browser's profile could not be made")
	}
	defer os.RemoveAll(hostProfile)
	profile := filepath.Join(ws.path, filepath.Base(hostProfile)) // as the sandbox sees it
	toR, toW, err := os.Pipe()
	if err != nil {
		return renderedPage{}, backend.Wrap(err, backend.EINTERNAL, "the browser could not be started")
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		toR.Close()
		toW.Close()
		return renderedPage{}, backend.Wrap(err, backend.EINTERNAL, "the browser could not be started")
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	spec := bwrap.Spec{
		Argv: []string{"/bin/sh", "-c", pipeShim, "sh", chromium,
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
			"--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
			"--disable-sync", "--disable-extensions", "--disable-breakpad", "--mute-audio", "--hide-scrollbars",
			// Fewer of Chromium's own calls home (updates, safe browsing,
			// translation): the guard refuses those that remain.
			"--disable-default-apps", "--no-pings", "--disable-domain-reliability", "--disable-client-side-phishing-detection",
			"--metrics-recording-only", "--safebrowsing-disable-auto-update", "--password-store=basic",
			"--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication," +
				"CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,SigninInterception,AccountConsistency",
			"--window-size=1280,800", "--user-data-dir=" + profile, "--remote-debugging-pipe",
			"--proxy-server=http://" + proxy, "--proxy-bypass-list=<-loopback>",
			"--force-webrtc-ip-handling-policy=disable_non_proxied_udp", "about:blank"},
		Workspace:    ws.path,
		WorkspaceDir: ws.dir,
		Network:      true, // only to reach the proxy: every request goes through it
		Limits:       lim,
		ExtraFiles:   []*os.File{toR, fromW},
	}
	ran := make(chan struct{})
	var sandboxRes bwrap.Result
	go func() {
		defer close(ran)
		sandboxRes, _ = bwrap.Run(ctx, spec)
		// The browser is gone: its ends close, and the driver reads EOF.
		toR.Close()
		fromW.Close()
	}()
	// stop ends the sandbox (its process group and cgroup are killed) and
	// waits until it is gone.
	stop := func() {
		cancel()
		<-ran
	}
	defer stop()
	conn := chromedp.NewPipeConn(fromR, toW)
	defer conn.Close() // the browser closes it when it stops; this covers a browser that never started
	actx, acancel := chromedp.NewAllocatorContext(ctx, &pipeAllocator{conn: conn})
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var p renderedPage
	resp, err := chromedp.Run(bctx, chromedp.NavigateResponse(pageURL))
	if err == nil && waitFor != "" {
		_, err = chromedp.Run(bctx, chromedp.WaitVisible(waitFor))
	}
	if err == nil {
		if resp != nil {
			p.status = resp.Status
		}
		p.url, err = chromedp.Run(bctx, chromedp.Location())
	}
	if err == nil {
		p.title, err = chromedp.Run(bctx, chromedp.Title())
	}
	if err == nil {
		p.text, err = chromedp.Run(bctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	}
	if err == nil {
		p.screenshot, err = chromedp.Run(bctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		if ctx.Err() != nil {
			return p, backend.Wrap(ctx.Err(), backend.ELIMIT, "the page %s did not finish within its time limit of %s", pageURL, lim.Timeout)
		}
		stop()
		why := firstLine(string(sandboxRes.Stderr))
		if why != "" {
			return p, backend.Wrap(err, backend.EUNAVAILABLE, "the browser could not load %s: %v (Chromium said: %s)", pageURL, err, why)
		}
		return p, backend.Wrap(err, backend.EUNAVAILABLE, "the browser could not load %s: %v", pageURL, err)
	}
	return p, nil
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// pipeAllocator hands chromedp the browser the sandbox started: chromedp
// drives it, the sandbox owns its process.
type pipeAllocator struct {
	conn *chromedp.PipeConn
}

// Allocate implements chromedp.Allocator.
func (a *pipeAllocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	return chromedp.NewBrowserTransport(ctx, a.conn, opts...)
}

// Wait implements chromedp.Allocator.
func (a *pipeAllocator) Wait() {}
