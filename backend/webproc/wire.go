package webproc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"ducklm/backend/web"
	"ducklm/backend/webhost"
)

// The environment of a worker: envWorker marks the process as one,
// envSocket is the guard's socket, envMemory its memory limit in bytes.
const (
	envWorker = "DUCKLM_WEB_WORKER"
	envSocket = "DUCKLM_WEB_SOCKET"
	envMemory = "DUCKLM_WEB_MEMORY"
)

// fdReplies is the worker's answer pipe (fd 4 is the executable).
const fdReplies = 5

// request is what a worker is asked, on its stdin.
type request struct {
	Grant   webhost.Grant `json:"grant"`
	Request web.Request   `json:"request"`
}

// The kinds of frame a worker writes, in this order: a failure alone, or a
// response, its body, then its text.
const (
	frameFailure  byte = 'F'
	frameResponse byte = 'R'
	frameBody     byte = 'B'
	frameText     byte = 'T'
)

// failure is a fetch that got no answer (or a request that was not valid),
// as the worker reports it.
type failure struct {
	Invalid  bool         `json:"invalid,omitempty"` // the request itself was not valid
	Code     string       `json:"code"`
	Message  string       `json:"message"`
	Cause    string       `json:"cause,omitempty"` // "host", "private": web.ErrNotGranted, web.ErrPrivateAddress
	TimedOut bool         `json:"timed_out,omitempty"`
	Response web.Response `json:"response"`
}

// writeFrame writes one frame: its kind, its length, its bytes.
func writeFrame(w *bufio.Writer, kind byte, b []byte) error {
	var head [9]byte
	head[0] = kind
	binary.BigEndian.PutUint64(head[1:], uint64(len(b)))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Flush()
}

// errWire is a worker that broke the wire: a frame out of order, or larger
// than its kind may be.
var errWire = errors.New("the web worker's answer is malformed")

// readFrame reads one frame of at most max bytes; io.EOF when the worker
// wrote nothing more.
func readFrame(r *bufio.Reader, max func(kind byte) int64) (byte, []byte, error) {
	var head [9]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, io.EOF // died as it began a frame
		}
		return 0, nil, err
	}
	n := binary.BigEndian.Uint64(head[1:])
	if limit := max(head[0]); limit < 0 || n > uint64(limit) {
		return 0, nil, fmt.Errorf("%w: a frame %q of %d bytes", errWire, head[0], n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, io.EOF // died in the middle of a frame: the frame is lost
	}
	return head[0], b, nil
}
