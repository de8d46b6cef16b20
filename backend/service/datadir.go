package service

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"ducklm/backend"
)

// DataDir returns the data directory: $DUCKLM_HOME, else
// $XDG_DATA_HOME/ducklm, else ~/.local/share/ducklm.
func DataDir() (string, error) {
	if d := os.Getenv("DUCKLM_HOME"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "ducklm"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", backend.Wrap(err, backend.EUNAVAILABLE, "cannot find the home folder; set DUCKLM_HOME to choose a data directory")
	}
	return filepath.Join(home, ".local", "share", "ducklm"), nil
}

// Paths inside a data directory.
func dbPath(dir string) string     { return filepath.Join(dir, "ducklm.db") }
func blobDir(dir string) string    { return filepath.Join(dir, "blobs") }
func lockPath(dir string) string   { return filepath.Join(dir, "ducklm.lock") }
func socketPath(dir string) string { return filepath.Join(dir, "ducklm.sock") }

// Lock is an exclusive hold on a data directory: one ducklm process writes
// to it at a time. It is an flock, so the kernel releases it when the
// process dies, however it dies.
type Lock struct {
	f *os.File
}

// ErrLocked is the code-free sentinel wrapped by the error AcquireLock
// returns when another process holds the directory.
var ErrLocked = errors.New("data directory in use")

// AcquireLock takes the data directory's lock or says who holds it.
func AcquireLock(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot create the data directory %s", dir)
	}
	f, err := os.OpenFile(lockPath(dir), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot open %s", lockPath(dir))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		data, _ := os.ReadFile(lockPath(dir))
		f.Close()
		holder := strings.TrimSpace(string(data))
		if holder == "" {
			holder = "another process"
		} else {
			holder = "process " + holder
		}
		return nil, &backend.Error{Code: backend.ECONFLICT, Err: ErrLocked,
			Message: fmt.Sprintf("ducklm is already running on %s (%s); close it first, or set DUCKLM_HOME to use another data directory", dir, holder)}
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Truncate(0)
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
	}
}

// RaiseRunning asks the ducklm window that holds dir to come forward and,
// when open is not empty, to show it (a JSON open request, see
// api.OpenRequest). It reports whether a window answered.
func RaiseRunning(dir, open string) bool {
	conn, err := net.Dial("unix", socketPath(dir))
	if err != nil {
		return false
	}
	defer conn.Close()
	msg := "raise\n"
	if open != "" {
		msg = "open " + open + "\n"
	}
	_, err = conn.Write([]byte(msg))
	return err == nil
}

// maxRaiseMessage bounds what a later instance may send.
const maxRaiseMessage = 4096

// ListenRaise serves requests from later instances on dir's socket until
// the returned stop is called: raise(open) is called for each, with open
// the JSON open request sent, or "" for a plain raise.
func ListenRaise(dir string, raise func(open string)) (stop func(), err error) {
	path := socketPath(dir)
	os.Remove(path) // stale after a crash; we hold the lock, so nobody else serves it
	ln, err := net.Listen("unix", path)
	if err != nil {
		return func() {}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot listen on %s", path)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(io.LimitReader(conn, maxRaiseMessage)).ReadString('\n')
			conn.Close()
			switch line = strings.TrimSpace(line); {
			case line == "raise":
				raise("")
			case strings.HasPrefix(line, "open "):
				raise(strings.TrimPrefix(line, "open "))
			}
		}
	}()
	return func() { ln.Close(); os.Remove(path) }, nil
}

// DatabasePath returns the database file of data directory dir.
func DatabasePath(dir string) string { return dbPath(dir) }
