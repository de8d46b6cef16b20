package webproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/web"
	"ducklm/backend/webhost"
	"ducklm/backend/worldproc"
)

// Fetcher fetches pages in worker processes (see the package doc).
type Fetcher struct {
	// Net is ducklm's guard: the worker reaches the web only through its
	// tunnels. nil is a Net with the system's resolver.
	Net *web.Net
	// exe is the worker's executable; "" is this one (/proc/self/exe).
	// Only the benchmark sets it, to measure the desktop binary.
	exe string
}

// Page is what a worker got: the response with its body, and the text.
type Page struct {
	web.Response
	Text web.Text
	// TextError says why Text is empty: the worker was stopped reading
	// the page (its memory or time ran out). The response and the body
	// are whole.
	TextError string
	// TextTimedOut says the time limit stopped the reading.
	TextTimedOut bool
	// Sandboxed says bubblewrap held the worker; Enforced names the limits
	// in force for it.
	Sandboxed bool
	Enforced  []string
}

// Fetch performs req for a step granted grant in a worker under lim (its
// time, CPU and memory; zero fields take the step defaults), in bubblewrap
// when sandboxed, else unisolated (only for a step a person approved). As
// web.Net.Fetch, a fetch that got no answer is a *web.Failure (the worker
// stopped at a limit is one too); any other error means the request is
// not valid, the worker could not start, or ctx ended.
func (f *Fetcher) Fetch(ctx context.Context, grant webhost.Grant, req web.Request, lim backend.Limits, sandboxed bool) (Page, error) {
	lim = bwrap.FillLimits(lim)
	maxBody := req.Limits.MaxBytes
	if maxBody <= 0 {
		maxBody = web.DefaultMaxBytes
	}
	in, err := json.Marshal(request{Grant: grant, Request: req})
	if err != nil {
		return Page{}, backend.Wrap(err, backend.EINTERNAL, "the fetch of %s could not be prepared", req.URL)
	}
	// The worker's one folder: empty, outside the data directory, holding
	// the guard's socket.
	dir, err := os.MkdirTemp("", "ducklm-web-*")
	if err != nil {
		return Page{}, backend.Wrap(err, backend.EUNAVAILABLE, "the web worker's folder could not be made")
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "net.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return Page{}, backend.Wrap(err, backend.EUNAVAILABLE, "the web worker's way out could not be opened at %s", sock)
	}
	n := f.Net
	if n == nil {
		n = &web.Net{}
	}
	guard := n.ServeTunnels(ln, grant)
	defer guard.Close()
	path := "/proc/self/exe"
	if f.exe != "" {
		path = f.exe
	}
	exe, err := os.Open(path)
	if err != nil {
		return Page{}, backend.Wrap(err, backend.EUNAVAILABLE, "the web worker cannot be started: ducklm's executable cannot be opened")
	}
	defer exe.Close()
	repR, repW, err := os.Pipe()
	if err != nil {
		return Page{}, backend.Wrap(err, backend.EUNAVAILABLE, "the web worker cannot be started")
	}
	defer repR.Close()
	held := lim // what the runner holds it to: the worker's memory, as its cgroup counts it
	held.MemoryBytes *= raceFactor
	spec := bwrap.Spec{
		// fd 4 is the executable: the worker is the binary running now.
		Argv:           []string{"/proc/self/fd/4"},
		Workspace:      dir,
		Limits:         held,
		OwnMemoryLimit: true,
		Env:            map[string]string{envWorker: "1", envSocket: sock, envMemory: strconv.FormatInt(lim.MemoryBytes, 10)},
		Stdin:          in,
		ExtraFiles:     []*os.File{exe, repW},
	}
	run := bwrap.Run
	if !sandboxed {
		run = bwrap.RunUnsandboxed
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var res bwrap.Result
	var runErr error
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		res, runErr = run(wctx, spec)
		repW.Close() // the worker is gone: its answer ends here
	}()
	a, wireErr := readAnswer(bufio.NewReaderSize(repR, 256<<10), maxBody)
	if wireErr != nil {
		stop() // a worker that breaks the wire is stopped
	}
	<-ran
	if ctx.Err() != nil {
		return Page{}, backend.Wrap(ctx.Err(), backend.ELIMIT, "the fetch of %s was cancelled", req.URL)
	}
	if runErr != nil && res.Duration == 0 {
		return Page{}, runErr // it never ran
	}
	page := Page{Sandboxed: res.Sandboxed, Enforced: append(res.Enforced, "rlimit data")}
	if a.failure != nil {
		return page, a.failure.err()
	}
	if a.resp == nil || a.body == nil {
		why, timedOut := stopped(res, lim, wireErr)
		resp := web.Response{URL: req.URL, FinalURL: req.URL}
		if a.resp != nil {
			resp = *a.resp
		}
		return page, &web.Failure{Response: resp, TimedOut: timedOut,
			Err: backend.Errorf(backend.ELIMIT, "the fetch of %s was stopped: its worker %s", req.URL, why)}
	}
	page.Response = *a.resp
	page.Body, page.Bytes = a.body, int64(len(a.body))
	if a.text != nil {
		page.Text = *a.text
	} else {
		why, timedOut := stopped(res, lim, wireErr)
		page.Text, page.TextTimedOut = web.Text{Kind: "none"}, timedOut
		page.TextError = fmt.Sprintf("the text of %s could not be read: the worker reading it %s", page.FinalURL, why)
	}
	return page, nil
}

