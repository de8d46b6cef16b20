package bwrap

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"ducklm/backend"
)

// Spec is one process to run.
type Spec struct {
	// Argv is the command and its arguments. When Script is set, Argv are
	// the script's arguments instead.
	Argv []string
	// Script, when set, is run by Interpreter (default /bin/sh) as a file.
	Script      []byte
	Interpreter string
	// Workspace is the absolute path of the step's folder: the only place
	// the process may write, and its working directory.
	Workspace string
	// WorkspaceDir, when set, is the workspace folder already opened (and
	// checked) by the caller: the process gets that folder, whatever has
	// the name Workspace by then, so a folder swapped for a link between
	// the caller's check and the start cannot redirect the step.
	WorkspaceDir *os.File
	// Network shares the host's network with the sandbox.
	Network bool
	// Limits bound the step; a zero field takes DefaultLimits' value.
	Limits backend.Limits
	// Env is the process's whole environment beyond a minimal PATH, HOME
	// (the workspace) and LANG, which it may override.
	Env   map[string]string
	Stdin []byte
	// OwnMemoryLimit says the process bounds its own memory (a ducklm
	// worker: a Go program that sets RLIMIT_DATA to Limits.MemoryBytes
	// first thing), so no RLIMIT_AS is set for it: that limit counts the
	// address space a Go runtime (and its race detector) reserves and
	// never uses. A memory cgroup still holds it where one can be made.
	OwnMemoryLimit bool
	// ExtraFiles are open to the process as fds 4, 5, … (fd 3 is closed),
	// e.g. the pipe a browser is driven through. Not with Script.
	ExtraFiles []*os.File
	// ReadOnly are host files or folders shown read-only inside the
	// sandbox at their own paths, beside the system's: an MCP server's
	// command and the package tree it lives in. Ignored unsandboxed.
	ReadOnly []string
}

// Result is what happened to the process.
type Result struct {
	// ExitCode is the process's exit status; a process ended by signal n
	// reports 128+n, as a shell would. Under bubblewrap a command killed
	// inside the sandbox (out of memory, CPU limit) also shows as 128+n.
	ExitCode int
	Stdout   []byte
	Stderr   []byte
	// Truncated says stdout or stderr passed Limits.OutputBytes; the rest was
	// read and discarded.
	Truncated bool
	// TimedOut says the wall-clock limit ended the step.
	TimedOut bool
	Duration time.Duration
	// Signal names the signal that ended the top process ("SIGKILL"), if any.
	Signal string
	// Sandboxed says the process ran under bubblewrap.
	Sandboxed bool
	// Enforced names the limits in force for this step, e.g. "cgroup pids".
	Enforced []string
}

// Where a script is placed inside the sandbox.
const sandboxScript = "/run/ducklm/script"

// The minimal PATH a step sees.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// systemDirs are shown read-only inside the sandbox; nothing else of the
// host filesystem is (no /home, /root, /var, /run, /srv, /mnt, /media, the
// data directory, or the host's /tmp).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// maskedFiles are hidden inside the sandbox: readable system files that hold
// secrets when the sandbox runs as root.
var maskedFiles = []string{"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"}

type probeResult struct {
	path   string
	ok     bool
	why    string
	userns bool // the sandbox gets its own user namespace
	// lasting is true when trying again at once cannot change the
	// answer (bubblewrap is not installed; it may be a minute later).
	lasting bool
}

var (
	probeMu  sync.Mutex
	probed   probeResult
	probedAt time.Time // zero: not probed yet
)

// Probing again: a failed probe is tried probeTries times, probePause
// apart, and a failure is remembered for reprobeAfter (so that bubblewrap
// installed while ducklm runs is found without a restart). One sandbox that
// could not start on a loaded machine (a timeout, a fork refused) must not
// turn every later step of the process into an unsandboxed one.
var (
	probeTries   = 3
	probePause   = time.Second
	reprobeAfter = time.Minute
	probeFn      = probe // tests count and script the probes
)

// Available reports whether bubblewrap is installed and can build a sandbox
// on this machine. A success is remembered for the process's life, a
// failure for a minute (after retries); why is a sentence for a person when
// ok is false.
func Available() (path string, ok bool, why string) {
	r := available()
	return r.path, r.ok, r.why
}

func available() probeResult {
	probeMu.Lock()
	defer probeMu.Unlock()
	if !probedAt.IsZero() && (probed.ok || time.Since(probedAt) < reprobeAfter) {
		return probed
	}
	r := probeFn()
	for i := 1; i < probeTries && !r.ok && !r.lasting; i++ {
		time.Sleep(probePause)
		r = probeFn()
	}
	probed, probedAt = r, time.Now()
	return r
}

