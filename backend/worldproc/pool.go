package worldproc

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"ducklm/backend"
	"ducklm/backend/starlark"
)

// Options tune a Pool.
type Options struct {
	// Workers is the most worker processes alive at once; 0 means the
	// number of cores, at least 2.
	Workers int
	// IdleTimeout stops a worker nobody called for this long; 0 means a
	// minute.
	IdleTimeout time.Duration
}

// Pool runs world programs in worker processes (see the package doc). It is
// safe for concurrent use; a call waits for a free worker.
type Pool struct {
	idleTimeout time.Duration
	slots       chan struct{} // one per worker that may be alive

	mu     sync.Mutex
	idle   []*worker
	all    map[*worker]bool
	closed bool
}

var _ starlark.Runner = (*Pool)(nil)

// New returns a pool that starts workers as calls need them.
func New(opts Options) *Pool {
	if opts.Workers <= 0 {
		opts.Workers = max(2, runtime.GOMAXPROCS(0))
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = time.Minute
	}
	return &Pool{idleTimeout: opts.IdleTimeout, slots: make(chan struct{}, opts.Workers), all: map[*worker]bool{}}
}

var shared = sync.OnceValue(func() *Pool { return New(Options{}) })

// Shared returns the process's pool, made on first use. Its workers stop
// when they idle and die with the process, so it is never closed.
func Shared() *Pool { return shared() }

// Compile checks src in a worker (its top-level code runs there) and
// reports what it defines.
func (p *Pool) Compile(ctx context.Context, src starlark.Source) (starlark.Shape, error) {
	resp, err := p.do(ctx, src, &request{Op: "compile"}, "top-level code")
	return resp.Shape, err
}

// Call runs one call of src's program in a worker.
func (p *Pool) Call(ctx context.Context, src starlark.Source, c starlark.Call) (starlark.Reply, error) {
	what := c.Func
	if what == "steps" {
		what = "step" // a batch of steps fails in one of them
	}
	resp, err := p.do(ctx, src, &request{Op: "call", Call: c}, what)
	return resp.Reply, err
}

// Close stops every worker and makes later calls fail.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	ws := make([]*worker, 0, len(p.all))
	for w := range p.all {
		ws = append(ws, w)
	}
	p.idle = nil
	p.mu.Unlock()
	for _, w := range ws {
		w.kill()
		<-w.exited
	}
	return nil
}

// PIDs lists the process ids of the pool's live workers.
func (p *Pool) PIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for w := range p.all {
		out = append(out, w.cmd.Process.Pid)
	}
	return out
}

// do sends req about src's program to a worker, with the source when the
// worker does not hold it, and turns what went wrong into one sentence.
func (p *Pool) do(ctx context.Context, src starlark.Source, req *request, what string) (response, error) {
	limits := src.Limits
	if limits.MaxMemoryBytes <= 0 {
		limits.MaxMemoryBytes = starlark.DefaultMaxMemoryBytes
	}
	req.Name, req.Digest, req.Limits = src.Name, src.Digest, limits
	if err := ctx.Err(); err != nil {
		return response{}, backend.Wrap(err, backend.ELIMIT, "world program %s was not started", what)
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return response{}, backend.Wrap(ctx.Err(), backend.ELIMIT, "world program %s was not started", what)
	}
	w, err := p.take(limits.MaxMemoryBytes)
	if err != nil {
		<-p.slots
		return response{}, err
	}
	key := programKey(src.Name, src.Digest, limits)
	if !w.loaded[key] {
		req.Code = src.Code
	}
	resp, sent, err := w.exchange(ctx, req)
	if err != nil && !sent && ctx.Err() == nil {
		// The worker was gone before it could read the request: it died
		// idle (the OOM killer, a kill by hand) and the pool had not seen
		// it exit yet, as between Wait returning and exited closing. The
		// call never started, so another worker answers it.
		p.drop(w)
		if w, err = p.take(limits.MaxMemoryBytes); err != nil {
			<-p.slots
			return response{}, err
		}
		req.Code = src.Code
		resp, _, err = w.exchange(ctx, req)
	}
	if err == nil && resp.NeedCode {
		req.Code = src.Code
		resp, _, err = w.exchange(ctx, req)
	}
	if err != nil {
		ferr := w.failure(ctx, err, what, limits.MaxMemoryBytes)
		p.drop(w)
		<-p.slots
		return response{}, ferr
	}
	w.loaded[key] = true
	p.give(w)
	<-p.slots
	if resp.NeedCode {
		return response{}, backend.Errorf(backend.EINTERNAL, "the world program's worker asked for its source twice")
	}
	if resp.ErrCode != "" {
		e := &backend.Error{Code: resp.ErrCode, Message: resp.ErrMessage}
		if resp.Raised {
			e.Err = starlark.ErrRaised
		}
		return response{}, e
	}
	return resp, nil
}

