// Package settings keeps the user's preferences in the data directory
// (settings.json): the Ollama host, default models per role, the default
// approval mode, the theme, the embedding model and the memory limit of world
// programs — and the database address the window chose (database-url). It
// validates what it stores. settings.json holds no secrets: the database
// address, which may carry a password, has a file of its own that only the
// user can read, and its password is never sent back to a screen.
package settings

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"ducklm/backend"
	"ducklm/backend/ollama"
	"ducklm/backend/webhost"
)

// Settings are the user's preferences. Zero values mean "ducklm's default".
type Settings struct {
	// OllamaHost overrides OLLAMA_HOST when set (host, host:port or a URL).
	OllamaHost string `json:"ollamaHost"`
	// Models is the default model per role (planner, coder, critic, embedder).
	Models map[string]string `json:"models"`
	// ApprovalMode is the default for new tasks: ask_every, ask_risky or auto_sandboxed.
	ApprovalMode string `json:"approvalMode"`
	// Theme is light, dark or system.
	Theme string `json:"theme"`
	// WorldMemoryMiB is the memory limit of a world program's process, in
	// MiB: from MinWorldMemoryMiB to MaxWorldMemoryMiB, 0 for the default
	// (DefaultWorldMemoryMiB).
	WorldMemoryMiB int64 `json:"worldMemoryMiB,omitempty"`
	// AllowedHosts are hosts web steps of new tasks reach without asking:
	// example.com, *.example.com (its subdomains) or an address.
	AllowedHosts []string `json:"allowedHosts,omitempty"`
	// TaskSteps says where the portable steps of this installation's task
	// runs (world_search) do their work on a team's database: "" or
	// TaskStepsOnWorkers (the default) on the team's workers when one is
	// alive, here otherwise; TaskStepsHere always in this process.
	TaskSteps string `json:"taskSteps,omitempty"`
	// MaxReviews bounds how many times a new task's run reviews its
	// results before it ends without an answer: 1 to MaxReviewRounds, 0
	// for ducklm's default (4).
	MaxReviews int `json:"maxReviews,omitempty"`
	// CriticThreshold is the critic score below which a finished step of a
	// model's plan counts as failed and is revised: above 0 and at most 1,
	// 0 for ducklm's default (0.5).
	CriticThreshold float64 `json:"criticThreshold,omitempty"`
}

// MaxReviewRounds is the most review rounds a setting may allow.
const MaxReviewRounds = 20

// Where portable task steps run (Settings.TaskSteps).
const (
	TaskStepsOnWorkers = "workers"
	TaskStepsHere      = "here"
)

// The memory limit of world programs, in MiB: the default, and the range a
// setting may choose from (below the minimum a worker process cannot start).
const (
	DefaultWorldMemoryMiB = 512
	MinWorldMemoryMiB     = 64
	MaxWorldMemoryMiB     = 65536
)

// WorldMemoryBytes is the memory limit of world programs these settings
// choose, in bytes.
func (s Settings) WorldMemoryBytes() int64 {
	if s.WorldMemoryMiB == 0 {
		return DefaultWorldMemoryMiB << 20
	}
	return s.WorldMemoryMiB << 20
}

const fileName = "settings.json"

var (
	roles  = map[string]bool{"planner": true, "coder": true, "critic": true, "embedder": true}
	modes  = map[string]bool{"": true, "ask_every": true, "ask_risky": true, "auto_sandboxed": true}
	themes = map[string]bool{"": true, "light": true, "dark": true, "system": true}
	places = map[string]bool{"": true, TaskStepsOnWorkers: true, TaskStepsHere: true}
)

