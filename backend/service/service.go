package service

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/bus"
	"ducklm/backend/deliberation"
	"ducklm/backend/mcpclient"
	"ducklm/backend/ollama"
	"ducklm/backend/runtime"
	"ducklm/backend/settings"
	"ducklm/backend/store"
	"ducklm/backend/store/postgres"
	"ducklm/backend/tool"
	"ducklm/backend/world"
	"ducklm/backend/worldproc"
)

// Service is an open data directory and the services wired on it.
type Service struct {
	Dir    string
	DB     *store.DB
	Ledger *store.Ledger
	Bus    *bus.Bus
	// Blobs is the content-addressed blob store: the data directory's
	// blobs/ folder on SQLite, the database's blobs table on PostgreSQL.
	Blobs  Blobs
	Worlds *world.Service
	// Deliberation searches forks of simulated worlds before acting.
	Deliberation *deliberation.Service
	// Runtime drives task runs; StartRuntime resumes them.
	Runtime *runtime.Controller
	Tools   *tool.Registry
	// MCP keeps the MCP servers the user added, whose tools join Tools.
	MCP     *mcpclient.Manager
	Ollama  *ollama.Client
	sandbox *sandboxProbe
	// Tokens carries streamed model tokens to the user interfaces.
	Tokens *TokenHub
	// Progress carries the progress of long work to the user interfaces.
	Progress *ProgressHub
	models   *modelCache
	memory   *memoryHub

	// settingsMu makes storing the settings and applying their host one step.
	settingsMu   sync.Mutex
	fallbackHost *url.URL      // the host an empty host setting means
	wake         chan struct{} // wakes the paused-run watcher
	stopFollow   func()        // stops following other processes' commits
	database     DatabaseChoice
}

// Blobs is what the service needs of a blob store: the store, and a
// verifying reader for bundles.
type Blobs interface {
	backend.BlobStore
	Open(digest string) (io.ReadCloser, error)
}

var (
	_ Blobs = (*blob.Store)(nil)
	_ Blobs = (*store.Blobs)(nil)
)

// DatabaseURLEnv names the environment variable that puts the shared state
// on a PostgreSQL database instead of the data directory's SQLite file.
const DatabaseURLEnv = "DUCKLM_DATABASE_URL"

// Options tune Open.
type Options struct {
	// OllamaHost overrides OLLAMA_HOST.
	OllamaHost string
	// DatabaseURL (postgres://…) overrides $DUCKLM_DATABASE_URL; empty
	// with the variable unset keeps the data directory's SQLite database.
	DatabaseURL string
	// Quiet leaves other processes' commits unfollowed: a worker process
	// serves no window or CLI, and following would make every worker read
	// every event every other worker writes.
	Quiet bool
	Log   *slog.Logger
	// StartGrace is runtime.Deps.StartGrace (0: its default).
	StartGrace time.Duration
	// probeSandbox replaces the bubblewrap probe in tests.
	probeSandbox func() bool
}

// Open opens the data directory dir (creating it when new) and applies the
// schema migrations. The caller decides whether to hold the directory's Lock.
func Open(ctx context.Context, dir string) (*Service, error) {
	return OpenWith(ctx, dir, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dir string, opts Options) (*Service, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	prefs, err := settings.Load(dir)
	if err != nil {
		return nil, err
	}
	host, fallback, err := ollamaHosts(opts, prefs)
	if err != nil {
		return nil, err
	}
	oc := ollama.New(host, nil)
	choice, err := ChooseDatabase(dir, opts)
	if err != nil {
		return nil, err
	}
	db, blobs, err := openStore(ctx, dir, choice.URL)
	if err != nil {
		return nil, err
	}
	dbURL := choice.URL
	ledger := store.NewLedger(db)
	b := bus.New(ledger)
	ledger.OnCommit(b.Publish)
	// World programs run in worker processes the kernel holds to the
	// memory limit the settings choose.
	worlds := world.New(store.NewWorlds(db, ledger), ledger, blobs, worldLimits(prefs), worldproc.Shared())
	models := &modelCache{c: oc}
	tokens := &TokenHub{}
	mem := &memoryHub{dir: dir, db: db, ledger: ledger, oc: oc, log: opts.Log, wake: make(chan struct{}, 1), shared: dbURL != ""}
	delib := deliberation.New(worlds, ledger)
	inst, err := Installation(dir)
	if err != nil {
		db.Close()
		return nil, err
	}
	// On a shared database one process at a time drives a run, under the
	// run's lock (docs/team-server.md, "Who drives a task run").
	var drivers *postgres.RunLocks
	if dbURL != "" {
		// This installation is on the team's database from now on: a run it
		// owns is one it drives, and a fork of it is its own (runtime
		// Installations).
		if err := db.RecordInstallation(ctx, inst.ID, inst.Host, time.Now()); err != nil {
			db.Close()
			return nil, err
		}
		drivers = postgres.NewRunLocks(dbURL)
	}
	sandbox := &sandboxProbe{probe: opts.probeSandbox}
	rt, tools, servers := newRuntime(dir, dbURL, db, ledger, blobs, worlds, delib, oc, models, tokens, mem, inst, drivers, sandbox, opts)
	// On a shared database other processes append too: their commits reach
	// this process's subscribers (the window, the CLI) through the follower,
	// the runtime, which wakes the runs it drives on their answers, and the
	// memory index, which takes in the memories they store.
	stopFollow := func() {}
	if dbURL != "" && !opts.Quiet {
		fctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{}, 2)
		publish := func(events []backend.Event) {
			b.Publish(events)
			rt.Followed(events)
			mem.offer(events)
		}
		go func() { defer func() { done <- struct{}{} }(); postgres.Follow(fctx, dbURL, ledger, publish) }()
		go func() { defer func() { done <- struct{}{} }(); mem.followLoop(fctx) }()
		stopFollow = func() { cancel(); <-done; <-done }
	}
	if drivers != nil {
		follow := stopFollow
		stopFollow = func() { follow(); drivers.Close() }
	}
	worlds.SetStateReader(runtime.BackendTask, func(ctx context.Context, runID string) (json.RawMessage, error) {
		st, _, err := rt.Load(ctx, runID)
		if err != nil {
			return nil, err
		}
		return json.Marshal(st)
	})
	return &Service{Dir: dir, DB: db, Ledger: ledger, Bus: b, Blobs: blobs, Worlds: worlds, Deliberation: delib,
		Runtime: rt, Tools: tools, MCP: servers, Ollama: oc, sandbox: sandbox, Tokens: tokens, Progress: &ProgressHub{}, models: models, memory: mem,
		fallbackHost: fallback, wake: make(chan struct{}, 1), stopFollow: stopFollow, database: choice}, nil
}

