package tool

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"ducklm/backend"
)

// IdentifyWorkspace returns the identity of the folder at path, its links
// resolved: what a run records when it is created, so that each of its
// steps can tell the folder from another put under its name later.
func IdentifyWorkspace(path string) (backend.FolderID, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return backend.FolderID{}, backend.Wrap(err, backend.EINVALID, "the workspace %s cannot be used", path)
	}
	f, err := openNoLinks(real)
	if err != nil {
		return backend.FolderID{}, backend.Wrap(err, backend.EINVALID, "the workspace %s cannot be opened", path)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return backend.FolderID{}, backend.Wrap(err, backend.EINVALID, "the workspace %s cannot be read", path)
	}
	return backend.FolderID{Path: real, Dev: st.Dev, Inode: st.Ino}, nil
}

// VerifyWorkspace refuses, as a step would, a workspace that is no longer
// the folder id names (nil: one that is now a link).
func VerifyWorkspace(ws string, id *backend.FolderID) error {
	w, err := openWorkspace(backend.ToolCall{Workspace: ws, WorkspaceID: id})
	if err != nil {
		return err
	}
	w.close()
	return nil
}

// OpenWorkspace opens the workspace ws as a step does: the folder the run
// was given (id; for a run recorded without it, ws if it is no link),
// reached without following a link anywhere on its path. The caller owns
// the descriptor (bwrap.Spec.WorkspaceDir takes it) and closes it.
func OpenWorkspace(ws string, id *backend.FolderID) (*os.File, error) {
	w, err := openWorkspace(backend.ToolCall{Workspace: ws, WorkspaceID: id})
	if err != nil {
		return nil, err
	}
	return w.dir, nil
}

// workspace is a run's folder, opened for one step once it was found to be
// the folder the run was given. Everything the step does goes through dir,
// never through the path again, so a folder swapped for a link after the
// check cannot redirect the step.
type workspace struct {
	path string   // as the call names it
	real string   // the opened folder's path, links resolved
	dir  *os.File // opened without following any link
}

// openWorkspace opens the call's workspace, refusing one that is not the
// folder the run was given (call.WorkspaceID); for a run recorded without
// that identity, it refuses a workspace that is now a link.
func openWorkspace(call backend.ToolCall) (*workspace, error) {
	ws := call.Workspace
	if ws == "" || !filepath.IsAbs(ws) || filepath.Clean(ws) != ws {
		return nil, backend.Errorf(backend.EINVALID, "the workspace %q is not a clean absolute path", ws)
	}
	id := call.WorkspaceID
	real := ""
	if id != nil {
		real = id.Path
	} else {
		if fi, err := os.Lstat(ws); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, backend.Errorf(backend.EINVALID, "the workspace %s is a link, which a step may not follow (it may have been swapped for one while the run waited): nothing ran", ws)
		}
		r, err := filepath.EvalSymlinks(ws)
		if err != nil {
			return nil, backend.Wrap(err, backend.EINVALID, "the workspace %s cannot be used", ws)
		}
		real = r
	}
	f, err := openNoLinks(real)
	if err != nil {
		if id != nil {
			return nil, replaced(ws, id, err)
		}
		return nil, backend.Wrap(err, backend.EINVALID, "the workspace %s cannot be used", ws)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, backend.Wrap(err, backend.EINVALID, "the workspace %s cannot be read", ws)
	}
	if id != nil && (st.Dev != id.Dev || st.Ino != id.Inode) {
		f.Close()
		return nil, replaced(ws, id, nil)
	}
	return &workspace{path: ws, real: real, dir: f}, nil
}

// replaced is the refusal of a workspace that is no longer the run's.
func replaced(ws string, id *backend.FolderID, openErr error) error {
	how := "another folder took its place"
	if fi, err := os.Lstat(id.Path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		how = "it was replaced by a link"
	} else if errors.Is(openErr, unix.ELOOP) || errors.Is(openErr, unix.ENOTDIR) || errors.Is(openErr, unix.EXDEV) {
		how = "a folder on its path was replaced by a link"
	} else if errors.Is(openErr, unix.ENOENT) {
		how = "it was moved or removed"
	} else if openErr != nil {
		how = "it cannot be opened: " + openErr.Error()
	}
	return backend.Errorf(backend.EINVALID, "the workspace %s is no longer the folder this run was given (%s): nothing ran", ws, how)
}

func (w *workspace) close() { w.dir.Close() }

// fdPath names the opened folder through this process's descriptor: a path
// that reaches the folder itself whatever now has its name.
func (w *workspace) fdPath() string {
	return "/proc/self/fd/" + strconv.Itoa(int(w.dir.Fd())) + "/"
}

// openNoLinks opens the folder at the absolute path p without following a
// link anywhere on the path: openat2(RESOLVE_NO_SYMLINKS), or, on kernels
// without it, one component at a time with O_NOFOLLOW.
func openNoLinks(p string) (*os.File, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !forceWalk.Load() {
		how := unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
		for {
			fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
			if err == unix.EINTR || err == unix.EAGAIN {
				continue
			}
			if err == nil {
				return os.NewFile(uintptr(fd), p), nil
			}
			if err != unix.ENOSYS && err != unix.EPERM {
				return nil, err
			}
			break
		}
	}
	fd, err := unix.Open("/", flags, 0)
	if err != nil {
		return nil, err
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(fd)
			return nil, unix.EXDEV
		}
		next, err := unix.Openat(fd, c, flags|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
		fd = next
	}
	return os.NewFile(uintptr(fd), p), nil
}
