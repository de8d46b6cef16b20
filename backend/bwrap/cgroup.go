package bwrap

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"ducklm/backend"
)

// A step's own cgroup gives the two limits rlimits cannot: a process count
// that holds for root, and a memory limit over all of the step's processes.
// ducklm creates one child cgroup per step under its own cgroup, where the
// machine lets it: in a cgroup v2 subtree that has the pids and memory
// controllers delegated, or in writable v1 pids and memory hierarchies.
// Where it cannot, the step runs without one and Result.Enforced says so.

// cgroupPlan says under which directories a step's cgroups are made.
type cgroupPlan struct {
	v2       string // parent directory in the unified hierarchy
	v2Pids   bool
	v2Memory bool
	v1Pids   string // parent directory in the v1 pids hierarchy
	v1Memory string // parent directory in the v1 memory hierarchy
}

var (
	planOnce sync.Once
	plan     cgroupPlan
	stepSeq  atomic.Int64
)

// pidsOverhead is the processes bubblewrap itself needs (its outer process
// and the sandbox's init), so that they do not eat the step's allowance.
const pidsOverhead = 2

func cgroups() cgroupPlan {
	planOnce.Do(func() { plan = planCgroups() })
	return plan
}

func planCgroups() cgroupPlan {
	var p cgroupPlan
	mounts, err := cgroupMounts()
	if err != nil {
		return p
	}
	own, err := ownCgroups()
	if err != nil {
		return p
	}
	for _, m := range mounts {
		switch {
		case m.fstype == "cgroup2" && p.v2 == "":
			path, ok := own[""]
			if !ok {
				continue
			}
			dir := m.dir(path)
			if have := probeChild(dir, "pids.max", "memory.max"); have != nil {
				p.v2, p.v2Pids, p.v2Memory = dir, have["pids.max"], have["memory.max"]
				if !p.v2Pids && !p.v2Memory {
					p.v2 = ""
				}
			}
		case m.fstype == "cgroup" && m.has("pids") && p.v1Pids == "":
			if path, ok := own["pids"]; ok {
				if dir := m.dir(path); probeChild(dir, "pids.max")["pids.max"] {
					p.v1Pids = dir
				}
			}
		case m.fstype == "cgroup" && m.has("memory") && p.v1Memory == "":
			if path, ok := own["memory"]; ok {
				if dir := m.dir(path); probeChild(dir, "memory.limit_in_bytes")["memory.limit_in_bytes"] {
					p.v1Memory = dir
				}
			}
		}
	}
	return p
}

// probeChild makes and removes a child of dir and reports which of files the
// child had; nil means no child could be made.
func probeChild(dir string, files ...string) map[string]bool {
	child := filepath.Join(dir, fmt.Sprintf("ducklm-probe-%d", os.Getpid()))
	if err := os.Mkdir(child, 0o755); err != nil {
		return nil
	}
	defer os.Remove(child)
	have := map[string]bool{}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(child, f))
		have[f] = err == nil
	}
	return have
}

type cgroupMount struct {
	root, point, fstype string
	options             []string
}

func (m cgroupMount) has(controller string) bool {
	for _, o := range m.options {
		if o == controller {
			return true
		}
	}
	return false
}

// dir maps a cgroup path from /proc/self/cgroup to a directory in the mount.
func (m cgroupMount) dir(path string) string {
	if m.root != "/" && (path == m.root || strings.HasPrefix(path, m.root+"/")) {
		path = strings.TrimPrefix(path, m.root)
	}
	return filepath.Join(m.point, path)
}

func cgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []cgroupMount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 || (b[0] != "cgroup" && b[0] != "cgroup2") {
			continue
		}
		out = append(out, cgroupMount{root: a[3], point: a[4], fstype: b[0], options: strings.Split(b[2], ",")})
	}
	return out, sc.Err()
}

// ownCgroups maps each v1 controller, and "" for v2, to this process's
// cgroup path.
func ownCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	own := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own, nil
}

// cgroup is one step's set of cgroup directories; the zero value (no
// cgroup) is usable and does nothing.
type cgroup struct {
	dirs   []string
	v2     bool
	memory bool
}

// newCgroup makes the step's cgroups and sets their limits. A hierarchy that
// fails here is skipped: the step runs with what could be enforced.
func newCgroup(lim backend.Limits) (*cgroup, []string) {
	p := cgroups()
	cg := &cgroup{}
	var enforced []string
	name := fmt.Sprintf("ducklm-%d-%d", os.Getpid(), stepSeq.Add(1))
	pids := strconv.FormatInt(lim.Processes+pidsOverhead, 10)
	mem := strconv.FormatInt(lim.MemoryBytes, 10)
	mk := func(parent string, settings [][2]string) bool {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return false
		}
		for _, s := range settings {
			if err := writeControl(filepath.Join(dir, s[0]), s[1]); err != nil {
				os.Remove(dir)
				return false
			}
		}
		cg.dirs = append(cg.dirs, dir)
		return true
	}
	if p.v2 != "" {
		var set [][2]string
		if p.v2Pids {
			set = append(set, [2]string{"pids.max", pids})
		}
		if p.v2Memory {
			set = append(set, [2]string{"memory.max", mem}, [2]string{"memory.swap.max", "0"}, [2]string{"memory.oom.group", "1"})
		}
		if mk(p.v2, set) {
			cg.v2 = true
			if p.v2Pids {
				enforced = append(enforced, "cgroup pids")
			}
			if p.v2Memory {
				cg.memory = true
				enforced = append(enforced, "cgroup memory")
			}
		}
	}
	if p.v1Pids != "" && !(cg.v2 && p.v2Pids) {
		if mk(p.v1Pids, [][2]string{{"pids.max", pids}}) {
			enforced = append(enforced, "cgroup pids")
		}
	}
	if p.v1Memory != "" && !cg.memory {
		// memsw (memory plus swap) exists only with swap accounting, and
		// must be set after the plain limit.
		if mk(p.v1Memory, [][2]string{{"memory.limit_in_bytes", mem}, {"memory.memsw.limit_in_bytes", mem}}) {
			cg.memory = true
			enforced = append(enforced, "cgroup memory")
		}
	}
	return cg, enforced
}

func (c *cgroup) hasMemory() bool { return c.memory }

// writeControl writes one control file; a file this kernel does not have
// (swap accounting off, an older kernel) is skipped.
func writeControl(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// add moves pid into every one of the step's cgroups.
func (c *cgroup) add(pid int) error {
	for _, d := range c.dirs {
		if err := writeControl(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return backend.Wrap(err, backend.EINTERNAL, "the step could not be placed in its cgroup")
		}
	}
	return nil
}

// kill kills every process in the step's cgroups, including any that left
// the process group or the sandbox's session.
func (c *cgroup) kill() {
	for _, d := range c.dirs {
		if kf := filepath.Join(d, "cgroup.kill"); c.v2 && fileExists(kf) && writeControl(kf, "1") == nil {
			continue
		}
		// No cgroup.kill: kill what is listed until nothing is left. The
		// pids limit bounds how many a fork bomb can add between passes.
		for range 100 {
			pids := procs(d)
			if len(pids) == 0 {
				break
			}
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func procs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// remove kills what is left and removes the cgroups. Killed processes take a
// moment to be reaped, so removal is retried for a short while; a cgroup that
// cannot be removed by then is left, empty of live processes.
func (c *cgroup) remove() {
	if len(c.dirs) == 0 {
		return
	}
	c.kill()
	deadline := time.Now().Add(2 * time.Second)
	for _, d := range c.dirs {
		for {
			err := os.Remove(d)
			if err == nil || errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