func probe() probeResult {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return probeResult{why: "bubblewrap (bwrap) is not installed, so steps cannot be sandboxed", lasting: true}
	}
	if path, err = filepath.Abs(path); err != nil {
		return probeResult{why: fmt.Sprintf("bubblewrap's path cannot be resolved: %v", err)}
	}
	ws, err := os.MkdirTemp("", "ducklm-bwrap-probe-*")
	if err != nil {
		return probeResult{path: path, why: fmt.Sprintf("no temporary folder to test bubblewrap in: %v", err)}
	}
	defer os.RemoveAll(ws)
	spec := Spec{
		Argv:      []string{"/bin/sh", "-c", "cat /proc/self/uid_map"},
		Workspace: ws,
		Limits:    backend.Limits{Timeout: 20 * time.Second, OutputBytes: 4096},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := runSandboxed(ctx, path, false, spec)
	switch {
	case err != nil:
		return probeResult{path: path, why: fmt.Sprintf("bubblewrap at %s could not be started: %v", path, err)}
	case res.ExitCode != 0:
		msg := strings.TrimSpace(firstLine(string(res.Stderr)))
		if msg == "" {
			msg = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		return probeResult{path: path, why: fmt.Sprintf("bubblewrap at %s cannot create a sandbox on this machine (%s)", path, msg)}
	}
	// The initial user namespace maps the whole uid range; a sandbox's own
	// namespace maps a single id.
	userns := !strings.Contains(string(res.Stdout), "4294967295")
	return probeResult{path: path, ok: true, userns: userns}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Run runs spec under bubblewrap. It returns an EUNAVAILABLE error when
// bubblewrap is missing or unusable, EINVALID for a malformed spec, and
// ELIMIT wrapping ctx.Err() when ctx ends the step (the partial Result is
// returned with it). A process that fails or times out is a Result, not an
// error.
func Run(ctx context.Context, spec Spec) (Result, error) {
	if err := validate(spec); err != nil {
		return Result{}, err
	}
	r := available()
	if !r.ok {
		return Result{}, backend.Errorf(backend.EUNAVAILABLE, "%s", r.why)
	}
	return runSandboxed(ctx, r.path, r.userns, spec)
}

// RunUnsandboxed runs spec with no isolation at all: the process sees and
// may change everything the user can. It applies the same wall clock,
// process-group kill, output caps and resource limits as Run. Only the
// runtime, after a person approved the step, should call it.
func RunUnsandboxed(ctx context.Context, spec Spec) (Result, error) {
	if err := validate(spec); err != nil {
		return Result{}, err
	}
	lim := FillLimits(spec.Limits)
	l := launch{dir: hostDir(spec), env: envList(spec), limits: lim, ownMemory: spec.OwnMemoryLimit}
	argv := spec.Argv
	if spec.Script != nil {
		fd, err := memfile("ducklm-script", spec.Script)
		if err != nil {
			return Result{}, err
		}
		defer fd.Close()
		l.extra = append(l.extra, fd)
		// The interpreter opens the script through the inherited descriptor,
		// so no copy of it is left on disk.
		argv = append([]string{interpreter(spec), "/dev/fd/4"}, spec.Argv...)
	}
	l.extra = append(l.extra, spec.ExtraFiles...)
	l.argv = argv
	return execute(ctx, l, spec.Stdin)
}

func runSandboxed(ctx context.Context, bwrapPath string, userns bool, spec Spec) (Result, error) {
	lim := FillLimits(spec.Limits)
	l := launch{dir: hostDir(spec), env: []string{"PATH=" + defaultPath}, limits: lim, sandboxed: true, ownMemory: spec.OwnMemoryLimit}
	argv := spec.Argv
	hasScript := spec.Script != nil
	if hasScript {
		fd, err := memfile("ducklm-script", spec.Script)
		if err != nil {
			return Result{}, err
		}
		defer fd.Close()
		l.extra = append(l.extra, fd)
		argv = append([]string{interpreter(spec), sandboxScript}, spec.Argv...)
	}
	l.extra = append(l.extra, spec.ExtraFiles...)
	bindFrom := spec.Workspace
	if spec.WorkspaceDir != nil {
		// Bubblewrap binds the folder open on this descriptor, not
		// whatever the path names when it gets there (fd 3 is the gate's).
		bindFrom = fmt.Sprintf("/proc/self/fd/%d", 4+len(l.extra))
		l.extra = append(l.extra, spec.WorkspaceDir)
	}
	if userns {
		// Set after bubblewrap made the user namespace, RLIMIT_NPROC counts
		// only the sandbox's processes; set before, it would count all of
		// the user's processes on the machine. Root is exempt either way.
		l.nprocInside = true
		argv = append([]string{"/bin/sh", "-c", fmt.Sprintf(nprocScript, lim.Processes), "sh"}, argv...)
	}
	l.argv = append(sandboxArgs(bwrapPath, spec, hasScript, bindFrom), argv...)
	return execute(ctx, l, spec.Stdin)
}

// nprocScript sets the process limit in dash (-p) or bash (-u) and runs the
// command in its place.
const nprocScript = `ulimit -u %[1]d 2>/dev/null || ulimit -p %[1]d 2>/dev/null; exec "$@"`

// sandboxArgs builds bubblewrap's options up to and including "--".
// The workspace is bound from bindFrom (its path, or a descriptor's).
func sandboxArgs(bwrapPath string, spec Spec, hasScript bool, bindFrom string) []string {
	a := []string{bwrapPath}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	for _, f := range maskedFiles {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			a = append(a, "--ro-bind", "/dev/null", f)
		}
	}
	if spec.Network {
		// /etc/resolv.conf often links into /run, which the sandbox does not
		// see; show that one file where the link expects it.
		if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !underSystemDir(target) {
			a = append(a, "--ro-bind-try", target, target)
		}
	}
	a = append(a,
		"--proc", "/proc",
		"--dev", "/dev",
		"--tmpfs", "/tmp",
		"--bind", bindFrom, spec.Workspace,
	)
	// After /tmp's tmpfs, so a package tree under the host's /tmp shows.
	for _, p := range spec.ReadOnly {
		if !underSystemDir(p) {
			a = append(a, "--ro-bind", p, p)
		}
	}
	if hasScript {
		a = append(a, "--ro-bind-data", "4", sandboxScript)
	}
	a = append(a,
		"--remount-ro", "/",
		"--chdir", spec.Workspace,
		"--unshare-all",
	)
	if spec.Network {
		a = append(a, "--share-net")
	}
	a = append(a,
		"--die-with-parent",
		"--new-session",
		"--cap-drop", "ALL",
		"--hostname", "ducklm-sandbox",
		"--clearenv",
	)
	env := envMap(spec)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a = append(a, "--setenv", k, env[k])
	}
	return append(a, "--")
}