// take returns an idle worker with the memory limit asked for, or starts
// one. The caller holds a slot, so starting one never exceeds the pool's
// size: an idle worker with another limit is stopped to make room.
func (p *Pool) take(limit int64) (*worker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, backend.Errorf(backend.EUNAVAILABLE, "world programs cannot run: ducklm is shutting down")
	}
	for i := len(p.idle) - 1; i >= 0; i-- {
		if w := p.idle[i]; w.limit == limit {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			w.idleTimer.Stop()
			if w.gone() { // died while idle: never hand out a dead worker
				delete(p.all, w)
				continue
			}
			p.mu.Unlock()
			return w, nil
		}
	}
	var stale *worker
	if len(p.all) >= cap(p.slots) && len(p.idle) > 0 {
		stale = p.idle[0]
		p.idle = p.idle[1:]
		delete(p.all, stale)
	}
	p.mu.Unlock()
	if stale != nil {
		stale.idleTimer.Stop()
		stale.stop()
	}
	w, err := start(limit)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		w.kill()
		return nil, backend.Errorf(backend.EUNAVAILABLE, "world programs cannot run: ducklm is shutting down")
	}
	p.all[w] = true
	return w, nil
}

// give returns a worker that answered to the idle list.
func (p *Pool) give(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		w.kill()
		return
	}
	p.idle = append(p.idle, w)
	w.idleTimer = time.AfterFunc(p.idleTimeout, func() { p.reap(w) })
}

// reap stops w if it is still idle.
func (p *Pool) reap(w *worker) {
	p.mu.Lock()
	i := -1
	for j, x := range p.idle {
		if x == w {
			i = j
		}
	}
	if i < 0 {
		p.mu.Unlock()
		return
	}
	p.idle = append(p.idle[:i], p.idle[i+1:]...)
	delete(p.all, w)
	p.mu.Unlock()
	w.stop()
}

// drop forgets a worker whose exchange failed; it is dead or killed.
func (p *Pool) drop(w *worker) {
	p.mu.Lock()
	delete(p.all, w)
	p.mu.Unlock()
	w.kill()
}

// worker is one worker process and its pipes.
type worker struct {
	cmd       *exec.Cmd
	limit     int64
	requests  *os.File // the write end of the worker's fd 3
	replies   *os.File // the read end of its fd 4
	bw        *bufio.Writer
	enc       *gob.Encoder
	dec       *gob.Decoder
	stderr    *headBuffer
	loaded    map[string]bool // programs the worker holds, by programKey
	idleTimer *time.Timer

	exited  chan struct{} // closed once the process has exited and been waited for
	waitErr error
	killed  bool // by the pool (a cancel or a stop), not by anyone else
	mu      sync.Mutex
}

// start starts a worker limited to limit bytes of data.
func start(limit int64) (*worker, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot start a process for world programs")
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot start a process for world programs")
	}
	// /proc/self/exe is this executable even when its file was replaced
	// (an upgrade while ducklm runs), so a worker always speaks our wire.
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{argv0}
	cmd.Env = append(workerEnv(), envWorker+"=1", envLimit+"="+strconv.FormatInt(limit, 10))
	cmd.ExtraFiles = []*os.File{reqR, repW}
	w := &worker{cmd: cmd, limit: limit, requests: reqW, replies: repR, stderr: &headBuffer{max: 8 << 10},
		loaded: map[string]bool{}, exited: make(chan struct{})}
	cmd.Stderr = w.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	reqR.Close() // the worker's ends: only the worker holds them now
	repW.Close()
	if err != nil {
		reqW.Close()
		repR.Close()
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot start a process for world programs")
	}
	go func() {
		err := cmd.Wait()
		w.mu.Lock()
		w.waitErr = err
		w.mu.Unlock()
		reqW.Close()
		repR.Close()
		close(w.exited)
	}()
	w.bw = bufio.NewWriter(reqW)
	w.enc = gob.NewEncoder(w.bw)
	w.dec = gob.NewDecoder(bufio.NewReader(repR))
	return w, nil
}

// workerEnv is ducklm's environment without a worker's own variables.
func workerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envWorker+"=") && !strings.HasPrefix(kv, envLimit+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// exchange sends one request and reads its response; a cancelled ctx kills
// the worker, which ends the exchange. sent says whether the request reached
// the worker's pipe: when it did not, the worker never started the call.
func (w *worker) exchange(ctx context.Context, req *request) (resp response, sent bool, err error) {
	stop := context.AfterFunc(ctx, w.kill)
	err = w.enc.Encode(req)
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		sent = true
		err = w.dec.Decode(&resp)
	}
	// A cancel that came as the answer did has started the kill (in its
	// own goroutine): this worker is dying, so the exchange counts as
	// cancelled, and the worker never goes back to the idle list, where
	// the next call would find it dead.
	if !stop() && err == nil {
		err = ctx.Err()
	}
	return resp, sent, err
}

