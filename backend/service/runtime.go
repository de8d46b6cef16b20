package service

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/coder"
	"ducklm/backend/critic"
	"ducklm/backend/deliberation"
	"ducklm/backend/mcpclient"
	"ducklm/backend/ollama"
	"ducklm/backend/planner"
	"ducklm/backend/runtime"
	"ducklm/backend/store"
	"ducklm/backend/store/postgres"
	"ducklm/backend/tool"
	"ducklm/backend/web"
	"ducklm/backend/world"
)

// newRuntime wires the loop controller: the model client, the tools, the
// sandbox and the stores.
func newRuntime(dir, dbURL string, db *store.DB, ledger *store.Ledger, blobs backend.BlobStore, worlds *world.Service, delib *deliberation.Service, oc *ollama.Client, models *modelCache, tokens *TokenHub, mem *memoryHub, inst runtime.Installation, drivers *postgres.RunLocks, sandbox *sandboxProbe, opts Options) (*runtime.Controller, *tool.Registry, *mcpclient.Manager) {
	search := &tool.WorldSearch{Worlds: worlds, Deliberation: delib}
	if dbURL != "" {
		// On a team's database a search's branches may run on its workers.
		search.Team = &teamSteps{dir: dir, url: dbURL, db: db}
	}
	// Without bubblewrap the router asks the user before every shell step
	// and every web_fetch (its worker runs a process), so what runs
	// unsandboxed is what a person approved.
	tools := tool.NewRegistry(&tool.Shell{SandboxFrom: sandbox.mode}, &tool.FileRead{}, &tool.FileWrite{}, &tool.WorldSim{Worlds: worlds},
		search, &tool.WebFetch{Net: &web.Net{}, Blobs: blobs, SandboxFrom: sandbox.mode},
		&tool.Browser{Net: &web.Net{}, Blobs: blobs})
	// The MCP servers the user added: started when their tools are first
	// asked for, their tools beside ducklm's own.
	log := opts.Log
	servers := mcpclient.New(mcpclient.Options{Dir: dir, Blobs: blobs, Net: &web.Net{}, Log: log})
	tools.Attach(servers)
	deps := runtime.Deps{
		Store: store.NewWorlds(db, ledger), Events: ledger, Blobs: blobs, Tools: tools,
		Planner: planner.LLM{Client: oc}, Offline: planner.Offline{},
		Critic: critic.WithFallback{Model: &critic.Model{Client: oc}},
		Coder:  coder.Model{Client: oc},
		Models: models, Sandboxed: sandbox.ok,
		WorkRoot: filepath.Join(dir, "workspaces"), DataDir: dir,
		ScriptTool: func(language, source string) backend.Tool {
			return tool.NewScript(language, source, sandbox.mode())
		},
		Log:          func(msg string, args ...any) { log.Warn(msg, args...) },
		Tokens:       func(runID, stepID, text string) { tokens.Publish(Token{RunID: runID, StepID: stepID, Text: text}) },
		Memory:       mem,
		Memories:     mem.retrieve,
		Installation: inst,
		StartGrace:   opts.StartGrace,
	}
	if drivers != nil { // a nil pointer in the interface would be a driver lock
		deps.Drivers = drivers
		deps.Installations = db
	}
	return runtime.New(deps), tools, servers
}

// sandboxProbe asks once, when first needed, whether bubblewrap can sandbox
// steps here. The probe starts bubblewrap in a fresh cgroup, tens of
// milliseconds that a command running no step (world ls, runs, memory …)
// must not spend; the service, the router and the shell tool all go by the
// one answer.
type sandboxProbe struct {
	probe func() bool // nil: bwrap.Available
	once  sync.Once
	found bool
	early sync.WaitGroup // a probe started by soon
}

// soon starts the probe now, beside the caller's own work.
func (p *sandboxProbe) soon() {
	p.early.Add(1)
	go func() {
		defer p.early.Done()
		p.ok()
	}()
}

