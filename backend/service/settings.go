package service

import (
	"context"
	"net/url"

	"github.com/ollama/ollama/envconfig"

	"ducklm/backend/ollama"
	"ducklm/backend/settings"
	"ducklm/backend/starlark"
)

// ollamaHosts returns the host to start with and the one an empty host
// setting means: Options.OllamaHost wins at start (a command-line or test
// choice), then the settings, then OLLAMA_HOST; clearing the setting later
// goes back to Options.OllamaHost, else OLLAMA_HOST.
func ollamaHosts(opts Options, prefs settings.Settings) (start, fallback *url.URL, err error) {
	fallback = envconfig.Host()
	if opts.OllamaHost != "" {
		if fallback, err = ollama.ParseHost(opts.OllamaHost); err != nil {
			return nil, nil, err
		}
		return fallback, fallback, nil
	}
	if prefs.OllamaHost != "" {
		if start, err = ollama.ParseHost(prefs.OllamaHost); err != nil {
			return nil, nil, err
		}
		return start, fallback, nil
	}
	return fallback, fallback, nil
}

// worldLimits are the limits of world programs prefs choose.
func worldLimits(prefs settings.Settings) starlark.Limits {
	l := starlark.DefaultLimits()
	l.MaxMemoryBytes = prefs.WorldMemoryBytes()
	return l
}

// Settings returns the stored preferences.
func (s *Service) Settings() (settings.Settings, error) {
	return settings.Load(s.Dir)
}

// SaveSettings validates and stores the preferences and applies the Ollama
// host at once: the runtime's planner, critic and coder, the model list,
// the memory embedder and the paused-run watcher all share s.Ollama, so the
// next call of each goes to the new host, and runs paused for want of a
// model are offered to it straight away. A new memory limit of world
// programs holds from their next call. It returns the host in use.
func (s *Service) SaveSettings(p settings.Settings) (string, error) {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	if err := settings.Save(s.Dir, p); err != nil {
		return "", err
	}
	host := s.fallbackHost
	if p.OllamaHost != "" {
		// Save accepted it, so it parses.
		u, err := ollama.ParseHost(p.OllamaHost)
		if err != nil {
			return "", err
		}
		host = u
	}
	if l := worldLimits(p); l != s.Worlds.Limits() {
		s.Worlds.SetLimits(l)
	}
	if host.String() != s.Ollama.Host() {
		s.Ollama.SetHost(host)
		s.models.forget()
		s.wakePaused()
	}
	return s.Ollama.Host(), nil
}

// ModelNames lists the models of the Ollama in use (cached for a few
// seconds, and forgotten when the host changes).
func (s *Service) ModelNames(ctx context.Context) ([]string, error) {
	return s.models.ModelNames(ctx)
}

// wakePaused asks the paused-run watcher to offer paused runs to the model
// now rather than at its next poll; a wake already pending is enough.
func (s *Service) wakePaused() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// DefaultOllamaHost is the host an empty host setting means.
func (s *Service) DefaultOllamaHost() string { return s.fallbackHost.String() }
