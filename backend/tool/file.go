package tool

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"ducklm/backend"
)

var (
	_ backend.Tool = (*FileRead)(nil)
	_ backend.Tool = (*FileWrite)(nil)
)

// FileRead reads a file inside the call's workspace.
type FileRead struct{}

const fileReadSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "file_read arguments",
  "type": "object",
  "additionalProperties": false,
  "required": ["path"],
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File to read, relative to the workspace (an absolute path must lie inside it)."},
    "max_bytes": {"type": "integer", "minimum": 0, "description": "Return at most this many bytes of content; the step's output limit caps it."}
  }
}`

// Name implements backend.Tool.
func (*FileRead) Name() string { return "file_read" }

// Confinement: ducklm reads the file itself, inside the workspace only.
func (*FileRead) Confinement() backend.Confinement { return backend.ConfinedWorkspace }

// Repeatable: a read changes nothing, so a read cut short by a crash runs
// again (backend.Repeatable).
func (*FileRead) Repeatable(json.RawMessage) bool { return true }

// Description implements backend.Tool.
func (*FileRead) Description() string {
	return "Reads one regular file from the run's workspace and returns its size, its SHA-256 and " +
		"its content (UTF-8 text as is, anything else base64-encoded), cut at max_bytes or the " +
		"step's output limit, with truncated set when cut. Paths are relative to the workspace; " +
		"paths that lead outside it, through .. or a symlink, are refused. Use it to inspect " +
		"files a previous step wrote, instead of running cat through shell_exec."
}

// ArgsSchema implements backend.Tool.
func (*FileRead) ArgsSchema() json.RawMessage { return json.RawMessage(fileReadSchema) }

// fileReadOutput is FileRead's ToolResult.Output.
type fileReadOutput struct {
	Path      string `json:"path"`
	Bytes     int64  `json:"bytes"` // the whole file's size
	SHA256    string `json:"sha256"`
	Content   string `json:"content"`
	Encoding  string `json:"encoding"` // "utf-8" or "base64"
	Truncated bool   `json:"truncated"`
}

// Run implements backend.Tool.
func (t *FileRead) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	start := time.Now()
	var args struct {
		Path     *string `json:"path"`
		MaxBytes *int64  `json:"max_bytes"`
	}
	if err := decodeArgs(t.Name(), call.Args, &args); err != nil {
		return backend.ToolResult{}, err
	}
	if args.Path == nil {
		return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "file_read needs a path")
	}
	lim := limits(call)
	keep := lim.OutputBytes
	if args.MaxBytes != nil {
		if *args.MaxBytes < 0 {
			return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "max_bytes cannot be negative")
		}
		keep = min(keep, *args.MaxBytes)
	}
	r, err := openRoot(call)
	if err != nil {
		return backend.ToolResult{}, err
	}
	defer r.close()
	rel, err := r.rel(*args.Path)
	if err != nil {
		return backend.ToolResult{}, err
	}
	// O_NONBLOCK: opening a FIFO must not hang the step.
	fd, err := r.openat(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return backend.ToolResult{}, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "%s is not a regular file", rel)
	}

	h := sha256.New()
	var content []byte
	var total int64
	chunk := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return backend.ToolResult{}, backend.Wrap(err, backend.ELIMIT, "reading %s was stopped", rel)
		}
		n, err := f.Read(chunk)
		h.Write(chunk[:n])
		if room := keep - int64(len(content)); room > 0 {
			content = append(content, chunk[:min(int64(n), room)]...)
		}
		total += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return backend.ToolResult{}, r.pathError(rel, err)
		}
	}
	out := fileReadOutput{
		Path:      rel,
		Bytes:     total,
		SHA256:    hex.EncodeToString(h.Sum(nil)),
		Encoding:  "utf-8",
		Truncated: int64(len(content)) < total,
	}
	text := content
	if out.Truncated {
		text = trimPartialRune(content)
	}
	if utf8.Valid(text) {
		out.Content = string(text)
	} else {
		out.Content, out.Encoding = base64.StdEncoding.EncodeToString(content), "base64"
	}
	return backend.ToolResult{Duration: time.Since(start), Output: mustJSON(out), Sandboxed: true}, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence that a cut left at the
// end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// FileWrite writes a file inside the call's workspace, atomically.
type FileWrite struct{}

const fileWriteSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "file_write arguments",
  "type": "object",
  "additionalProperties": false,
  "required": ["path", "content"],
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File to write, relative to the workspace (an absolute path must lie inside it). Missing folders are created."},
    "content": {"type": "string", "description": "The text to write."},
    "append": {"type": "boolean", "default": false, "description": "Add content to the end of the file instead of replacing it."}
  }
}`

// Name implements backend.Tool.
func (*FileWrite) Name() string { return "file_write" }

// Confinement: ducklm writes the file itself, inside the workspace only.
func (*FileWrite) Confinement() backend.Confinement { return backend.ConfinedWorkspace }

// Description implements backend.Tool.
func (*FileWrite) Description() string {
	return "Writes text to one file in the run's workspace, replacing it or, with append, adding " +
		"to its end; missing folders are created. The write is atomic: readers see the old file " +
		"or the new one, never a half-written one. Paths are relative to the workspace; paths " +
		"that lead outside it, through .. or a symlink, are refused, and a file may not grow " +
		"past the step's file size limit. Returns the path written, its size and its SHA-256."
}

