package tool

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"strconv"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/web"
	"ducklm/backend/webhost"
	"ducklm/backend/webproc"
)

// WebFetch reads one http(s) URL in a web worker (backend/webproc): a
// process of its own under the step's time, CPU and memory limits, in
// bubblewrap when it works here, whose only way out is the guarded dialer
// (backend/web) — only the hosts the call's grant names, public addresses
// only unless the grant approves a host's private ones, within time, size
// and redirect limits. It returns what the server answered and the page's
// readable text, and stores the raw body as a blob: what a hostile page
// does to the parser, it does to the worker.
type WebFetch struct {
	Net   *web.Net
	Blobs backend.BlobStore
	// Sandbox says what happens when bubblewrap cannot run here: refuse
	// (the zero value), or run the worker unsandboxed, which the runtime
	// picks only where every such fetch is approved by a person.
	Sandbox SandboxMode
	// SandboxFrom, when set, gives the mode in Sandbox's place, asked when
	// a page is fetched: the service probes bubblewrap when a step first
	// needs it, not when it opens the data directory.
	SandboxFrom func() SandboxMode
}

var _ backend.Tool = (*WebFetch)(nil)

const webFetchSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "web_fetch arguments",
  "type": "object",
  "additionalProperties": false,
  "required": ["url"],
  "properties": {
    "url": {"type": "string", "minLength": 1, "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://", "description": "The http or https URL to read."},
    "method": {"type": "string", "enum": ["GET", "POST"], "description": "GET (the default) or POST."},
    "body": {"type": "string", "description": "The body of a POST, only when the task says what to send."},
    "content_type": {"type": "string", "description": "The POST body's media type (default text/plain; charset=utf-8)."},
    "max_bytes": {"type": "integer", "minimum": 1, "maximum": 268435456, "description": "Read at most this many bytes of the body (default 5 MiB)."},
    "max_redirects": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Follow at most this many redirects (default 5)."},
    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 86400, "description": "Give up after this many seconds (default 30); the step's time limit caps it."}
  }
}`

// webFetchOutput is WebFetch's ToolResult.Output: what a server answered,
// at a time — an external-real fact with its URL and time.
type webFetchOutput struct {
	web.Response
	Title         string           `json:"title,omitempty"`
	Text          string           `json:"text"`
	TextKind      string           `json:"text_kind"`
	TextTruncated bool             `json:"text_truncated,omitempty"`
	Raw           *backend.BlobRef `json:"raw,omitempty"` // the body as read
	Error         string           `json:"error,omitempty"`
	// Enforced names the limits the worker ran under.
	Enforced []string `json:"enforced,omitempty"`
}

// maxInlineText bounds the text Output carries; stdout has it whole (up to
// the step's output limit).
const maxInlineText = 16 << 10

// Name implements backend.Tool.
func (*WebFetch) Name() string { return "web_fetch" }

// Confinement: a web worker fetches and reads the page, through the host
// guard.
func (*WebFetch) Confinement() backend.Confinement { return backend.ConfinedWebWorker }

// Repeatable: a GET of a page changes nothing ducklm answers for, so a
// GET cut short by a crash runs again; a POST may have acted, and never
// does (backend.Repeatable).
func (*WebFetch) Repeatable(args json.RawMessage) bool {
	var a struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(args, &a) == nil && (a.Method == "" || strings.EqualFold(a.Method, "GET"))
}

// Description implements backend.Tool.
func (*WebFetch) Description() string {
	return "Reads one web page or http(s) resource: a GET (or a POST with a body, only when the task says what " +
		"to send) with time, size and redirect limits. Returns the HTTP status, the final URL after redirects, " +
		"the content type and the readable text (the main content of an HTML page, the body of a text or JSON " +
		"one); the raw body is kept as a blob. It reaches only hosts the user approved: a new host asks first, " +
		"and addresses on this machine or a private network need their own approval. It runs no JavaScript: " +
		"for a page that shows its text only with JavaScript use browser. Use it for any task that names a URL."
}

// ArgsSchema implements backend.Tool.
func (*WebFetch) ArgsSchema() json.RawMessage { return json.RawMessage(webFetchSchema) }

// Run implements backend.Tool. A fetch that was refused, timed out or got
// no answer is a result with exit code 1 and the reason on stderr; an HTTP
// error status is a result with exit code 1 too. An error means the call
// could not run (bad args, no network granted).
func (t *WebFetch) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	start := time.Now()
	args, err := web.ParseArgs(call.Args)
	if err != nil {
		return backend.ToolResult{}, err
	}
	lim := limits(call)
	req := args.Request(lim.Timeout, lim.FileBytes)
	grant := webhost.Grant{Hosts: call.Hosts, Private: call.PrivateHosts}
	mode := t.Sandbox
	if t.SandboxFrom != nil {
		mode = t.SandboxFrom()
	}
	_, sandboxed, why := sandboxAvailable()
	if !sandboxed && mode != AllowUnsandboxed {
		return backend.ToolResult{}, backend.Errorf(backend.EUNAVAILABLE,
			"%s; web pages can only be fetched unsandboxed, with your approval", why)
	}
	page, err := (&webproc.Fetcher{Net: t.Net}).Fetch(ctx, grant, req, lim, sandboxed)
	var fail *web.Failure
	if err != nil && !errors.As(err, &fail) {
		return backend.ToolResult{Duration: time.Since(start)}, err
	}
	if ctx.Err() != nil {
		return backend.ToolResult{Duration: time.Since(start)}, backend.Wrap(ctx.Err(), backend.ELIMIT, "the fetch was cancelled")
	}
	res := backend.ToolResult{Sandboxed: page.Sandboxed}
	var notes []byte
	if !page.Sandboxed {
		notes = append(notes, []byte("bubblewrap is unavailable, so the page was fetched and read by a worker process without a sandbox.\n")...)
	}
	resp := page.Response
	out := webFetchOutput{Response: resp, Enforced: page.Enforced}
	if fail != nil {
		out.Response = fail.Response
		out.Error = fail.Error()
		res.ExitCode, res.TimedOut = 1, fail.TimedOut
		res.Stderr = append(notes, []byte(fail.Error()+"\n")...)
		res.Output, res.Duration = mustJSON(out), time.Since(start)
		return res, nil
	}
	mediaType := resp.ContentType
	if _, _, perr := mime.ParseMediaType(mediaType); perr != nil || mediaType == "" {
		mediaType = "application/octet-stream"
	}
	if t.Blobs != nil && len(resp.Body) > 0 {
		ref, err := t.Blobs.Put(context.WithoutCancel(ctx), resp.Body, mediaType)
		if err != nil {
			return backend.ToolResult{}, backend.Wrap(err, backend.EINTERNAL, "the body of %s could not be stored", resp.FinalURL)
		}
		out.Raw = &ref
	}
	text := page.Text
	out.Title, out.TextKind = text.Title, text.Kind
	out.Text = text.Text
	if len(out.Text) > maxInlineText {
		out.Text, out.TextTruncated = clipUTF8(out.Text, maxInlineText), true
	}
	stdout := text.Text
	if text.Title != "" && text.Kind == "article" {
		stdout = text.Title + "\n\n" + stdout
	}
	if int64(len(stdout)) > lim.OutputBytes {
		stdout, res.Truncated = clipUTF8(stdout, int(lim.OutputBytes)), true
	}
	res.Stdout = []byte(stdout)
	if stdout != "" && stdout[len(stdout)-1] != '\n' {
		res.Stdout = append(res.Stdout, '\n')
	}
	if resp.Truncated {
		notes = append(notes, []byte("The body was cut at its size limit; the rest was not read.\n")...)
	}
	if page.TextError != "" {
		res.ExitCode, res.TimedOut = 1, page.TextTimedOut
		notes = append(notes, []byte(page.TextError+"; the raw body is kept.\n")...)
	}
	if text.Kind == "article" && text.Text == "" {
		notes = append(notes, []byte("The page has no readable text without JavaScript; the browser tool renders it.\n")...)
	}
	if resp.Status >= 400 {
		res.ExitCode = 1
		notes = append(notes, []byte(resp.FinalURL+" answered "+statusLine(resp)+".\n")...)
	}
	res.Stderr = notes
	res.Output, res.Duration = mustJSON(out), time.Since(start)
	return res, nil
}

func statusLine(r web.Response) string {
	if r.StatusText == "" {
		return strconv.Itoa(r.Status)
	}
	return strconv.Itoa(r.Status) + " " + r.StatusText
}

// clipUTF8 cuts s to at most n bytes without splitting a character.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
