package tool

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"ducklm/backend"
)

// root is an open workspace. Every path a file tool touches is opened
// relative to it with openat2(RESOLVE_BENEATH), so the kernel refuses any
// resolution, symlinks included, that would leave the workspace. On kernels
// without openat2 (before 5.6) each component is checked with Lstat instead,
// which is open to a race with a process changing the tree at the same
// moment.
type root struct {
	dir  string // as the call named it
	real string // with symlinks resolved
	fd   int
	ws   *workspace // holds fd open
}

// forceWalk makes openat fall back to the component walk; tests set it.
var forceWalk atomic.Bool

// openRoot opens the call's workspace as openWorkspace does: only the
// folder the run was given, never what a link swapped in under its name
// leads to.
func openRoot(call backend.ToolCall) (*root, error) {
	ws, err := openWorkspace(call)
	if err != nil {
		return nil, err
	}
	return &root{dir: ws.path, real: ws.real, fd: int(ws.dir.Fd()), ws: ws}, nil
}

func (r *root) close() { r.ws.close() }

// rel turns a path from a call into a clean path relative to the workspace,
// refusing anything that names a place outside it.
func (r *root) rel(p string) (string, error) {
	if p == "" {
		return "", backend.Errorf(backend.EINVALID, "the path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", backend.Errorf(backend.EINVALID, "the path %q contains a NUL byte", p)
	}
	c := filepath.Clean(p)
	if filepath.IsAbs(c) {
		rel, ok := within(r.dir, c)
		if !ok {
			if rel, ok = within(r.real, c); !ok {
				return "", backend.Errorf(backend.EINVALID, "the path %s is outside the workspace", p)
			}
		}
		c = rel
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", backend.Errorf(backend.EINVALID, "the path %s leads out of the workspace", p)
	}
	return c, nil
}

// within returns abs relative to dir, if abs lies in dir.
func within(dir, abs string) (string, bool) {
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// openat opens rel beneath the workspace, following symlinks only while they
// stay inside it.
func (r *root) openat(rel string, flags int, mode uint32) (int, error) {
	if !forceWalk.Load() {
		how := unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC),
			Mode:    uint64(mode),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		}
		fd, err := r.openat2(rel, &how)
		if err == unix.EXDEV {
			// RESOLVE_BENEATH refuses every absolute symlink, even one that
			// points into the workspace. Resolve such links by hand and let
			// the kernel check the result again.
			abs, werr := r.walk(rel)
			if werr != nil {
				return -1, werr
			}
			if inside, ok := within(r.real, abs); ok && inside != rel {
				fd, err = r.openat2(inside, &how)
			}
		}
		if err != unix.ENOSYS && err != unix.EPERM {
			return fd, r.pathError(rel, err)
		}
		// No openat2 here (EPERM: a seccomp filter refused it).
	}
	abs, err := r.walk(rel)
	if err != nil {
		return -1, err
	}
	fd, err := unix.Open(abs, flags|unix.O_CLOEXEC|unix.O_NOFOLLOW, mode)
	return fd, r.pathError(rel, err)
}

func (r *root) openat2(rel string, how *unix.OpenHow) (int, error) {
	for {
		fd, err := unix.Openat2(r.fd, rel, how)
		if err != unix.EINTR && err != unix.EAGAIN {
			return fd, err
		}
		// EAGAIN: a concurrent rename; the kernel asks to retry.
	}
}

// walk resolves rel beneath the workspace one component at a time, following
// symlinks by hand and refusing any that lead out.
func (r *root) walk(rel string) (string, error) {
	todo := strings.Split(rel, "/")
	done := r.real
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if done == r.real {
				return "", r.pathError(rel, unix.EXDEV)
			}
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, os.ErrNotExist) {
			// The rest does not exist yet; the caller may create it, as
			// long as it names no way back up.
			for _, t := range todo {
				if t == ".." {
					return "", r.pathError(rel, unix.ENOENT)
				}
			}
			return filepath.Join(append([]string{next}, todo...)...), nil
		}
		if err != nil {
			return "", r.pathError(rel, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > 40 {
			return "", r.pathError(rel, unix.ELOOP)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", r.pathError(rel, err)
		}
		if filepath.IsAbs(target) {
			t, ok := within(r.real, filepath.Clean(target))
			if !ok {
				return "", r.pathError(rel, unix.EXDEV)
			}
			done = r.real
			target = t
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return done, nil
}

// resolve returns the workspace-relative path rel really names once
// symlinks inside the workspace are followed. The file must exist.
func (r *root) resolve(rel string) (string, error) {
	if forceWalk.Load() {
		abs, err := r.walk(rel)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(abs); err != nil {
			return "", r.pathError(rel, err)
		}
		out, _ := within(r.real, abs)
		return out, nil
	}
	fd, err := r.openat(rel, unix.O_PATH, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	abs, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return "", backend.Wrap(err, backend.EINTERNAL, "the path %s could not be resolved", rel)
	}
	out, ok := within(r.real, abs)
	if !ok {
		return "", r.pathError(rel, unix.EXDEV)
	}
	return out, nil
}

// mkdirAll makes the folders of rel that do not exist yet.
func (r *root) mkdirAll(rel string) error {
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		fd, err := r.openat(sub, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err == nil {
			unix.Close(fd)
			continue
		}
		if backend.ErrorCode(err) != backend.ENOTFOUND {
			return err
		}
		parent := "."
		if i > 0 {
			parent = strings.Join(parts[:i], "/")
		}
		pfd, err := r.openat(parent, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		err = unix.Mkdirat(pfd, parts[i], 0o755)
		unix.Close(pfd)
		if err != nil && err != unix.EEXIST {
			return r.pathError(sub, err)
		}
	}
	return nil
}

// pathError turns a system error about rel into one a person can act on.
func (r *root) pathError(rel string, err error) error {
	var errno unix.Errno
	if err == nil {
		return nil
	}
	if !errors.As(err, &errno) {
		return backend.Wrap(err, backend.EINTERNAL, "the path %s could not be used", rel)
	}
	switch errno {
	case unix.EXDEV:
		return backend.Wrap(err, backend.EINVALID, "the path %s leads out of the workspace (through a symlink or ..)", rel)
	case unix.ELOOP:
		return backend.Wrap(err, backend.EINVALID, "the path %s has too many symlinks or a symlink where none may be", rel)
	case unix.ENOENT:
		return backend.Wrap(err, backend.ENOTFOUND, "%s does not exist in the workspace", rel)
	case unix.ENOTDIR:
		return backend.Wrap(err, backend.EINVALID, "a part of the path %s is not a folder", rel)
	case unix.EISDIR:
		return backend.Wrap(err, backend.EINVALID, "%s is a folder", rel)
	case unix.EACCES, unix.EPERM:
		return backend.Wrap(err, backend.EINVALID, "%s may not be accessed", rel)
	case unix.EFBIG, unix.ENOSPC, unix.EDQUOT:
		return backend.Wrap(err, backend.ELIMIT, "%s could not be written: %v", rel, errno)
	}
	return backend.Wrap(err, backend.EINTERNAL, "the path %s could not be used", rel)
}