// openStore opens the database and blob store: PostgreSQL's when a
// database URL is given (shared by a team; blobs in the database), else
// the data directory's SQLite file and blob folder.
func openStore(ctx context.Context, dir, dbURL string) (*store.DB, Blobs, error) {
	if dbURL != "" {
		db, err := postgres.Open(ctx, dbURL)
		if err != nil {
			return nil, nil, err
		}
		return db, store.NewBlobs(db), nil
	}
	db, err := store.Open(ctx, dbPath(dir))
	if err != nil {
		return nil, nil, err
	}
	blobs, err := blob.Open(blobDir(dir))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, blobs, nil
}

// Close stops the runtime (running steps are cancelled and recorded) and
// closes the database.
func (s *Service) Close() error {
	s.Runtime.Close()
	s.MCP.Close()          // after the runs' steps: their calls were cancelled
	s.stopFollow()         // before the memory store, which it feeds
	s.memory.close()       // writes a fresh index snapshot
	s.sandbox.early.Wait() // a probe cut off would leave its cgroup and folder
	return s.DB.Close()
}

// Counts are the sizes of what the data directory holds. Worlds and Runs
// count every kind (a task run is a run of its own real world); TaskRuns
// and SimulatedWorlds count what the Runs list and the Worlds screen show,
// so the window's numbers agree with its lists, and DeliberationBranches
// the simulated worlds of deliberation branches that the Worlds screen
// leaves out (the lineage draws them under their rounds).
type Counts struct {
	Worlds               int64 `json:"worlds"`
	Runs                 int64 `json:"runs"`
	TaskRuns             int64 `json:"taskRuns"`
	SimulatedWorlds      int64 `json:"simulatedWorlds"`
	DeliberationBranches int64 `json:"deliberationBranches"`
	Streams              int64 `json:"streams"`
	Events               int64 `json:"events"`
}

// Overview is what the first screen shows: where the data is, which schema
// it has, how much it holds and what happened last.
type Overview struct {
	Version             string          `json:"version"`
	DataDir             string          `json:"dataDir"`
	DatabasePath        string          `json:"databasePath"`
	SchemaVersion       int64           `json:"schemaVersion"`
	LatestSchemaVersion int64           `json:"latestSchemaVersion"`
	Counts              Counts          `json:"counts"`
	RecentEvents        []backend.Event `json:"recentEvents"`
}

// Overview reads the overview from the ledger and registries.
func (s *Service) Overview(ctx context.Context, recent int) (Overview, error) {
	o := Overview{
		Version:             backend.Version,
		DataDir:             s.Dir,
		DatabasePath:        s.DB.Path,
		LatestSchemaVersion: store.LatestSchemaVersion(),
	}
	var err error
	if o.SchemaVersion, err = s.DB.SchemaVersion(ctx); err != nil {
		return o, err
	}
	if o.Counts, err = s.counts(ctx); err != nil {
		return o, err
	}
	if o.RecentEvents, err = s.Ledger.Recent(ctx, recent); err != nil {
		return o, err
	}
	return o, nil
}

func (s *Service) counts(ctx context.Context) (Counts, error) { return countsOf(ctx, s.DB, s.Ledger) }

// countsOf counts what db holds: one definition for the database in use
// and for the local one a team's installation offers to copy.
func countsOf(ctx context.Context, db *store.DB, ledger *store.Ledger) (Counts, error) {
	var c Counts
	row := db.SQL.QueryRowContext(ctx, db.Rebind(`SELECT
		(SELECT count(*) FROM world_specs),
		(SELECT count(*) FROM world_runs),
		(SELECT count(*) FROM world_runs r JOIN world_specs w ON w.id = r.world_id WHERE w.backend = ?),
		(SELECT count(*) FROM streams)`), runtime.BackendTask)
	if err := row.Scan(&c.Worlds, &c.Runs, &c.TaskRuns, &c.Streams); err != nil {
		return c, backend.Wrap(err, backend.EINTERNAL, "cannot count what the data directory holds")
	}
	// As the Worlds screen lists them: ListWorlds' own count.
	sim, branches, err := store.NewWorlds(db, ledger).CountWorlds(ctx, backend.WorldQuery{Domain: backend.DomainSimulated, WithoutBranches: true})
	if err != nil {
		return c, err
	}
	c.SimulatedWorlds, c.DeliberationBranches = int64(sim), int64(branches)
	c.Events, err = ledger.Count(ctx)
	return c, err
}