// gone reports whether the worker's process has exited.
func (w *worker) gone() bool {
	select {
	case <-w.exited:
		return true
	default:
		return false
	}
}

// kill ends the process now.
func (w *worker) kill() {
	w.mu.Lock()
	w.killed = true
	w.mu.Unlock()
	_ = w.cmd.Process.Kill()
}

// stop asks an idle worker to exit (the end of its requests) and kills it
// if it does not within a few seconds.
func (w *worker) stop() {
	w.mu.Lock()
	w.killed = true
	w.mu.Unlock()
	w.requests.Close()
	go func() {
		select {
		case <-w.exited:
		case <-time.After(5 * time.Second):
			_ = w.cmd.Process.Kill()
		}
	}()
}

// failure explains why an exchange with w failed: the caller cancelled,
// the pool was closed, or the worker died on its own. A call's errors and
// panics come back as answers (package starlark recovers them), so a worker
// that dies by itself met a limit of its process: its memory, or a thread
// it could not start within it. The Go runtime says "out of memory" when the
// heap meets it, but may also abort or crash outright, so a death without
// those words is named as the likely cause, not the sure one.
func (w *worker) failure(ctx context.Context, cause error, what string, limit int64) error {
	select {
	case <-w.exited:
	case <-time.After(10 * time.Second):
		w.kill()
		<-w.exited
	}
	w.mu.Lock()
	killed, waitErr := w.killed, w.waitErr
	w.mu.Unlock()
	if ctx.Err() != nil {
		return backend.Wrap(ctx.Err(), backend.ELIMIT, "world program was stopped during %s", what)
	}
	detail := fmt.Errorf("%w; worker exit: %v; stderr: %s", cause, waitErr, w.stderr.String())
	lost := fmt.Errorf("%w: %w", starlark.ErrCallLost, detail) // what the call had done died with it
	raise := "if it needs more, raise the memory limit of world programs in Settings (worldMemoryMiB in settings.json)"
	switch {
	case OutOfMemory(w.stderr.String()):
		return backend.Wrap(lost, backend.ELIMIT, "world program used more than its memory limit of %s during %s; %s",
			formatBytes(limit), what, raise)
	case killed:
		return backend.Wrap(detail, backend.EUNAVAILABLE, "world program was stopped during %s: ducklm is shutting down", what)
	}
	how := "it exited"
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = "it was killed by " + unix.SignalName(ws.Signal())
		}
	}
	return backend.Wrap(lost, backend.ELIMIT,
		"the process running the world program died during %s (%s), most likely at its memory limit of %s; %s",
		what, how, formatBytes(limit), raise)
}

// OutOfMemory reports whether a Go worker's stderr says it died for want of
// memory (its RLIMIT_DATA, see LimitMemory). Which allocation meets the limit first varies: the heap ("out of
// memory", "cannot allocate memory"), a new thread's stack
// ("pthread_create failed"), in race builds the detector's shadow
// ("ThreadSanitizer failed to allocate"), or memory the runtime maps for
// itself without checking that it got it (runtimeFault).
func OutOfMemory(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "pthread_create failed", "ThreadSanitizer failed to allocate"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return runtimeFault(stderr)
}

// runtimeFault reports whether the Go runtime itself faulted: a fatal
// signal in its own code, not a panic of the code it runs (a fault there
// is "panic: runtime error: invalid memory address", which package
// starlark recovers). A worker is pure Go with no cgo, so its runtime
// faults when memory it maps for itself is refused and it does not look:
// Go 1.26's Green Tea collector maps each new span queue (newSpanSPMC's
// sysAlloc) without checking, and at the limit its mark worker writes
// through nil ("SIGSEGV: segmentation violation", first frame
// runtime.(*spanQueue).tryDrain).
func runtimeFault(stderr string) bool {
	if atLineStart(stderr, "fatal error: unexpected signal during runtime execution") >= 0 {
		return true
	}
	i := atLineStart(stderr, "SIGSEGV: segmentation violation\n")
	if i < 0 {
		return false
	}
	// The faulting goroutine's header ends in "]:"; its first frame follows.
	_, frame, ok := strings.Cut(stderr[i:], "]:\n")
	return ok && strings.HasPrefix(frame, "runtime.")
}

// atLineStart is the index of the first line of s that begins with prefix,
// or -1.
func atLineStart(s, prefix string) int {
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], prefix) {
			return i
		}
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return -1
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

// headBuffer keeps the first max bytes written to it: a Go runtime's fatal
// error comes first, before the goroutine dumps that follow it.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.b)
}
