package tool_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/tool"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Not parallel: modes switches path resolution for the whole package.
func TestFileToolsRefuseEscapes(t *testing.T) {
	modes(t, func(t *testing.T) {
		f := setup(t)
		f.write(t, "a/inside.txt", "in")
		require.NoError(t, os.Symlink("/etc", filepath.Join(f.ws, "e")))
		require.NoError(t, os.Symlink("../sibling", filepath.Join(f.ws, "sib")))
		require.NoError(t, os.Symlink(filepath.Join(f.sibling, "secret"), filepath.Join(f.ws, "abs-secret")))
		require.NoError(t, os.Symlink("a/../../sibling/secret", filepath.Join(f.ws, "rel-secret")))
		require.NoError(t, os.Symlink("../../sibling", filepath.Join(f.ws, "a", "deep")))

		for _, p := range []string{
			"../sibling/secret",
			"a/../../sibling/secret",
			"/etc/passwd",
			filepath.Join(f.sibling, "secret"),
			"e/passwd",
			"sib/secret",
			"abs-secret",
			"rel-secret",
			"a/deep/secret",
			"",
		} {
			_, err := readFile(t, f, map[string]any{"path": p})
			require.Error(t, err, "read %q", p)
			require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "read %q: %v", p, err)

			_, _, err = writeFile(t, f, map[string]any{"path": p, "content": "pwned"})
			require.Error(t, err, "write %q", p)
			require.Contains(t, []string{backend.EINVALID}, backend.ErrorCode(err), "write %q: %v", p, err)
		}
		for _, p := range []string{"e/ducklm-pwned", "sib/new", "a/deep/new"} {
			_, _, err := writeFile(t, f, map[string]any{"path": p, "content": "pwned"})
			require.Error(t, err, "write %q", p)
		}
		got, err := os.ReadFile(filepath.Join(f.sibling, "secret"))
		require.NoError(t, err)
		require.Equal(t, "s3cret", string(got))
		_, err = os.Stat("/etc/ducklm-pwned")
		require.ErrorIs(t, err, os.ErrNotExist)
		entries, err := os.ReadDir(f.sibling)
		require.NoError(t, err)
		require.Len(t, entries, 1)
	})
}

// Not parallel: see TestFileToolsRefuseEscapes.
func TestFileToolsFollowSymlinksInside(t *testing.T) {
	modes(t, func(t *testing.T) {
		f := setup(t)
		f.write(t, "real/data.txt", "hello")
		require.NoError(t, os.Symlink("real", filepath.Join(f.ws, "link")))
		require.NoError(t, os.Symlink(filepath.Join(f.ws, "real", "data.txt"), filepath.Join(f.ws, "abs-link")))
		require.NoError(t, os.Symlink("../real/data.txt", filepath.Join(f.ws, "real", "self")))

		for _, p := range []string{"link/data.txt", "abs-link", "real/self", "./real/../real/data.txt", filepath.Join(f.ws, "real/data.txt")} {
			out, err := readFile(t, f, map[string]any{"path": p})
			require.NoError(t, err, p)
			require.Equal(t, "hello", out.Content, p)
		}

		// A write through a symlink lands in its target, which stays a file
		// the link points to.
		out, res, err := writeFile(t, f, map[string]any{"path": "abs-link", "content": "bye"})
		require.NoError(t, err)
		require.Equal(t, "real/data.txt", out.Path)
		require.Equal(t, []string{"real/data.txt"}, res.FilesChanged)
		require.Equal(t, "bye", f.read(t, "real/data.txt"))
		fi, err := os.Lstat(filepath.Join(f.ws, "abs-link"))
		require.NoError(t, err)
		require.NotZero(t, fi.Mode()&os.ModeSymlink)

		out, _, err = writeFile(t, f, map[string]any{"path": "link/new/deeper.txt", "content": "x"})
		require.NoError(t, err)
		require.Equal(t, "real/new/deeper.txt", out.Path)
		require.Equal(t, "x", f.read(t, "real/new/deeper.txt"))

		// A symlink to nothing is not written through.
		require.NoError(t, os.Symlink("missing", filepath.Join(f.ws, "dangling")))
		_, _, err = writeFile(t, f, map[string]any{"path": "dangling", "content": "x"})
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	})
}

