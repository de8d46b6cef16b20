// Package realmodel runs a real Ollama server for ducklm's tests: the server
// built from the Go module proxy by scripts/ollama-server.sh (CPU only,
// cached outside the checkout), serving tiny llama-architecture models with
// seeded random weights that this package writes with Ollama's own GGUF
// writer. Their words are nonsense, but the server's grammar still forces
// schema-shaped JSON: what ducklm's client side must be proven on.
//
// The models:
//   - Tiny ("tiny") answers "ok" and stops; schema-shaped answers stay short.
//   - Random ("tiny-random") has no biases.
//   - Looping ("tiny-loop") repeats 'o' until the server stops it (more than
//     30 identical tokens).
//   - Endless ("tiny-endless") never chooses to end, nor to close a string:
//     its answers run to their token limit (num_predict), even under a JSON
//     grammar, for cancelling mid-stream.
//
// At temperature 0 answers repeat exactly; /api/embed works on the default
// engine (64 dimensions).
package realmodel

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The models every server offers.
const (
	Tiny    = "tiny"
	Random  = "tiny-random"
	Looping = "tiny-loop"
	Endless = "tiny-endless"
)

var models = []struct {
	name string
	b    behaviour
}{{Tiny, short}, {Random, random}, {Looping, looping}, {Endless, endless}}

// template is a chat template for the byte-vocabulary models.
const template = `{{- if .System }}<|system|>{{ .System }}
{{ end }}{{- range .Messages }}<|{{ .Role }}|>{{ .Content }}
{{ end }}<|assistant|>`

// Server is a running Ollama server with the tiny models.
type Server struct {
	bin   string
	dir   string
	host  string   // 127.0.0.1:port, kept across restarts
	extra []string // environment the caller added

	mu  sync.Mutex
	cmd *exec.Cmd
	log *lockedBuffer
}

// Binary returns the Ollama server to run: $DUCKLM_OLLAMA_BIN, else what
// scripts/ollama-server.sh builds or finds cached (a first build takes
// 12–14 minutes on 2 cores).
func Binary() (string, error) {
	if bin := os.Getenv("DUCKLM_OLLAMA_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("DUCKLM_OLLAMA_BIN names %s: %w", bin, err)
		}
		return bin, nil
	}
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "scripts", "ollama-server.sh")
	var out, errb bytes.Buffer
	cmd := exec.Command(script)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", script, err, errb.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// Start writes the models into dir, starts `ollama serve` on a free
// loopback port with its models and home in dir, and registers the models.
// env adds to the server's environment (e.g. OLLAMA_NEW_ENGINE=1, whose
// engine makes no embeddings with these models).
func Start(ctx context.Context, dir string, env ...string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	host := l.Addr().String()
	l.Close()
	s := &Server{bin: bin, dir: dir, host: host, extra: env}
	for _, d := range []string{"models", "home", "gguf"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	for i, m := range models {
		if err := s.create(ctx, m.name, m.b, int64(42+i)); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// URL is the server's address, as OLLAMA_HOST takes it.
func (s *Server) URL() *url.URL { return &url.URL{Scheme: "http", Host: s.host} }

// Log is what the server has printed so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

func (s *Server) env() []string {
	env := []string{
		"OLLAMA_HOST=" + s.host,
		"OLLAMA_MODELS=" + filepath.Join(s.dir, "models"),
		"HOME=" + filepath.Join(s.dir, "home"),
		"OLLAMA_KEEP_ALIVE=30m",
		"OLLAMA_NOPRUNE=1",
		// One answer at a time: a request that is not closed when its
		// client goes would hold the runner, and the next would wait.
		"OLLAMA_NUM_PARALLEL=1",
		"OLLAMA_MAX_LOADED_MODELS=4",
		// Flash attention on a CPU is 4x slower for these models' prompts
		// (4,096 tokens: 6 s with it, 1.5 s without, on a busy machine).
		"OLLAMA_FLASH_ATTENTION=false",
	}
	for _, kv := range os.Environ() {
		// The caller's OLLAMA_* settings (e.g. OLLAMA_FLASH_ATTENTION) win
		// over these defaults, but never move the server or its models.
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "TMPDIR=") ||
			strings.HasPrefix(kv, "OLLAMA_") && !strings.HasPrefix(kv, "OLLAMA_HOST=") && !strings.HasPrefix(kv, "OLLAMA_MODELS=") {
			env = append(env, kv)
		}
	}
	return append(env, s.extra...)
}

func (s *Server) start(ctx context.Context) error {
	log := &lockedBuffer{}
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = s.env()
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: the model runners it starts die with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s serve: %w", s.bin, err)
	}
	s.mu.Lock()
	s.cmd, s.log = cmd, log
	s.mu.Unlock()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("ollama serve exited (%v):\n%s", err, log.String())
		case <-ctx.Done():
			s.Kill()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if res, err := http.Get("http://" + s.host + "/api/version"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				go func() { <-exited }()
				s.mu.Lock()
				s.cmd = cmd
				s.mu.Unlock()
				return nil
			}
		}
	}
	s.Kill()
	return fmt.Errorf("ollama serve did not answer on %s within 30 s:\n%s", s.host, log.String())
}

// create writes a model's GGUF and registers it with `ollama create`.
func (s *Server) create(ctx context.Context, name string, b behaviour, seed int64) error {
	gguf := filepath.Join(s.dir, "gguf", name+".gguf")
	if err := writeModel(gguf, b, seed); err != nil {
		return err
	}
	modelfile := filepath.Join(s.dir, "gguf", name+".Modelfile")
	text := "FROM ./" + name + ".gguf\nTEMPLATE \"\"\"" + template + "\"\"\"\n" +
		// One thread: on a busy machine ggml's threads wait for each other
		// at every token (200 tokens: 16 s with 2 threads, 0.06 s with 1).
		"PARAMETER num_predict 256\nPARAMETER num_ctx 4096\nPARAMETER num_thread 1\nPARAMETER stop <|eos|>\n"
	if err := os.WriteFile(modelfile, []byte(text), 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, s.bin, "create", name, "-f", modelfile)
	cmd.Dir = filepath.Dir(modelfile)
	cmd.Env = s.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ollama create %s: %w\n%s", name, err, out)
	}
	return nil
}

// Kill ends the server and its model runners at once (SIGKILL to the
// process group), as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	for range 100 {
		if syscall.Kill(-cmd.Process.Pid, 0) != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Restart starts a killed server again on the same address with the same
// models.
func (s *Server) Restart(ctx context.Context) error {
	s.Kill()
	return s.start(ctx)
}

// Stop ends the server: SIGTERM, then SIGKILL after a few seconds.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		for range 100 {
			if syscall.Kill(-cmd.Process.Pid, 0) != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	s.Kill()
}

// lockedBuffer is a log both of the server's output streams write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 8<<20 {
		return len(p), nil // enough to read a failure by
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var _ io.Writer = (*lockedBuffer)(nil)
