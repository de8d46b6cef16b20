// Package settings keeps the user's preferences in the data directory
// (settings.json): the Ollama host, default models per role, the default
// approval mode, the theme and the embedding model. It validates what it
// stores and never holds secrets.
package settings

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ducklm/backend"
)

// Settings are the user's preferences. Zero values mean "ducklm's default".
type Settings struct {
	// OllamaHost overrides OLLAMA_HOST when set.
	OllamaHost string `json:"ollamaHost"`
	// Models is the default model per role (planner, coder, critic, embedder).
	Models map[string]string `json:"models"`
	// ApprovalMode is the default for new tasks: ask_every, ask_risky or auto_sandboxed.
	ApprovalMode string `json:"approvalMode"`
	// Theme is light, dark or system.
	Theme string `json:"theme"`
}

const fileName = "settings.json"

var (
	roles  = map[string]bool{"planner": true, "coder": true, "critic": true, "embedder": true}
	modes  = map[string]bool{"": true, "ask_every": true, "ask_risky": true, "auto_sandboxed": true}
	themes = map[string]bool{"": true, "light": true, "dark": true, "system": true}
)

// Validate refuses settings that cannot work, with a sentence.
func (s Settings) Validate() error {
	for role := range s.Models {
		if !roles[role] {
			return backend.Errorf(backend.EINVALID, "%q is not a model role (planner, coder, critic, embedder)", role)
		}
	}
	if !modes[s.ApprovalMode] {
		return backend.Errorf(backend.EINVALID, "approval mode %q is not ask_every, ask_risky or auto_sandboxed", s.ApprovalMode)
	}
	if !themes[s.Theme] {
		return backend.Errorf(backend.EINVALID, "theme %q is not light, dark or system", s.Theme)
	}
	if h := strings.TrimSpace(s.OllamaHost); h != "" && strings.ContainsAny(h, " \t\n") {
		return backend.Errorf(backend.EINVALID, "the Ollama host %q has spaces in it", h)
	}
	return nil
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
func Save(dir string, s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot encode the settings")
	}
	tmp, err := os.CreateTemp(dir, ".settings-*")
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the settings in %s", dir)
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(append(data, '\n')); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, fileName))
	}
	if err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the settings in %s", dir)
	}
	return nil
}
