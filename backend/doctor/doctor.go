// Package doctor checks what ducklm needs from the machine (its data
// directory, the database schema, WebKitGTK, bubblewrap, Ollama) and says how
// to fix each problem. It only looks; it changes nothing.
package doctor

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	ollamaclient "ducklm/backend/ollama"
	"ducklm/backend/settings"
)

// Status of one check.
const (
	OK   = "ok"
	Warn = "warn" // ducklm works, with less
	Fail = "fail" // ducklm cannot work until it is fixed
)

// Check is one finding.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Env is what the checks look at; tests substitute parts of it.
type Env struct {
	DataDir       string
	SchemaVersion func(ctx context.Context) (have, latest int64, err error)
	LookPath      func(string) (string, error)
	OllamaHost    *url.URL
	HTTPClient    *http.Client
}

// DefaultEnv returns the environment of this process. The Ollama host is
// the one in the data directory's settings, else OLLAMA_HOST's.
func DefaultEnv(dataDir string, schema func(ctx context.Context) (int64, int64, error)) Env {
	host := envconfig.Host()
	if prefs, err := settings.Load(dataDir); err == nil && prefs.OllamaHost != "" {
		if u, err := ollamaclient.ParseHost(prefs.OllamaHost); err == nil {
			host = u
		}
	}
	return Env{
		DataDir:       dataDir,
		SchemaVersion: schema,
		LookPath:      exec.LookPath,
		OllamaHost:    host,
		HTTPClient:    &http.Client{Timeout: 2 * time.Second},
	}
}

// Run runs every check.
func Run(ctx context.Context, env Env) []Check {
	return []Check{
		dataDir(env),
		schema(ctx, env),
		webkit(),
		bubblewrap(ctx, env),
		chromium(env),
		ollama(ctx, env),
	}
}

// chromiumNames are the names Debian and others give the browser the
// browser tool drives.
var chromiumNames = []string{"chromium", "chromium-browser"}

func chromium(env Env) Check {
	c := Check{Name: "Chromium (browser tool)"}
	for _, name := range chromiumNames {
		if path, err := env.LookPath(name); err == nil {
			c.Status, c.Detail = OK, path
			return c
		}
	}
	c.Status = Warn
	c.Detail = "chromium not found: the browser tool (pages that need JavaScript) cannot run; web_fetch still reads pages"
	c.Fix = "sudo apt-get install chromium"
	return c
}

func dataDir(env Env) Check {
	c := Check{Name: "Data directory", Detail: env.DataDir}
	probe := filepath.Join(env.DataDir, ".doctor-probe")
	if err := os.MkdirAll(env.DataDir, 0o700); err != nil {
		c.Status, c.Detail = Fail, fmt.Sprintf("%s cannot be created: %v", env.DataDir, err)
		c.Fix = "set DUCKLM_HOME to a folder you can write to"
		return c
	}
	if err := os.WriteFile(probe, []byte("ok"), 0o600); err != nil {
		c.Status, c.Detail = Fail, fmt.Sprintf("%s is not writable: %v", env.DataDir, err)
		c.Fix = "fix the folder's permissions, or set DUCKLM_HOME to a folder you can write to"
		return c
	}
	os.Remove(probe)
	c.Status = OK
	return c
}

func schema(ctx context.Context, env Env) Check {
	c := Check{Name: "Database schema"}
	if env.SchemaVersion == nil {
		c.Status, c.Detail = Warn, "not checked"
		return c
	}
	have, latest, err := env.SchemaVersion(ctx)
	switch {
	case err != nil:
		c.Status, c.Detail = Fail, err.Error()
		c.Fix = "move the damaged database aside, or set DUCKLM_HOME to another folder"
	case have > latest:
		c.Status, c.Detail = Fail, fmt.Sprintf("version %d, written by a newer ducklm (this build knows up to %d)", have, latest)
		c.Fix = "upgrade ducklm, or set DUCKLM_HOME to another folder"
	case have == 0:
		c.Status, c.Detail = OK, fmt.Sprintf("no database yet: schema %d is created on first start", latest)
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("version %d (latest %d)", have, latest)
	}
	return c
}

func webkit() Check {
	c := Check{Name: "WebKitGTK 4.1 (desktop window)"}
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		matches, _ := filepath.Glob(filepath.Join(dir, "libwebkit2gtk-4.1.so*"))
		if len(matches) > 0 {
			c.Status, c.Detail = OK, matches[0]
			return c
		}
	}
	c.Status, c.Detail = Warn, "libwebkit2gtk-4.1 not found: the window cannot open (the CLI and `ducklm serve` still work)"
	c.Fix = "sudo apt-get install libwebkit2gtk-4.1-0"
	return c
}

func bubblewrap(ctx context.Context, env Env) Check {
	c := Check{Name: "bubblewrap (sandbox)"}
	path, err := env.LookPath("bwrap")
	if err != nil {
		c.Status, c.Detail = Warn, "bwrap not found: shell steps and web_fetch workers run unsandboxed and every one needs your approval"
		c.Fix = "sudo apt-get install bubblewrap"
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true").CombinedOutput()
	if err != nil {
		c.Status = Warn
		c.Detail = fmt.Sprintf("%s is installed but cannot create a sandbox here: %s", path, strings.TrimSpace(string(out)))
		c.Fix = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or run where they are allowed"
		return c
	}
	c.Status, c.Detail = OK, path
	return c
}

func ollama(ctx context.Context, env Env) Check {
	c := Check{Name: "Ollama (local models)"}
	host := env.OllamaHost.String()
	client := api.NewClient(env.OllamaHost, env.HTTPClient)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	version, err := client.Version(ctx)
	if err != nil {
		c.Status = Warn
		c.Detail = fmt.Sprintf("no Ollama answered at %s: explicit plans, shell one-liners and simulated worlds still work", host)
		c.Fix = "install and start Ollama (ollama serve), or set OLLAMA_HOST to where it runs"
		return c
	}
	list, err := client.List(ctx)
	if err != nil {
		c.Status, c.Detail = Warn, fmt.Sprintf("Ollama %s at %s did not list its models: %v", version, host, err)
		return c
	}
	if len(list.Models) == 0 {
		c.Status, c.Detail = Warn, fmt.Sprintf("Ollama %s at %s has no models", version, host)
		c.Fix = "pull one, e.g. ollama pull qwen2.5:7b"
		return c
	}
	names := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		names = append(names, m.Name)
	}
	c.Status, c.Detail = OK, fmt.Sprintf("Ollama %s at %s: %s", version, host, strings.Join(names, ", "))
	return c
}
