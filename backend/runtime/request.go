package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/taskgraph"
	"ducklm/backend/tool"
	"ducklm/backend/webhost"
)

// Caps on what one request may ask for. They are checked before anything is
// written, so a request past them leaves the data directory as it was.
const (
	// MaxTaskBytes is the longest task text a run accepts.
	MaxTaskBytes = 1 << 20
	// MaxStepsCap is the most steps a run may be allowed, unless its plan
	// may hold more (TaskRequest.MaxPlanSteps): then as many as that.
	MaxStepsCap = 1000
	// MaxStepTimeout is the longest a step may be allowed to run.
	MaxStepTimeout = 24 * time.Hour
)

// ErrWorkspaceMissing is the cause of the error Submit returns for a
// workspace folder that does not exist and was not asked to be created; the
// CLI and the window offer to create it.
var ErrWorkspaceMissing = errors.New("the workspace folder does not exist")

// check refuses a request that cannot run, before anything is written: the
// task's size, the limits, and the explicit plan, validated against the
// tool catalog exactly as a planner's plan is and held to the step limit.
// (A task beside an explicit plan is the plan's label, as the window's form
// has it; the CLI, whose positional task reads as an instruction, refuses
// the pair.) It returns the request with the plan in its validated form.
func (c *Controller) check(req TaskRequest) (TaskRequest, error) {
	req.Task = strings.TrimSpace(req.Task)
	if len(req.Task) > MaxTaskBytes {
		return req, backend.Errorf(backend.EINVALID, "the task is %d bytes, more than the %d allowed", len(req.Task), MaxTaskBytes)
	}
	l := req.Limits
	for _, v := range []struct {
		name string
		n    int64
	}{{"the memory limit", l.MemoryBytes}, {"the CPU limit", l.CPUSeconds}, {"the file size limit", l.FileBytes},
		{"the output limit", l.OutputBytes}, {"the process limit", l.Processes},
		{"the step limit", int64(req.MaxSteps)}, {"the plan's step limit", int64(req.MaxPlanSteps)}, {"the replan limit", int64(req.MaxReplans)}, {"the concurrency", int64(req.Concurrency)}} {
		if v.n < 0 {
			return req, backend.Errorf(backend.EINVALID, "%s must be positive, not %d (leave it out for the default)", v.name, v.n)
		}
	}
	if l.Timeout < 0 {
		return req, backend.Errorf(backend.EINVALID, "the step timeout must be positive, not %s (leave it out for the default)", l.Timeout)
	}
	if l.Timeout > MaxStepTimeout {
		return req, backend.Errorf(backend.EINVALID, "the step timeout is %s, longer than the %s allowed", l.Timeout, MaxStepTimeout)
	}
	if capSteps := max(MaxStepsCap, req.MaxPlanSteps); req.MaxSteps > capSteps {
		return req, backend.Errorf(backend.EINVALID, "the step limit is %d, more than the %d allowed", req.MaxSteps, capSteps)
	}
	hosts := make([]string, 0, len(req.AllowedHosts))
	for _, h := range req.AllowedHosts {
		if err := webhost.CheckAllowedHost(h); err != nil {
			return req, err
		}
		if h = webhost.Host(h); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	req.AllowedHosts = hosts
	if len(hosts) == 0 {
		req.AllowedHosts = nil
	}
	if req.Plan != nil {
		g, err := taskgraph.ValidateMax(*req.Plan, c.catalogForValidation(), req.MaxPlanSteps)
		if err != nil {
			return req, backend.Errorf(backend.EINVALID, "the plan is not valid: %s", backend.ErrorMessage(err))
		}
		max := req.MaxSteps
		if max == 0 {
			max = defaultMaxSteps
		}
		if g.Len() > max {
			return req, backend.Errorf(backend.EINVALID, "the plan has %d steps, more than the run's limit of %d; raise it with --max-steps %d (Max steps in the window's New task form, maxSteps in the HTTP API)", g.Len(), max, g.Len())
		}
		tg := g.TaskGraph()
		req.Plan = &tg
	}
	return req, nil
}

// systemDirs are the host's own folders: a workspace is never one of them
// nor inside one (a step may write anywhere in its workspace).
var systemDirs = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
	"/root", "/run", "/sbin", "/snap", "/sys", "/usr", "/var"}

// sharedDirs hold other people's or programs' folders: a folder inside one
// is fine, the folder itself is not.
var sharedDirs = []string{"/", "/home", "/media", "/mnt", "/opt", "/srv", "/tmp", "/var/tmp"}

