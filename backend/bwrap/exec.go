package bwrap

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"ducklm/backend"
)

// launch is a process ready to start: the gate shell execs argv once the
// process sits in its cgroup with its limits set.
type launch struct {
	argv        []string
	env         []string
	dir         string
	extra       []*os.File // become fds 4, 5, ... (fd 3 is the gate)
	limits      backend.Limits
	sandboxed   bool
	nprocInside bool // RLIMIT_NPROC is set inside the sandbox's user namespace
	ownMemory   bool // the process sets its own RLIMIT_DATA: no RLIMIT_AS
}

// gateScript holds the process until the parent has placed it in its cgroup
// and set its rlimits; nothing it starts can escape them, because nothing
// starts before the gate opens. A closed gate (parent failed) runs nothing.
const gateScript = `read -r _ <&3 || exit 125; exec 3<&-; exec "$@"`

// How long output pipes may stay open after the process is gone; only a
// process that left our process group unsandboxed can hold them that long.
const drainGrace = 250 * time.Millisecond

func execute(ctx context.Context, l launch, stdin []byte) (Result, error) {
	res := Result{Sandboxed: l.sandboxed}
	if err := ctx.Err(); err != nil {
		return res, cancelled(err)
	}
	var closers []*os.File
	defer func() {
		for _, f := range closers {
			f.Close()
		}
	}()
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return res, backend.Wrap(err, backend.EINTERNAL, "the step could not be started")
	}
	closers = append(closers, gateR, gateW)
	outR, outW, err := os.Pipe()
	if err != nil {
		return res, backend.Wrap(err, backend.EINTERNAL, "the step could not be started")
	}
	closers = append(closers, outR, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		return res, backend.Wrap(err, backend.EINTERNAL, "the step could not be started")
	}
	closers = append(closers, errR, errW)

	cmd := exec.Command("/bin/sh", append([]string{"-c", gateScript, "ducklm-gate"}, l.argv...)...)
	cmd.Env = l.env
	cmd.Dir = l.dir
	cmd.Stdout, cmd.Stderr = outW, errW
	if stdin != nil {
		// A memory file, not a pipe: nothing has to feed it, and a process
		// that never reads its input cannot stall the step.
		in, err := memfile("ducklm-stdin", stdin)
		if err != nil {
			return res, err
		}
		closers = append(closers, in)
		cmd.Stdin = in
	}
	cmd.ExtraFiles = append([]*os.File{gateR}, l.extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	cg, cgEnforced := newCgroup(l.limits)
	defer cg.remove()

	startc := make(chan error, 1)
	exited := make(chan struct{}) // the process has exited, and is not reaped yet
	reap := make(chan struct{})
	waitc := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the child exits, so
		// that thread stays put until the child is reaped.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			startc <- err
			return
		}
		startc <- nil
		waitExit(cmd.Process.Pid)
		close(exited)
		<-reap
		waitc <- cmd.Wait()
	}()
	if err := <-startc; err != nil {
		return res, backend.Wrap(err, backend.EINTERNAL, "the step could not be started")
	}
	pid := cmd.Process.Pid
	// The child holds its own copies now.
	gateR.Close()
	outW.Close()
	errW.Close()

	// kill kills the process group and the cgroup. Until the process is
	// reaped its pid, and so its group's id, cannot be reused, so the group
	// killed is always the step's own.
	kill := func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		cg.kill()
	}
	// finish ends what the process left running and reaps it.
	finish := func() {
		<-exited
		kill()
		close(reap)
		<-waitc
	}
	enforced, err := confine(pid, cg, l)
	if err != nil {
		gateW.Close() // the gate exits without running anything
		kill()
		finish()
		return res, err
	}
	res.Enforced = append(append([]string{"timeout", "output"}, cgEnforced...), enforced...)

	var stdout, stderr capture
	stdout.limit, stderr.limit = l.limits.OutputBytes, l.limits.OutputBytes
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); stdout.drain(outR) }()
	go func() { defer readers.Done(); stderr.drain(errR) }()

	start := time.Now()
	if _, err := gateW.Write([]byte("\n")); err != nil {
		kill()
		finish()
		return res, backend.Wrap(err, backend.EINTERNAL, "the step could not be started")
	}
	gateW.Close()

	timer := time.NewTimer(l.limits.Timeout)
	defer timer.Stop()
	var ctxErr error
	select {
	case <-exited:
	case <-timer.C:
		res.TimedOut = true
		kill()
	case <-ctx.Done():
		ctxErr = ctx.Err()
		kill()
	}
	// The step is over when its command is: anything it left running in
	// the background goes too.
	finish()
	res.Duration = time.Since(start)

	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		// Something outside our reach still holds the pipes; stop reading.
		outR.Close()
		errR.Close()
		<-drained
	}
	res.Stdout, res.Stderr = stdout.bytes(), stderr.bytes()
	res.Truncated = stdout.truncated || stderr.truncated

	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		res.Signal = unix.SignalName(ws.Signal())
		res.ExitCode = 128 + int(ws.Signal())
	default:
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctxErr != nil {
		return res, cancelled(ctxErr)
	}
	return res, nil
}