func TestFileWriteCreatesAndReports(t *testing.T) {
	t.Parallel()
	f := setup(t)
	out, res, err := writeFile(t, f, map[string]any{"path": "dir/sub/new.txt", "content": "hello\n"})
	require.NoError(t, err)
	require.Equal(t, writeOutput{Path: "dir/sub/new.txt", Bytes: 6, SHA256: sum("hello\n")}, out)
	require.Equal(t, []string{"dir/sub/new.txt"}, res.FilesChanged)
	require.True(t, res.Sandboxed)
	require.Equal(t, "hello\n", f.read(t, "dir/sub/new.txt"))
	fi, err := os.Stat(filepath.Join(f.ws, "dir/sub/new.txt"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// Append keeps the content and the mode.
	require.NoError(t, os.Chmod(filepath.Join(f.ws, "dir/sub/new.txt"), 0o755))
	out, _, err = writeFile(t, f, map[string]any{"path": "dir/sub/new.txt", "content": "world\n", "append": true})
	require.NoError(t, err)
	require.Equal(t, writeOutput{Path: "dir/sub/new.txt", Bytes: 12, SHA256: sum("hello\nworld\n")}, out)
	require.Equal(t, "hello\nworld\n", f.read(t, "dir/sub/new.txt"))
	fi, err = os.Stat(filepath.Join(f.ws, "dir/sub/new.txt"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())

	// An absolute path inside the workspace is fine.
	_, _, err = writeFile(t, f, map[string]any{"path": filepath.Join(f.ws, "abs.txt"), "content": ""})
	require.NoError(t, err)
	require.Equal(t, "", f.read(t, "abs.txt"))

	for _, bad := range []any{
		map[string]any{"path": "x"},
		map[string]any{"content": "x"},
		map[string]any{"path": "x", "content": "x", "mode": "0777"},
		map[string]any{"path": ".", "content": "x"},
		map[string]any{"path": "dir", "content": "x"},
		map[string]any{"path": "x", "content": 3},
	} {
		_, _, err := writeFile(t, f, bad)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%v: %v", bad, err)
	}
}

func TestFileWriteIsAtomic(t *testing.T) {
	t.Parallel()
	f := setup(t)
	small, big := "small", strings.Repeat("big ", 50000)
	f.write(t, "f", small)
	// A hard link keeps the old inode: a replaced file is a new one.
	require.NoError(t, os.Link(filepath.Join(f.ws, "f"), filepath.Join(f.ws, "old")))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var seen []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, err := os.ReadFile(filepath.Join(f.ws, "f")); err == nil && string(b) != small && string(b) != big {
				seen = append(seen, string(b[:min(len(b), 20)]))
			}
		}
	}()
	for i := range 20 {
		content := small
		if i%2 == 0 {
			content = big
		}
		_, _, err := writeFile(t, f, map[string]any{"path": "f", "content": content})
		require.NoError(t, err)
	}
	close(stop)
	wg.Wait()
	require.Empty(t, seen, "a reader saw a partly written file")
	require.Equal(t, small, f.read(t, "f"))
	require.Equal(t, small, f.read(t, "old"))
	var a, b syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(f.ws, "f"), &a))
	require.NoError(t, syscall.Stat(filepath.Join(f.ws, "old"), &b))
	require.NotEqual(t, a.Ino, b.Ino)
	entries, err := os.ReadDir(f.ws)
	require.NoError(t, err)
	require.Len(t, entries, 2, "temporary files were left behind")
}

func TestFileWriteRespectsTheSizeLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	call := f.call(t, "file_write", map[string]any{"path": "big", "content": strings.Repeat("x", 101)})
	call.Limits.FileBytes = 100
	_, err := (&tool.FileWrite{}).Run(context.Background(), call)
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
	_, err = os.Stat(filepath.Join(f.ws, "big"))
	require.ErrorIs(t, err, os.ErrNotExist)

	f.write(t, "grow", strings.Repeat("x", 60))
	call = f.call(t, "file_write", map[string]any{"path": "grow", "content": strings.Repeat("y", 60), "append": true})
	call.Limits.FileBytes = 100
	_, err = (&tool.FileWrite{}).Run(context.Background(), call)
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
	require.Equal(t, strings.Repeat("x", 60), f.read(t, "grow"))

	call = f.call(t, "file_write", map[string]any{"path": "fits", "content": strings.Repeat("x", 100)})
	call.Limits.FileBytes = 100
	_, err = (&tool.FileWrite{}).Run(context.Background(), call)
	require.NoError(t, err)
}

func TestFileReadCapsContent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.write(t, "text", "héllo wörld")
	out, err := readFile(t, f, map[string]any{"path": "text"})
	require.NoError(t, err)
	require.Equal(t, readOutput{Path: "text", Bytes: 13, SHA256: sum("héllo wörld"), Content: "héllo wörld", Encoding: "utf-8"}, out)

	// A cut inside a multi-byte rune drops the partial rune.
	out, err = readFile(t, f, map[string]any{"path": "text", "max_bytes": 2})
	require.NoError(t, err)
	require.Equal(t, readOutput{Path: "text", Bytes: 13, SHA256: sum("héllo wörld"), Content: "h", Encoding: "utf-8", Truncated: true}, out)

	f.write(t, "bin", "\xff\xfe\x00\x01")
	out, err = readFile(t, f, map[string]any{"path": "bin"})
	require.NoError(t, err)
	require.Equal(t, "base64", out.Encoding)
	require.Equal(t, base64.StdEncoding.EncodeToString([]byte("\xff\xfe\x00\x01")), out.Content)

	// The step's output limit caps max_bytes.
	f.write(t, "long", strings.Repeat("z", 1000))
	call := f.call(t, "file_read", map[string]any{"path": "long", "max_bytes": 5000})
	call.Limits.OutputBytes = 100
	res, err := (&tool.FileRead{}).Run(context.Background(), call)
	require.NoError(t, err)
	require.Contains(t, string(res.Output), `"content":"`+strings.Repeat("z", 100)+`"`)
	require.Contains(t, string(res.Output), `"truncated":true`)
}

func TestFileReadRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	f := setup(t)
	require.NoError(t, os.Mkdir(filepath.Join(f.ws, "dir"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(f.ws, "fifo"), 0o644))
	for p, code := range map[string]string{
		"dir":     backend.EINVALID,
		"fifo":    backend.EINVALID, // and does not hang waiting for a writer
		".":       backend.EINVALID,
		"missing": backend.ENOTFOUND,
	} {
		_, err := readFile(t, f, map[string]any{"path": p})
		require.Equal(t, code, backend.ErrorCode(err), "%s: %v", p, err)
	}
	_, err := readFile(t, f, map[string]any{"path": "x", "max_bytes": -1})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, err = readFile(t, f, map[string]any{"path": "x", "offset": 3})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}
