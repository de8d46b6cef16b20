package tool

import (
	"io/fs"
	"path/filepath"
	"sort"
)

// maxSnapshotFiles bounds how many files a workspace snapshot records, so a
// step that fills its workspace cannot make the comparison slow.
const maxSnapshotFiles = 10000

// fileState is what a snapshot records of a file: enough to tell that it
// changed without reading it.
type fileState struct {
	size  int64
	mtime int64
	mode  fs.FileMode
}

// snapshot is the state of a workspace's files (not folders).
type snapshot struct {
	files     map[string]fileState // by slash-separated relative path
	truncated bool                 // the workspace holds more than maxSnapshotFiles
}

// takeSnapshot records the files under dir. Symlinks are recorded, not
// followed; entries that cannot be read are skipped.
func takeSnapshot(dir string) snapshot {
	s := snapshot{files: map[string]fileState{}}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if len(s.files) >= maxSnapshotFiles {
			s.truncated = true
			return fs.SkipAll
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return nil
		}
		s.files[filepath.ToSlash(rel)] = fileState{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
		return nil
	})
	return s
}

// changedFiles lists, sorted, the files added, removed or modified between
// two snapshots.
func changedFiles(before, after snapshot) []string {
	var out []string
	for p, a := range after.files {
		if b, ok := before.files[p]; !ok || a != b {
			out = append(out, p)
		}
	}
	for p := range before.files {
		if _, ok := after.files[p]; !ok && !after.truncated {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
