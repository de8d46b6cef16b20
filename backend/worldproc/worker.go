package worldproc

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"ducklm/backend"
	"ducklm/backend/starlark"
)

// The environment of a worker: envWorker marks the process as one, envLimit
// is its memory limit in bytes.
const (
	envWorker = "DUCKLM_WORLD_WORKER"
	envLimit  = "DUCKLM_WORLD_WORKER_LIMIT"
	argv0     = "ducklm-world-worker"
)

// The worker's pipes, as cmd.ExtraFiles numbers them.
const (
	fdRequests = 3
	fdReplies  = 4
)

// request is one message to a worker.
type request struct {
	Op     string // "compile" or "call"
	Name   string
	Digest string
	// Code is the program's source: sent when the pool does not know the
	// worker holds the program, or the worker asked for it.
	Code   []byte
	Limits starlark.Limits
	Call   starlark.Call
}

// response is a worker's answer to one request.
type response struct {
	NeedCode bool // the worker does not hold the program: send it again with Code
	Shape    starlark.Shape
	Reply    starlark.Reply
	// ErrCode and ErrMessage are the *backend.Error the call returned.
	ErrCode    string
	ErrMessage string
	Raised     bool // the program called fail() (starlark.ErrRaised)
}

func init() {
	if os.Getenv(envWorker) != "1" {
		return
	}
	// This process is a worker: it serves and exits, and never reaches main.
	//
	// A world program allocates fast and keeps little (a shortest path on a
	// 64×64 grid builds and drops its frontier every call), so at Go's
	// default pace the collector ran every ~4 MB allocated and took about
	// as much CPU as the program. A heap of five times the live data
	// (GOGC 400; the memory limit below still bounds it) runs it a quarter
	// as often. One process set up with GOGC of its own keeps it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// It serves on a goroutine of its own, not on init's: during init the
	// main goroutine is locked to the main thread, and every time a locked
	// goroutine waits (its pipe, the collector's pauses) the runtime hands
	// the thread's place to another through the kernel.
	// (BenchmarkBranchesOnWorkers, 64×64 grid, 1 worker: 49 branches/s
	// as it was, 65 on a goroutine, 74–88 with GOGC 400 as well.)
	code := make(chan int, 1)
	go func() { code <- serve() }()
	os.Exit(<-code)
}

// maxPrograms bounds the compiled programs a worker keeps; past it, it
// starts over (and asks for the source again).
const maxPrograms = 64

// serve is a worker's whole life: bound its memory, then answer requests
// until the pool closes the pipe.
func serve() int {
	if limit, err := strconv.ParseInt(os.Getenv(envLimit), 10, 64); err == nil && limit > 0 {
		if err := LimitMemory(limit); err != nil {
			os.Stderr.WriteString("ducklm world worker: " + err.Error() + "\n")
			return 3
		}
	}
	in := os.NewFile(fdRequests, "requests")
	out := os.NewFile(fdReplies, "replies")
	if in == nil || out == nil {
		return 3
	}
	dec := gob.NewDecoder(bufio.NewReader(in))
	bw := bufio.NewWriter(out)
	enc := gob.NewEncoder(bw)
	programs := map[string]*starlark.Program{}
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			return 0 // the pool closed the pipe, or ducklm is gone
		}
		resp := answer(programs, &req)
		if err := enc.Encode(&resp); err != nil {
			return 0
		}
		if err := bw.Flush(); err != nil {
			return 0
		}
	}
}

// answer runs one request against the worker's programs.
func answer(programs map[string]*starlark.Program, req *request) response {
	key := programKey(req.Name, req.Digest, req.Limits)
	prog, ok := programs[key]
	if !ok {
		if req.Code == nil {
			return response{NeedCode: true}
		}
		var err error
		if prog, err = starlark.Compile(req.Name, req.Code, req.Limits); err != nil {
			return errorResponse(err)
		}
		if prog.Digest() != req.Digest {
			return errorResponse(backend.Errorf(backend.EINTERNAL, "the world worker was sent source that is not %s", req.Digest))
		}
		if len(programs) >= maxPrograms {
			clear(programs)
		}
		programs[key] = prog
	}
	if req.Op == "compile" {
		return response{Shape: prog.Shape()}
	}
	reply, err := prog.Eval(context.Background(), req.Call)
	if err != nil {
		return errorResponse(err)
	}
	return response{Reply: reply}
}

func errorResponse(err error) response {
	return response{ErrCode: backend.ErrorCode(err), ErrMessage: backend.ErrorMessage(err), Raised: errors.Is(err, starlark.ErrRaised)}
}

// LimitMemory bounds the data this process may map (RLIMIT_DATA) to limit
// bytes more than it has mapped already, and has the collector work harder
// as the heap nears it. A worker calls it first thing; past the limit the
// Go runtime dies, saying so on stderr (see OutOfMemory).
func LimitMemory(limit int64) error {
	// What the runtime and the executable's libraries mapped before any
	// work began (~40 MB of mostly untouched reservations for a Go binary)
	// is not the work's: the work gets limit more.
	base, err := dataBytes()
	if err != nil {
		return err
	}
	total := uint64(base) + uint64(limit)*raceFactor
	lim := syscall.Rlimit{Cur: total, Max: total}
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &lim); err != nil {
		return fmt.Errorf("cannot set its memory limit: %w", err)
	}
	// The collector works harder as the heap nears the limit, so work
	// whose live data fits is not killed by garbage it left.
	debug.SetMemoryLimit(limit / 4 * 3)
	return nil
}

// dataBytes reads how much data the process has mapped (VmData), which is
// what RLIMIT_DATA counts.
func dataBytes() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmData:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cannot read VmData in /proc/self/status: %q", line)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmData in /proc/self/status")
}

// programKey names a compiled program: the same source compiled under
// another name or other limits answers differently.
func programKey(name, digest string, l starlark.Limits) string {
	return name + "\x00" + digest + "\x00" + strconv.FormatUint(l.MaxSteps, 10) + "\x00" + strconv.Itoa(l.MaxStateBytes)
}