// ArgsSchema implements backend.Tool.
func (*FileWrite) ArgsSchema() json.RawMessage { return json.RawMessage(fileWriteSchema) }

// fileWriteOutput is FileWrite's ToolResult.Output.
type fileWriteOutput struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Run implements backend.Tool.
func (t *FileWrite) Run(ctx context.Context, call backend.ToolCall) (backend.ToolResult, error) {
	start := time.Now()
	var args struct {
		Path    *string `json:"path"`
		Content *string `json:"content"`
		Append  bool    `json:"append"`
	}
	if err := decodeArgs(t.Name(), call.Args, &args); err != nil {
		return backend.ToolResult{}, err
	}
	if args.Path == nil || args.Content == nil {
		return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "file_write needs a path and content")
	}
	if err := ctx.Err(); err != nil {
		return backend.ToolResult{}, backend.Wrap(err, backend.ELIMIT, "the write was stopped")
	}
	lim := limits(call)
	if int64(len(*args.Content)) > lim.FileBytes {
		return backend.ToolResult{}, backend.Errorf(backend.ELIMIT,
			"the content is %d bytes, more than the step's file size limit of %d", len(*args.Content), lim.FileBytes)
	}
	r, err := openRoot(call)
	if err != nil {
		return backend.ToolResult{}, err
	}
	defer r.close()
	rel, err := r.rel(*args.Path)
	if err != nil {
		return backend.ToolResult{}, err
	}
	if rel == "." {
		return backend.ToolResult{}, backend.Errorf(backend.EINVALID, "the path names the workspace itself, not a file")
	}
	target, err := r.writeTarget(rel)
	if err != nil {
		return backend.ToolResult{}, err
	}
	sum, size, err := r.replace(target, []byte(*args.Content), args.Append, lim.FileBytes)
	if err != nil {
		return backend.ToolResult{}, err
	}
	out := fileWriteOutput{Path: target, Bytes: size, SHA256: sum}
	return backend.ToolResult{
		Duration:     time.Since(start),
		FilesChanged: []string{target},
		Output:       mustJSON(out),
		Sandboxed:    true,
	}, nil
}

// writeTarget makes rel's folders and returns, relative to the workspace and
// with symlinks inside it followed, the file a write to rel lands in.
func (r *root) writeTarget(rel string) (string, error) {
	if err := r.mkdirAll(filepath.Dir(rel)); err != nil {
		return "", err
	}
	dir, err := r.resolve(filepath.Dir(rel))
	if err != nil {
		return "", err
	}
	rel = filepath.Join(dir, filepath.Base(rel))
	target, err := r.resolve(rel)
	if err == nil {
		return target, nil
	}
	if backend.ErrorCode(err) != backend.ENOTFOUND {
		return "", err
	}
	// Missing: a new file, unless rel is a symlink to nothing.
	dfd, err := r.openat(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if unix.Fstatat(dfd, filepath.Base(rel), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return "", backend.Errorf(backend.EINVALID, "%s is a symlink to a file that does not exist", rel)
	}
	return rel, nil
}

// replace writes content (after the file's current content when appending)
// to a temporary file next to rel and renames it over rel. It returns the
// new file's SHA-256 and size.
func (r *root) replace(rel string, content []byte, appending bool, maxBytes int64) (string, int64, error) {
	dfd, err := r.openat(filepath.Dir(rel), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", 0, err
	}
	defer unix.Close(dfd)
	base := filepath.Base(rel)

	var prefix []byte
	perm := uint32(0o644)
	ofd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		old := os.NewFile(uintptr(ofd), rel)
		fi, serr := old.Stat()
		if serr != nil || !fi.Mode().IsRegular() {
			old.Close()
			return "", 0, backend.Errorf(backend.EINVALID, "%s is not a regular file", rel)
		}
		perm = uint32(fi.Mode().Perm())
		if appending {
			if fi.Size()+int64(len(content)) > maxBytes {
				old.Close()
				return "", 0, backend.Errorf(backend.ELIMIT,
					"appending would make %s %d bytes, more than the step's file size limit of %d", rel, fi.Size()+int64(len(content)), maxBytes)
			}
			prefix, err = io.ReadAll(io.LimitReader(old, maxBytes+1))
			if err != nil {
				old.Close()
				return "", 0, r.pathError(rel, err)
			}
		}
		old.Close()
	case err != unix.ENOENT:
		return "", 0, r.pathError(rel, err)
	}
	size := int64(len(prefix)) + int64(len(content))
	if size > maxBytes {
		return "", 0, backend.Errorf(backend.ELIMIT, "%s would be %d bytes, more than the step's file size limit of %d", rel, size, maxBytes)
	}

	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	tmp := "." + base + ".ducklm-" + hex.EncodeToString(nonce[:]) + ".tmp"
	tfd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", 0, r.pathError(rel, err)
	}
	f := os.NewFile(uintptr(tfd), tmp)
	h := sha256.New()
	w := io.MultiWriter(f, h)
	_, err = w.Write(prefix)
	if err == nil {
		_, err = w.Write(content)
	}
	if err == nil {
		err = f.Chmod(os.FileMode(perm))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, base)
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return "", 0, r.pathError(rel, err)
	}
	// The rename is durable once the folder is.
	_ = unix.Fsync(dfd)
	return hex.EncodeToString(h.Sum(nil)), size, nil
}