// waitExit blocks until pid has exited, without reaping it.
func waitExit(pid int) {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
}

func cancelled(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return backend.Wrap(err, backend.ELIMIT, "the step was stopped because its deadline passed")
	}
	return backend.Wrap(err, backend.ELIMIT, "the step was stopped because it was cancelled")
}

// confine puts the gated process into its cgroup and sets its rlimits, which
// everything it starts inherits.
func confine(pid int, cg *cgroup, l launch) ([]string, error) {
	if err := cg.add(pid); err != nil {
		return nil, err
	}
	lim := l.limits
	type rlimit struct {
		name       string // for Result.Enforced; "" is not reported
		resource   int
		soft, hard uint64
	}
	set := []rlimit{
		// SIGXCPU at the soft limit, SIGKILL a second later.
		{"rlimit cpu", unix.RLIMIT_CPU, uint64(lim.CPUSeconds), uint64(lim.CPUSeconds) + 1},
		{"rlimit fsize", unix.RLIMIT_FSIZE, uint64(lim.FileBytes), uint64(lim.FileBytes)},
		// No core dumps into the workspace.
		{"", unix.RLIMIT_CORE, 0, 0},
	}
	if !cg.hasMemory() && !l.ownMemory {
		set = append(set, rlimit{"rlimit as", unix.RLIMIT_AS, uint64(lim.MemoryBytes), uint64(lim.MemoryBytes)})
	}
	var enforced []string
	for _, s := range set {
		rl := unix.Rlimit{Cur: s.soft, Max: s.hard}
		if err := unix.Prlimit(pid, s.resource, &rl, nil); err != nil {
			return nil, backend.Wrap(err, backend.EINTERNAL, "the step's resource limits could not be set")
		}
		if s.name != "" {
			enforced = append(enforced, s.name)
		}
	}
	if l.nprocInside && os.Getuid() != 0 {
		enforced = append(enforced, "rlimit nproc")
	}
	return enforced, nil
}

// memfile returns an in-memory file holding data, positioned at
// its start.
func memfile(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "the step's input could not be prepared")
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "the step's input could not be prepared")
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, backend.Wrap(err, backend.EINTERNAL, "the step's input could not be prepared")
	}
	return f, nil
}

// capture keeps the first limit bytes of a stream and reads and discards
// the rest, so the writer never blocks on a full pipe.
type capture struct {
	limit     int64
	buf       []byte
	truncated bool
}

func (c *capture) drain(f *os.File) {
	chunk := make([]byte, 64<<10)
	for {
		n, err := f.Read(chunk)
		if n > 0 {
			room := c.limit - int64(len(c.buf))
			switch {
			case room >= int64(n):
				c.buf = append(c.buf, chunk[:n]...)
			default:
				if room > 0 {
					c.buf = append(c.buf, chunk[:room]...)
				}
				c.truncated = true
			}
		}
		if err != nil {
			return
		}
	}
}

func (c *capture) bytes() []byte {
	if c.buf == nil {
		return []byte{}
	}
	return c.buf
}