func (p *sandboxProbe) ok() bool {
	p.once.Do(func() {
		if p.probe != nil {
			p.found = p.probe()
			return
		}
		_, p.found, _ = bwrap.Available()
	})
	return p.found
}

// mode is what a shell step or script may do: without bubblewrap the router
// asks the user before every one, so what runs unsandboxed is what a person
// approved.
func (p *sandboxProbe) mode() tool.SandboxMode {
	if p.ok() {
		return tool.RequireSandbox
	}
	return tool.AllowUnsandboxed
}

// Sandboxed reports whether bubblewrap can sandbox steps here, probing it
// on the first call.
func (s *Service) Sandboxed() bool { return s.sandbox.ok() }

// ProbeSandboxSoon starts probing bubblewrap now, for a command that will
// drive a run: the probe (child processes, a cgroup) overlaps the command's
// own start instead of delaying the run's first decision. Close waits for
// it.
func (s *Service) ProbeSandboxSoon() { s.sandbox.soon() }

// modelCache lists Ollama's models at most every few seconds: the loop asks
// before every decision, and a stopped Ollama must not slow each one down.
type modelCache struct {
	c     *ollama.Client
	stale atomic.Bool

	mu    sync.Mutex
	names []string
	err   error
	at    time.Time
}

const (
	modelsFresh   = 10 * time.Second
	modelsRetry   = 3 * time.Second
	modelsTimeout = 2 * time.Second
)

// forget makes the next call ask Ollama again (the host changed). It does
// not wait for a listing in flight: that one may still answer for the old
// host, and the call after it asks the new one.
func (m *modelCache) forget() { m.stale.Store(true) }

// ModelNames implements runtime.ModelLister.
func (m *modelCache) ModelNames(ctx context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ttl := modelsFresh
	if m.err != nil {
		ttl = modelsRetry
	}
	if !m.stale.Swap(false) && !m.at.IsZero() && time.Since(m.at) < ttl {
		return m.names, m.err
	}
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	models, err := m.c.Models(ctx)
	m.at, m.err, m.names = time.Now(), err, nil
	for _, mo := range models {
		m.names = append(m.names, mo.Name)
	}
	return m.names, m.err
}

// StartRuntime resumes every run that was moving when ducklm stopped and,
// until ctx ends, resumes paused runs once a model answers again.
func (s *Service) StartRuntime(ctx context.Context) ([]string, error) {
	resumed, err := s.Runtime.ResumeAll(ctx)
	if err != nil {
		return nil, err
	}
	go s.watchPaused(ctx)
	return resumed, nil
}

// pausedPoll is how often paused runs are offered to a returning model.
const pausedPoll = 15 * time.Second

func (s *Service) watchPaused(ctx context.Context) {
	t := time.NewTicker(pausedPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
		runs, err := s.Runtime.Runs(ctx)
		if err != nil {
			continue
		}
		var paused []string
		for _, r := range runs {
			if r.DrivenBy != "" {
				continue // another installation's run: it drives it
			}
			switch r.Run.Status {
			case backend.RunPaused:
				paused = append(paused, r.Run.ID)
			case backend.RunRunning, backend.RunPending:
				// A moving run always has a driver; Start only wakes one
				// that has. A run left without one (a lost wake: seen once
				// in ~80 real-model runs, right after an approval) is
				// driven again instead of standing still for good.
				s.Runtime.Start(r.Run.ID)
			}
		}
		if len(paused) == 0 {
			continue
		}
		if names, err := s.models.ModelNames(ctx); err != nil || len(names) == 0 {
			continue
		}
		for _, id := range paused {
			// Start, not Resume: the driver takes up only this
			// installation's runs, and a run without an owner on a team's
			// database waits for a person (Resume adopts it).
			s.Runtime.Start(id)
		}
	}
}

// Token is one streamed piece of a model's answer for a run (not stored: the
// final message is an event).
type Token struct {
	RunID  string `json:"runId"`
	StepID string `json:"stepId,omitempty"`
	Text   string `json:"text"`
}

var _ runtime.DriverLocks = (*postgres.RunLocks)(nil)
