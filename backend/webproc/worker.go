package webproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"strconv"

	"ducklm/backend"
	"ducklm/backend/web"
	"ducklm/backend/worldproc"
)

func init() {
	if os.Getenv(envWorker) != "1" {
		return
	}
	// This process is a worker: it serves one fetch and exits, and never
	// reaches main. It serves on a goroutine of its own, not init's, which
	// is locked to the main thread (see worldproc).
	//
	// A worker lives for one page and its memory limit bounds its heap
	// (LimitMemory), so the collector need not run at Go's default pace:
	// a heap of five times the live data (GOGC 400) runs it a quarter as
	// often. A process set up with GOGC of its own keeps it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	code := make(chan int, 1)
	go func() { code <- serve() }()
	os.Exit(<-code)
}

// maxRequest bounds what a worker reads as its request: a POST body is at
// most what a step's args can hold.
const maxRequest = 64 << 20

// testHook, set only by this package's tests, may answer a request in the
// worker's place (to probe what a worker can reach); it reports whether it
// did.
var testHook func(req request, out *bufio.Writer) bool

// serve is a worker's whole life: bound its memory, read the request, fetch
// through the guard, and answer in frames.
func serve() int {
	if limit, err := strconv.ParseInt(os.Getenv(envMemory), 10, 64); err == nil && limit > 0 {
		if err := worldproc.LimitMemory(limit); err != nil {
			os.Stderr.WriteString("ducklm web worker: " + err.Error() + "\n")
			return 3
		}
	}
	out := os.NewFile(fdReplies, "replies")
	if out == nil {
		return 3
	}
	w := bufio.NewWriterSize(out, 256<<10)
	raw, err := io.ReadAll(io.LimitReader(os.Stdin, maxRequest))
	var req request
	if err == nil {
		err = json.Unmarshal(raw, &req)
	}
	if err != nil {
		os.Stderr.WriteString("ducklm web worker: its request cannot be read: " + err.Error() + "\n")
		return 3
	}
	if testHook != nil && testHook(req, w) {
		return 0
	}
	n := &web.Net{Via: os.Getenv(envSocket)}
	resp, err := n.Fetch(context.Background(), req.Grant, req.Request)
	if err != nil {
		return send(w, frameFailure, failureOf(err))
	}
	if code := send(w, frameResponse, resp); code != 0 {
		return code
	}
	if err := writeFrame(w, frameBody, resp.Body); err != nil {
		return 4
	}
	// What a hostile page can do to the parser, it does here.
	return send(w, frameText, web.Extract(resp.Body, resp.ContentType, resp.FinalURL))
}

func send(w *bufio.Writer, kind byte, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		os.Stderr.WriteString("ducklm web worker: " + err.Error() + "\n")
		return 3
	}
	if err := writeFrame(w, kind, b); err != nil {
		return 4 // ducklm stopped reading: it is gone, or it gave up on us
	}
	return 0
}

// failureOf is the frame of a fetch's error.
func failureOf(err error) failure {
	f := failure{Code: backend.ErrorCode(err), Message: backend.ErrorMessage(err)}
	var fail *web.Failure
	if errors.As(err, &fail) {
		f.Response, f.TimedOut = fail.Response, fail.TimedOut
	} else {
		f.Invalid = true
	}
	switch {
	case errors.Is(err, web.ErrNotGranted):
		f.Cause = "host"
	case errors.Is(err, web.ErrPrivateAddress):
		f.Cause = "private"
	}
	return f
}