// hostDir is where the process starts on the host: the opened workspace
// through this process's descriptor (the child changes into it before
// anything runs, while it still holds the parent's descriptors), else its
// path.
func hostDir(spec Spec) string {
	if spec.WorkspaceDir != nil {
		return fmt.Sprintf("/proc/self/fd/%d", spec.WorkspaceDir.Fd())
	}
	return spec.Workspace
}

func underSystemDir(p string) bool {
	for _, d := range systemDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

func interpreter(spec Spec) string {
	if spec.Interpreter != "" {
		return spec.Interpreter
	}
	return "/bin/sh"
}

func envMap(spec Spec) map[string]string {
	env := map[string]string{"PATH": defaultPath, "HOME": spec.Workspace, "LANG": "C.UTF-8"}
	for k, v := range spec.Env {
		env[k] = v
	}
	return env
}

func envList(spec Spec) []string {
	env := envMap(spec)
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func validate(spec Spec) error {
	if len(spec.Argv) == 0 && spec.Script == nil {
		return backend.Errorf(backend.EINVALID, "the step has no command to run")
	}
	if spec.Script != nil && len(spec.ExtraFiles) > 0 {
		return backend.Errorf(backend.EINVALID, "a step with a script takes no extra files")
	}
	if spec.Script == nil && spec.Argv[0] == "" {
		return backend.Errorf(backend.EINVALID, "the step's command is empty")
	}
	ws := spec.Workspace
	if ws == "" || !filepath.IsAbs(ws) || filepath.Clean(ws) != ws {
		return backend.Errorf(backend.EINVALID, "the workspace %q is not a clean absolute path", ws)
	}
	if ws == "/" {
		return backend.Errorf(backend.EINVALID, "the workspace cannot be the root folder")
	}
	var fi os.FileInfo
	var err error
	if spec.WorkspaceDir != nil {
		fi, err = spec.WorkspaceDir.Stat()
	} else {
		fi, err = os.Stat(ws)
	}
	if err != nil {
		return backend.Wrap(err, backend.EINVALID, "the workspace %s cannot be used", ws)
	}
	if !fi.IsDir() {
		return backend.Errorf(backend.EINVALID, "the workspace %s is not a folder", ws)
	}
	for _, p := range spec.ReadOnly {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return backend.Errorf(backend.EINVALID, "the read-only path %q is not a clean absolute path", p)
		}
		if p == "/" {
			return backend.Errorf(backend.EINVALID, "the root folder cannot be shown to a sandbox whole")
		}
		if _, err := os.Stat(p); err != nil {
			return backend.Wrap(err, backend.EINVALID, "the read-only path %s cannot be used", p)
		}
	}
	for k := range spec.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return backend.Errorf(backend.EINVALID, "the environment variable name %q is not valid", k)
		}
	}
	return nil
}

// FillLimits returns l with every zero or negative field set to
// DefaultLimits' value: a step nobody bounded gets the default bound, never
// none.
func FillLimits(l backend.Limits) backend.Limits {
	d := backend.DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.CPUSeconds <= 0 {
		l.CPUSeconds = d.CPUSeconds
	}
	if l.FileBytes <= 0 {
		l.FileBytes = d.FileBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.Processes <= 0 {
		l.Processes = d.Processes
	}
	return l
}