// Problem is one thing wrong with settings: the field it belongs to (as the
// JSON names it: "ollamaHost", "models.planner", "approvalMode", "theme") and
// a sentence that says what to do.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Check lists every problem of s, in the order the settings screen shows its
// fields; none means s can be saved.
func (s Settings) Check() []Problem {
	var out []Problem
	add := func(field string, err error) {
		out = append(out, Problem{Field: field, Message: backend.ErrorMessage(err)})
	}
	if h := strings.TrimSpace(s.OllamaHost); h != "" {
		if _, err := ollama.ParseHost(h); err != nil {
			add("ollamaHost", err)
		}
	}
	for _, role := range slices.Sorted(maps.Keys(s.Models)) {
		name := strings.TrimSpace(s.Models[role])
		switch {
		case !roles[role]:
			add("models."+role, backend.Errorf(backend.EINVALID, "%q is not a model role (planner, coder, critic, embedder)", role))
		case strings.ContainsAny(name, " \t\r\n"):
			add("models."+role, backend.Errorf(backend.EINVALID, "the %s model %q has a space in it; model names look like qwen2.5:7b", role, name))
		}
	}
	if !modes[s.ApprovalMode] {
		add("approvalMode", backend.Errorf(backend.EINVALID, "approval mode %q is not ask_every, ask_risky or auto_sandboxed", s.ApprovalMode))
	}
	for _, h := range s.AllowedHosts {
		if err := webhost.CheckAllowedHost(h); err != nil {
			add("allowedHosts", err)
			break
		}
	}
	if !themes[s.Theme] {
		add("theme", backend.Errorf(backend.EINVALID, "theme %q is not light, dark or system", s.Theme))
	}
	if !places[s.TaskSteps] {
		add("taskSteps", backend.Errorf(backend.EINVALID, "task steps run %q: choose workers (the team's, when one is alive) or here", s.TaskSteps))
	}
	if r := s.MaxReviews; r < 0 || r > MaxReviewRounds {
		add("maxReviews", backend.Errorf(backend.EINVALID, "review rounds are from 1 to %d, not %d (leave it empty for 4)", MaxReviewRounds, r))
	}
	if c := s.CriticThreshold; c < 0 || c > 1 || c != c {
		add("criticThreshold", backend.Errorf(backend.EINVALID, "the critic threshold is a score above 0 and at most 1, not %v (leave it empty for 0.5)", c))
	}
	if m := s.WorldMemoryMiB; m != 0 && (m < MinWorldMemoryMiB || m > MaxWorldMemoryMiB) {
		add("worldMemoryMiB", backend.Errorf(backend.EINVALID,
			"the memory limit of world programs is %d MiB; choose from %d to %d MiB (or leave it empty for %d)",
			m, MinWorldMemoryMiB, MaxWorldMemoryMiB, DefaultWorldMemoryMiB))
	}
	return out
}

// Validate refuses settings that cannot work, with the sentence of their
// first problem.
func (s Settings) Validate() error {
	if p := s.Check(); len(p) > 0 {
		return backend.Errorf(backend.EINVALID, "%s", p[0].Message)
	}
	return nil
}

// normal is s as stored: no spaces around the host or model names, and no
// role whose model is left to the router.
func (s Settings) normal() Settings {
	n := s
	n.OllamaHost = strings.TrimSpace(s.OllamaHost)
	n.Models = map[string]string{}
	for role, m := range s.Models {
		if m = strings.TrimSpace(m); m != "" {
			n.Models[role] = m
		}
	}
	n.AllowedHosts = nil
	for _, h := range s.AllowedHosts {
		if h = webhost.Host(h); h != "" && !slices.Contains(n.AllowedHosts, h) {
			n.AllowedHosts = append(n.AllowedHosts, h)
		}
	}
	return n
}

// Load reads the settings of data directory dir; a missing file is the defaults.
func Load(dir string) (Settings, error) {
	data, err := os.ReadFile(filepath.Join(dir, fileName))
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{Models: map[string]string{}}, nil
	}
	if err != nil {
		return Settings{}, backend.Wrap(err, backend.EUNAVAILABLE, "cannot read the settings in %s", dir)
	}
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return Settings{}, backend.Errorf(backend.ECORRUPT, "%s is not valid settings JSON; fix or delete it", filepath.Join(dir, fileName))
	}
	if s.Models == nil {
		s.Models = map[string]string{}
	}
	return s, s.Validate()
}

// Save writes the settings atomically (temp file, fsync, rename).
// Surrounding spaces are trimmed and roles left empty are dropped.
func Save(dir string, s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	s = s.normal()
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot encode the settings")
	}
	if err := replaceFile(dir, fileName, append(data, '\n')); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the settings in %s", dir)
	}
	return nil
}

// replaceFile writes data to the file name in dir atomically and durably:
// a temporary file beside it (created owner-only), fsynced, then renamed
// over it.
func replaceFile(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	return err
}