// answer is what a worker wrote.
type answer struct {
	failure *failure
	resp    *web.Response
	body    []byte
	text    *web.Text
}

// readAnswer reads a worker's frames until it stops writing, bounding each
// by what its kind may hold, and each kind in its place.
func readAnswer(r *bufio.Reader, maxBody int64) (answer, error) {
	var a answer
	max := func(kind byte) int64 {
		switch {
		case kind == frameFailure && a.resp == nil && a.failure == nil,
			kind == frameResponse && a.resp == nil && a.failure == nil:
			return 1 << 20
		case kind == frameBody && a.resp != nil && a.body == nil:
			return maxBody
		case kind == frameText && a.body != nil && a.text == nil:
			// Text decoded from a legacy charset may be longer than
			// its bytes: up to three bytes of UTF-8 for one.
			return 3*maxBody + 1<<20
		}
		return -1
	}
	for {
		kind, b, err := readFrame(r, max)
		if errors.Is(err, io.EOF) {
			return a, nil
		}
		if err != nil {
			return a, err
		}
		switch kind {
		case frameFailure:
			a.failure = &failure{}
			err = json.Unmarshal(b, a.failure)
		case frameResponse:
			a.resp = &web.Response{}
			err = json.Unmarshal(b, a.resp)
			if err == nil && (a.resp.Status < 100 || a.resp.Status > 999) {
				err = fmt.Errorf("%w: status %d", errWire, a.resp.Status)
			}
		case frameBody:
			a.body = b
		case frameText:
			a.text = &web.Text{}
			err = json.Unmarshal(b, a.text)
		}
		if err != nil {
			a.failure, a.resp, a.body, a.text = nil, nil, nil, nil
			return a, fmt.Errorf("%w: %w", errWire, err)
		}
	}
}

// err is the error a worker's failure stands for, as web.Net.Fetch would
// have returned it.
func (f *failure) err() error {
	code := f.Code
	if code == "" || code == backend.EINTERNAL {
		code = backend.EUNAVAILABLE
	}
	e := &backend.Error{Code: code, Message: f.Message}
	switch f.Cause {
	case "host":
		e.Err = web.ErrNotGranted
	case "private":
		e.Err = web.ErrPrivateAddress
	}
	if f.Invalid {
		return e
	}
	return &web.Failure{Response: f.Response, TimedOut: f.TimedOut, Err: e}
}

// stopped says what stopped a worker that did not finish its answer, and
// whether it was its time.
func stopped(res bwrap.Result, lim backend.Limits, wireErr error) (string, bool) {
	switch {
	case wireErr != nil:
		return "broke its answer, so it was stopped", false
	case res.TimedOut:
		return fmt.Sprintf("did not finish within the step's time limit of %s", lim.Timeout), true
	}
	// Under bubblewrap a worker killed inside the sandbox shows as its
	// exit status 128+n.
	sig := res.Signal
	if sig == "" && res.Sandboxed && res.ExitCode > 128 && res.ExitCode < 128+65 {
		sig = unix.SignalName(syscall.Signal(res.ExitCode - 128))
	}
	switch {
	case worldproc.OutOfMemory(string(res.Stderr)),
		// Only the memory cgroup's OOM killer sends SIGKILL to a worker
		// that neither timed out nor was cancelled.
		sig == "SIGKILL" && slices.Contains(res.Enforced, "cgroup memory"):
		return "met its memory limit of " + formatBytes(lim.MemoryBytes), false
	case sig == "SIGXCPU":
		return fmt.Sprintf("used its CPU time limit of %d s", lim.CPUSeconds), false
	case sig == "SIGKILL":
		return "was killed, most likely at its memory limit of " + formatBytes(lim.MemoryBytes), false
	case sig != "":
		return "was ended by " + sig, false
	}
	return fmt.Sprintf("exited with status %d before it answered", res.ExitCode), false
}

// formatBytes writes a limit as people set it: in MiB, or GiB when whole.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
