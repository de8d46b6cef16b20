package api

import (
	"context"
	"time"

	"ducklm/backend"
	"ducklm/backend/ollama"
	"ducklm/backend/settings"
)

// SettingsView is the settings screen's data.
type SettingsView struct {
	Settings settings.Settings `json:"settings"`
	DataDir  string            `json:"dataDir"`
	// OllamaHost is the host in use now (the setting applies on restart).
	OllamaHost string `json:"ollamaHost"`
}

// GetSettings returns the stored preferences.
func (a *API) GetSettings() (SettingsView, error) {
	if err := a.ready(); err != nil {
		return SettingsView{}, err
	}
	s, err := settings.Load(a.svc.Dir)
	return SettingsView{Settings: s, DataDir: a.svc.Dir, OllamaHost: a.svc.Ollama.Host()}, a.fail("settings", err)
}

// Saved says what saving settings changed.
type Saved struct {
	// RestartNeeded is set when the Ollama host changed: the running app
	// keeps its connection until ducklm restarts.
	RestartNeeded bool `json:"restartNeeded"`
}

// SaveSettings validates and stores the preferences.
func (a *API) SaveSettings(s settings.Settings) (Saved, error) {
	if err := a.ready(); err != nil {
		return Saved{}, err
	}
	old, _ := settings.Load(a.svc.Dir)
	if err := settings.Save(a.svc.Dir, s); err != nil {
		return Saved{}, a.fail("save settings", err)
	}
	return Saved{RestartNeeded: old.OllamaHost != s.OllamaHost}, nil
}

// TestOllama asks the Ollama at host ("" = the one in use) for its models.
func (a *API) TestOllama(host string) (ModelInfo, error) {
	if err := a.ready(); err != nil {
		return ModelInfo{}, err
	}
	client := a.svc.Ollama
	if host != "" {
		u, err := ollama.ParseHost(host)
		if err != nil {
			return ModelInfo{}, a.fail("test ollama", err)
		}
		client = ollama.New(u, nil)
	}
	ctx, cancel := context.WithTimeout(a.ctx(), 3*time.Second)
	defer cancel()
	return modelInfo(ctx, client, a.svc.Sandboxed), nil
}

func modelInfo(ctx context.Context, c *ollama.Client, sandboxed bool) ModelInfo {
	info := ModelInfo{Host: c.Host(), Models: []string{}, Sandboxed: sandboxed}
	models, err := c.Models(ctx)
	if err != nil {
		info.Error = backend.ErrorMessage(err)
		return info
	}
	info.Reachable = true
	for _, m := range models {
		info.Models = append(info.Models, m.Name)
	}
	return info
}