// checkWorkspace refuses a workspace a step must not be given: a system
// folder or one inside it, a shared folder itself, the home folder itself,
// the data directory, one of its ancestors or a folder inside it. Symbolic
// links are followed, so a link to /etc is /etc. It returns the absolute
// path and whether the folder exists (a path to something that is not a
// folder is refused).
func checkWorkspace(path, dataDir string) (string, bool, error) {
	if strings.ContainsRune(path, 0) {
		return "", false, backend.Errorf(backend.EINVALID, "the workspace %q is not a usable path", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false, backend.Errorf(backend.EINVALID, "the workspace %q is not a usable path", path)
	}
	home, _ := os.UserHomeDir()
	forms := []string{abs}
	if r := resolve(abs); r != abs {
		forms = append(forms, r)
	}
	var data []string
	if dataDir != "" {
		d, err := filepath.Abs(dataDir)
		if err == nil {
			data = append(data, d)
			if r := resolve(d); r != d {
				data = append(data, r)
			}
		}
	}
	for _, p := range forms {
		if reason := refusal(p, home, data); reason != "" {
			return "", false, backend.Errorf(backend.EINVALID, "the workspace cannot be %s: %s; choose a folder of its own, such as one inside your home folder", abs, reason)
		}
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return abs, false, nil
	case err != nil:
		return "", false, backend.Wrap(err, backend.EINVALID, "the workspace %s cannot be read", abs)
	case !info.IsDir():
		return "", false, backend.Errorf(backend.EINVALID, "the workspace %s is not a folder", abs)
	}
	return abs, true, nil
}

// refusal says why p cannot be a workspace, or "" when it can.
func refusal(p, home string, data []string) string {
	if home != "" && p == filepath.Clean(home) {
		return "it is your home folder itself"
	}
	for _, s := range sharedDirs {
		if p == s {
			return "it is a system folder shared by everything on this machine"
		}
	}
	for _, s := range systemDirs {
		if p != s && !within(p, s) {
			continue
		}
		if home != "" && (within(home, s) || home == s) && (p == home || within(p, home)) {
			continue // a user whose home is /root or /var/lib/x may use a folder inside it
		}
		if s == "/var" && within(p, "/var/tmp") {
			continue
		}
		return fmt.Sprintf("it is the system's %s folder or inside it", s)
	}
	for _, d := range data {
		switch {
		case p == d:
			return "it is ducklm's data directory, which holds the signing key and the ledger"
		case within(d, p):
			return "it holds ducklm's data directory (" + d + "), which holds the signing key and the ledger"
		case within(p, d):
			return "it is inside ducklm's data directory (" + d + ")"
		}
	}
	return ""
}

// within reports whether p is strictly inside dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// resolve follows the symbolic links of the longest part of p that exists.
func resolve(p string) string {
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(cur) == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

// makeWorkspace creates the request's workspace when it does not exist
// and records which folder it is, for every step to check.
func (c *Controller) makeWorkspace(req *TaskRequest) error {
	if err := os.MkdirAll(req.Workspace, 0o700); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot create the workspace %s", req.Workspace)
	}
	id, err := tool.IdentifyWorkspace(req.Workspace)
	if err != nil {
		return err
	}
	req.WorkspaceID = &id
	return nil
}

// stepWorkspace is the workspace a step of st is given, with its identity,
// checked again as Submit checked it (after it is found to be the run's
// folder, which gives the plainer reason): a folder that now resolves to the
// data directory (or inside, or around it) is refused, even for a run
// recorded before its folder's identity was kept. The tools then check
// that the folder is the run's and hold it open for the step.
func (c *Controller) stepWorkspace(st *RunState) (string, *backend.FolderID, error) {
	ws := st.Request.Workspace
	if ws == "" {
		ws = filepath.Join(c.d.WorkRoot, st.RunID)
	}
	if err := tool.VerifyWorkspace(ws, st.Request.WorkspaceID); err != nil {
		return ws, nil, err
	}
	if root := c.d.WorkRoot; root != "" && within(filepath.Clean(ws), filepath.Clean(root)) {
		// ducklm's own folder for the run, inside the data directory: it
		// must still lead to a folder in there of its own. When the run
		// recorded this very path, VerifyWorkspace just opened it with no
		// link anywhere on it, so it and its parents (root among them)
		// resolve to themselves and it is inside root: no need to resolve
		// them again (two walks of the path, a step).
		if id := st.Request.WorkspaceID; id != nil && id.Path == ws && filepath.IsAbs(ws) {
			return ws, id, nil
		}
		if r, rr := resolve(ws), resolve(root); !within(r, rr) {
			return ws, nil, backend.Errorf(backend.EINVALID, "the workspace %s now leads out of ducklm's workspaces folder, to %s: nothing ran", ws, r)
		}
	} else if _, _, err := checkWorkspace(ws, c.dataDir()); err != nil {
		return ws, nil, backend.Errorf(backend.EINVALID, "%s: nothing ran", backend.ErrorMessage(err))
	}
	return ws, st.Request.WorkspaceID, nil
}

// defaultMaxSteps is the step limit of a run that sets none.
const defaultMaxSteps = 50

// DefaultMaxReviews is how many times a run that sets no bound reviews its
// results before it ends without an answer.
const DefaultMaxReviews = 4

// DefaultCriticThreshold is the critic score below which a finished step of
// a model's plan counts as failed, for a run that sets none. The heuristic
// critic never scores a step that exited 0 below 0.55.
const DefaultCriticThreshold = 0.5

// dataDir is the folder no workspace may touch.
func (c *Controller) dataDir() string {
	if c.d.DataDir != "" {
		return c.d.DataDir
	}
	if c.d.WorkRoot != "" {
		return filepath.Dir(c.d.WorkRoot)
	}
	return ""
}
