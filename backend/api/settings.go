package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"ducklm/backend"
	"ducklm/backend/ollama"
	"ducklm/backend/settings"
)

// SettingsView is the settings screen's data.
type SettingsView struct {
	Settings settings.Settings `json:"settings"`
	DataDir  string            `json:"dataDir"`
	// OllamaHost is the host in use now.
	OllamaHost string `json:"ollamaHost"`
	// DefaultHost is the host an empty host setting means (OLLAMA_HOST, or
	// Ollama's default).
	DefaultHost string `json:"defaultHost"`
}

// GetSettings returns the stored preferences.
func (a *API) GetSettings() (SettingsView, error) {
	if err := a.ready(); err != nil {
		return SettingsView{}, err
	}
	s, err := a.svc.Settings()
	return SettingsView{Settings: s, DataDir: a.svc.Dir, OllamaHost: a.svc.Ollama.Host(), DefaultHost: a.svc.DefaultOllamaHost()},
		a.fail("settings", err)
}

// Saved is what saving settings did.
type Saved struct {
	// Settings as stored (spaces trimmed, roles left to the router dropped).
	Settings settings.Settings `json:"settings"`
	// OllamaHost is the host in use from now on: a new host applies at once.
	OllamaHost string `json:"ollamaHost"`
}

// SaveSettings validates and stores the preferences and applies them.
func (a *API) SaveSettings(s settings.Settings) (Saved, error) {
	if err := a.ready(); err != nil {
		return Saved{}, err
	}
	host, err := a.svc.SaveSettings(s)
	if err != nil {
		return Saved{}, a.fail("save settings", err)
	}
	stored, err := a.svc.Settings()
	return Saved{Settings: stored, OllamaHost: host}, a.fail("settings", err)
}

// SettingsCheck is the result of checking settings as they are typed.
type SettingsCheck struct {
	Valid    bool               `json:"valid"`
	Problems []settings.Problem `json:"problems"`
}

// CheckSettings says what SaveSettings would refuse, field by field, without
// storing anything.
func (a *API) CheckSettings(s settings.Settings) (SettingsCheck, error) {
	if err := a.ready(); err != nil {
		return SettingsCheck{}, err
	}
	p := s.Check()
	if p == nil {
		p = []settings.Problem{}
	}
	return SettingsCheck{Valid: len(p) == 0, Problems: p}, nil
}

// TestOllama asks the Ollama at host ("" = the one in use) for its models.
// A host that cannot be an Ollama host is refused with the reason.
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
		defer client.CloseIdle()
	}
	ctx, cancel := context.WithTimeout(a.ctx(), ollamaCheckTime)
	defer cancel()
	return modelInfo(ctx, client, a.svc.Sandboxed()), nil
}

// ollamaCheckTime bounds a check of Ollama from the UI.
const ollamaCheckTime = 3 * time.Second

func modelInfo(ctx context.Context, c *ollama.Client, sandboxed bool) ModelInfo {
	info := ModelInfo{Host: c.Host(), Models: []string{}, Sandboxed: sandboxed}
	models, err := c.Models(ctx)
	if err != nil {
		info.Error = backend.ErrorMessage(err)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Nothing refused the connection and nothing answered: a wrong
			// address or a firewall, more often than a slow Ollama.
			info.Error = fmt.Sprintf("Ollama at %s did not answer within %s; check the host, and that Ollama runs there (ollama serve)",
				info.Host, ollamaCheckTime)
		}
		return info
	}
	info.Reachable = true
	for _, m := range models {
		info.Models = append(info.Models, m.Name)
	}
	return info
}
