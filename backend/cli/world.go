package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"ducklm/backend"
	"ducklm/backend/river"
	"ducklm/backend/service"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// worldCommand is one `ducklm world` sub-command.
type worldCommand struct {
	name    string
	args    string // what follows the name in its usage line
	summary string
	write   bool // holds the data directory lock while it runs
	run     func(s *session, args []string) error
	top     bool // a top-level command (ducklm NAME), not ducklm world NAME
}

// worldCommands lists the sub-commands in the order the usage shows them.
var worldCommands = []worldCommand{
	{"new", "[--name N] (--program FILE | --example NAME) [--seed S] [--json]", "create a simulated world and its first run", true, runWorldNew, false},
	{"step", "RUN [--action JSON] [--json]", "apply one action (null lets the program choose)", true, runWorldStep, false},
	{"run", "RUN --steps N [--action JSON] [--checkpoint-every K] [--on-workers] [--json]", "apply up to N steps, stopping when the world is done", true, runWorldRun, false},
	{"checkpoint", "RUN [--json]", "take an exact checkpoint of a run", true, runWorldCheckpoint, false},
	{"fork", "CHECKPOINT [--run RUN] --divergence TYPE [--delta JSON] [--seed-policy inherit|derive|fresh] [--name N] [--deliberation-index I] [--json]", "fork a new world from a checkpoint", true, runWorldFork, false},
	{"deliberate", "RUN [--checkpoint CKP] [--strategy beam|mcts] [--width N] [--depth N] [--budget N] [--seeds K] [--time-limit D] [--rounds N | --until-done] [--apply] [--on-workers N] [--json]",
		"search forks of a run's world, rank the next actions, and (--apply) take the best", true, runWorldDeliberate, false},
	{"ls", "[--branches] [--json]", "list worlds (--branches: deliberation branches too)", false, runWorldLs, false},
	{"show", "WORLD|RUN [--json]", "show a world or run: spec, runs, checkpoints, rounds of deliberation, fork provenance", false, runWorldShow, false},
	{"events", "RUN [--full] [--type T[,T...]] [--limit N] [--json]", "list a run's events (--full: with inherited history)", false, runWorldEvents, false},
	{"lineage", "[WORLD] [--json]", "the fork tree, or one world's ancestors and descendants", false, runWorldLineage, false},
	{"diff", "RUN RUN [--json]", "compare two runs after their shared history", false, runWorldDiff, false},
	{"verify", "RUN [--json]", "re-execute a run and compare it with its record", false, runWorldVerify, false},
	{"demo", "[--json]", "run the Branching Grid fork demo end to end", true, runWorldDemo, false},
}

func init() {
	registerGroup("world", "create, run, fork and compare simulated worlds (ducklm world help)", worldUsage(), runWorld)
}

// worldUsage is the sub-command listing shown by `ducklm world help` and
// after a bad `ducklm world` invocation.
func worldUsage() string {
	var b strings.Builder
	b.WriteString("world <command> [arguments]\n\nCommands:")
	for _, c := range worldCommands {
		fmt.Fprintf(&b, "\n  ducklm world %s %s\n      %s", c.name, c.args, c.summary)
	}
	b.WriteString("\n\nDivergence types: state_patch, action_override, seed_change, program_change, parameter_change.")
	b.WriteString("\nExamples: " + strings.Join(exampleNames(), ", ") + ".")
	return b.String()
}

func runWorld(env Env, args []string) error {
	if len(args) == 0 {
		return usageError("usage: name a world command (ducklm world help lists them)")
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		fmt.Fprintf(env.Stdout, "usage: ducklm %s\n", worldUsage())
		return nil
	}
	for _, c := range worldCommands {
		if c.name == args[0] {
			return c.exec(env, args[1:])
		}
	}
	return usageError("usage: unknown world command %q", args[0])
}

// usage returns the one-line usage of c.
func (c worldCommand) usage() string {
	if c.top {
		return "ducklm " + c.name + " " + c.args
	}
	return "ducklm world " + c.name + " " + c.args
}

// title names the command in sentences.
func (c worldCommand) title() string {
	if c.top {
		return c.name
	}
	return "world " + c.name
}

// bad is a usage mistake in c's arguments: one sentence with c's usage.
func (c worldCommand) bad(format string, args ...any) error {
	return backend.Errorf(backend.EINVALID, "%s (usage: %s)", fmt.Sprintf(format, args...), c.usage())
}

// session is one invocation of a sub-command and, once open has been
// called, the data directory it works on.
type session struct {
	env  Env
	ctx  context.Context
	cmd  worldCommand
	lock *service.Lock
	svc  *service.Service
	json bool
	// stdinClosed is set once the prompt's input has ended: later
	// approvals are left waiting instead of asked.
	stdinClosed bool
	// printer prints a followed run's events (run.go).
	printer *printer
}

// exec runs c. The command parses and checks its arguments first and then
// calls open, so bad input never touches (or waits for) the data directory.
func (c worldCommand) exec(env Env, args []string) error {
	if hasHelpFlag(args) {
		fmt.Fprintf(env.Stdout, "usage: %s\n    %s\n", c.usage(), c.summary)
		return nil
	}
	ctx := env.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	s := &session{env: env, ctx: ctx, cmd: c}
	defer s.close()
	return c.run(s, args)
}

// open opens the data directory, under its lock when the command writes.
func (s *session) open() error {
	dir, err := service.DataDir()
	if err != nil {
		return err
	}
	if s.cmd.write {
		if s.lock, err = service.AcquireLock(dir); err != nil {
			return err
		}
	}
	// World commands print what they did; none follows the ledger live, so
	// on a shared database none reads every other process's commits.
	if s.svc, err = service.OpenWith(s.ctx, dir, service.Options{Quiet: true}); err != nil {
		return err
	}
	return nil
}

// close closes the data directory and releases its lock.
func (s *session) close() {
	if s.svc != nil {
		s.svc.Close()
	}
	s.lock.Release()
}

// hasHelpFlag reports whether args ask for help before any "--".
func hasHelpFlag(args []string) bool {
	for _, a := range args {
		if isHelpFlag(a) {
			return true
		}
		if a == "--" {
			return false
		}
	}
	return false
}

// isHelpFlag reports whether a is --help, -help or -h.
func isHelpFlag(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// flags returns a flag set with --json bound to the session.
func (s *session) flags() *flag.FlagSet {
	name := "world " + s.cmd.name
	if s.cmd.top {
		name = s.cmd.name
	}
	fs := newFlags(name)
	fs.BoolVar(&s.json, "json", false, "print JSON")
	return fs
}

// parse parses flags that may come before, between or after the positional
// arguments, and checks how many positionals there are.
func (s *session) parse(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, s.cmd.bad("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	switch {
	case len(pos) < minPos:
		return nil, s.cmd.bad("%s needs %s", s.cmd.title(), strings.Fields(s.cmd.args)[len(pos)])
	case len(pos) > maxPos && maxPos == 0:
		return nil, s.cmd.bad("%s takes no arguments, but got %q", s.cmd.title(), pos[0])
	case len(pos) > maxPos:
		return nil, s.cmd.bad("%s takes at most %d argument(s), but got %d", s.cmd.title(), maxPos, len(pos))
	}
	return pos, nil
}

// out prints v as indented JSON when --json was given, and otherwise calls text.
func (s *session) out(v any, text func(w io.Writer)) error {
	if s.json {
		enc := json.NewEncoder(s.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(s.env.Stdout)
	return nil
}

// parseID parses flags and exactly one positional argument, an id of kind.
func (s *session) parseID(fs *flag.FlagSet, args []string, kind backend.IDKind) (string, error) {
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return "", err
	}
	return pos[0], needID(pos[0], kind)
}

// needID checks that id is a well-formed id of kind, naming the argument.
func needID(id string, kind backend.IDKind) error {
	if err := backend.CheckID(id, kind); err != nil {
		return backend.Errorf(backend.EINVALID, "%s", strings.TrimSuffix(backend.ErrorMessage(err), "."))
	}
	return nil
}

// jsonFlag checks an optional JSON flag value; empty stays nil.
func jsonFlag(name, value string) (json.RawMessage, error) {
	if value == "" {
		return nil, nil
	}
	if !json.Valid([]byte(value)) {
		return nil, backend.Errorf(backend.EINVALID, "--%s is not valid JSON: %s", name, clip(value, 60))
	}
	return json.RawMessage(value), nil
}

// compact returns raw JSON on one line.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return unescapeHTML(b.String())
}

// unescapeHTML gives back the characters Go's JSON encoder escapes for HTML
// (\u0026, \u003c, \u003e: a command's && and redirections) in JSON text
// for a terminal; the text stays valid JSON, since JSON strings need no
// escape for them. A backslash that escapes another is kept with it.
func unescapeHTML(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch s[i+2 : i+6] {
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2]) // an escape: the backslash and what it escapes
		i++
	}
	return b.String()
}

// clip is s cut to at most n runes, the rest as "…" (never in the middle
// of a character). oneLine also puts it on one line.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func exampleNames() []string {
	var names []string
	for n := range starlark.Examples() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// newOut is what `world new` prints.
type newOut struct {
	World      backend.WorldSpec  `json:"world"`
	Run        backend.WorldRun   `json:"run"`
	Checkpoint backend.Checkpoint `json:"checkpoint"` // the run's checkpoint at time 0
}

func runWorldNew(s *session, args []string) error {
	fs := s.flags()
	name := fs.String("name", "", "world name")
	program := fs.String("program", "", "Starlark program file")
	example := fs.String("example", "", "example program")
	seed := fs.Int64("seed", 0, "seed")
	if _, err := s.parse(fs, args, 0, 0); err != nil {
		return err
	}
	var source []byte
	switch {
	case (*program == "") == (*example == ""):
		return s.cmd.bad("give exactly one of --program FILE or --example NAME")
	case *example != "":
		src, ok := starlark.Examples()[*example]
		if !ok {
			return backend.Errorf(backend.EINVALID, "there is no example %q (the examples are: %s)", *example, strings.Join(exampleNames(), ", "))
		}
		source = src
		if *name == "" {
			*name = *example
		}
	default:
		src, err := os.ReadFile(*program)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return backend.Wrap(err, backend.EINVALID, "there is no program file %s", *program)
		case err != nil:
			return backend.Wrap(err, backend.EINVALID, "cannot read the program file %s", *program)
		}
		source = src
		if *name == "" {
			*name = strings.TrimSuffix(filepath.Base(*program), filepath.Ext(*program))
		}
	}
	if *seed < 0 {
		return backend.Errorf(backend.EINVALID, "--seed is a whole number from 0 to 2^63-1, not %d", *seed)
	}
	if err := s.open(); err != nil {
		return err
	}
	spec, run, err := s.svc.Worlds.Create(s.ctx, world.NewWorld{Name: *name, Program: source, Seed: *seed})
	if err != nil {
		if *program != "" && (backend.ErrorCode(err) == backend.EINVALID || backend.ErrorCode(err) == backend.ELIMIT) {
			return backend.Wrap(err, backend.EINVALID, "%s: %s", *program, backend.ErrorMessage(err))
		}
		return err
	}
	cp, err := s.svc.Worlds.GetCheckpoint(s.ctx, run.LatestCheckpointID)
	if err != nil {
		return err
	}
	return s.out(newOut{World: spec, Run: run, Checkpoint: cp}, func(w io.Writer) {
		fmt.Fprintf(w, "world: %s\nrun: %s\ncheckpoint: %s\n", spec.ID, run.ID, cp.ID)
		fmt.Fprintf(w, "name: %s\nseed: %d\nprogram: %s\n", spec.Name, spec.Seed, spec.Program.Digest)
	})
}

func runWorldStep(s *session, args []string) error {
	fs := s.flags()
	action := fs.String("action", "", "action JSON (default null)")
	id, err := s.parseID(fs, args, backend.KindRun)
	if err != nil {
		return err
	}
	a, err := jsonFlag("action", *action)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	out, err := s.svc.Worlds.Step(s.ctx, id, a)
	if err != nil {
		return err
	}
	return s.out(out, func(w io.Writer) {
		fmt.Fprintf(w, "time: %d\nstatus: %s\ndone: %t\nstate: %s\n", out.Run.WorldLocalTime, out.Run.Status, out.Done, compact(out.State))
		for _, e := range out.Emitted {
			fmt.Fprintf(w, "event: %s\n", compact(e))
		}
	})
}

// runOut is what `world run` prints.
type runOut struct {
	world.StepOutcome
	Steps int `json:"steps"` // steps applied by this command
}

func runWorldRun(s *session, args []string) error {
	fs := s.flags()
	steps := fs.Int("steps", 0, "number of steps")
	action := fs.String("action", "", "action JSON (default null)")
	every := fs.Int("checkpoint-every", 0, "checkpoint every K steps")
	onWorkers := fs.Bool("on-workers", false, "queue the run as a job for a `ducklm worker` and wait for it (needs the team's PostgreSQL)")
	id, err := s.parseID(fs, args, backend.KindRun)
	if err != nil {
		return err
	}
	if *steps == 0 {
		return s.cmd.bad("world run needs --steps N")
	}
	if *steps < 0 {
		return s.cmd.bad("--steps must be a positive number of steps, not %d", *steps)
	}
	if *every < 0 {
		return s.cmd.bad("--checkpoint-every must not be negative")
	}
	a, err := jsonFlag("action", *action)
	if err != nil {
		return err
	}
	var url string
	if *onWorkers {
		if url, err = teamDatabase(); err != nil {
			return err
		}
		if url == "" {
			return s.cmd.bad("--on-workers needs the team's PostgreSQL: %s", chooseTeamDatabase)
		}
	}
	if err := s.open(); err != nil {
		return err
	}
	if *onWorkers {
		return runWorldOnWorkers(s, url, id, *steps, a, *every)
	}
	// Progress reports saved steps only: a step printed here is durable.
	taken, shown := 0, 0
	tick := max(1, *steps/10)
	res, err := s.svc.Worlds.RunSteps(s.ctx, id, world.RunOptions{
		// Saving at least every tick makes every progress line a durable step.
		Steps: *steps, Action: a, CheckpointEvery: *every, SaveEvery: min(tick, world.DefaultSaveEvery),
		Progress: func(done, total int) {
			taken = done
			if done/tick > shown/tick || done == total {
				shown = done
				fmt.Fprintf(s.env.Stderr, "step %d/%d\n", done, total)
			}
		},
	})
	if err != nil {
		return err
	}
	if res.Done && taken != shown {
		fmt.Fprintf(s.env.Stderr, "step %d/%d (done)\n", taken, *steps)
	}
	return s.out(runOut{StepOutcome: res, Steps: taken}, func(w io.Writer) {
		r := res.Run
		fmt.Fprintf(w, "run: %s\nstatus: %s\ntime: %d\nsteps: %d\ndone: %t\n", r.ID, r.Status, r.WorldLocalTime, taken, res.Done)
		fmt.Fprintf(w, "checkpoint: %s\nstate: %s\n", r.LatestCheckpointID, compact(res.State))
	})
}

// runWorldOnWorkers queues the run as a job and waits for a worker to take
// the steps; a worker that dies hands the rest to another, which resumes
// from the run's last checkpoint.
func runWorldOnWorkers(s *session, url, id string, steps int, action json.RawMessage, every int) error {
	run, err := s.svc.Worlds.Run(s.ctx, id)
	if err != nil {
		return err
	}
	q, err := river.NewQueue(s.ctx, url)
	if err != nil {
		return err
	}
	defer q.Close()
	fmt.Fprintf(s.env.Stderr, "queued: %d steps of %s for the workers\n", steps, id)
	res, err := q.RunWorld(s.ctx, id, run.WorldLocalTime, steps, action, every)
	if err != nil {
		return err
	}
	taken := int(res.Run.WorldLocalTime - run.WorldLocalTime)
	return s.out(runOut{StepOutcome: res, Steps: taken}, func(w io.Writer) {
		r := res.Run
		fmt.Fprintf(w, "run: %s\nstatus: %s\ntime: %d\nsteps: %d\ndone: %t\n", r.ID, r.Status, r.WorldLocalTime, taken, res.Done)
		fmt.Fprintf(w, "checkpoint: %s\nstate: %s\n", r.LatestCheckpointID, compact(res.State))
	})
}

func runWorldCheckpoint(s *session, args []string) error {
	fs := s.flags()
	id, err := s.parseID(fs, args, backend.KindRun)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	cp, err := s.svc.Worlds.Checkpoint(s.ctx, id)
	if err != nil {
		return err
	}
	return s.out(cp, func(w io.Writer) {
		fmt.Fprintf(w, "checkpoint: %s\ntime: %d\ndigest: %s\n", cp.ID, cp.WorldLocalTime, cp.Blob.Digest)
	})
}

// forkOut is what `world fork` prints.
type forkOut struct {
	Fork  backend.Fork      `json:"fork"`
	World backend.WorldSpec `json:"world"`
	Run   backend.WorldRun  `json:"run"`
}

func runWorldFork(s *session, args []string) error {
	fs := s.flags()
	run := fs.String("run", "", "the run whose history holds the checkpoint")
	div := fs.String("divergence", "", "divergence type")
	delta := fs.String("delta", "", "divergence delta JSON")
	policy := fs.String("seed-policy", string(backend.SeedInherit), "inherit, derive or fresh")
	name := fs.String("name", "", "child world name")
	index := fs.Int64("deliberation-index", 0, "deliberation index")
	id, err := s.parseID(fs, args, backend.KindCheckpoint)
	if err != nil {
		return err
	}
	if *run != "" {
		if err := needID(*run, backend.KindRun); err != nil {
			return err
		}
	}
	if *div == "" {
		return s.cmd.bad("world fork needs --divergence")
	}
	switch backend.SeedPolicy(*policy) {
	case backend.SeedInherit, backend.SeedDerive, backend.SeedFresh:
	default:
		return backend.Errorf(backend.EINVALID, "unknown seed policy %q (use inherit, derive or fresh)", *policy)
	}
	if *index < 0 {
		return backend.Errorf(backend.EINVALID, "--deliberation-index must not be negative")
	}
	d, err := jsonFlag("delta", *delta)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	f, spec, child, err := s.svc.Worlds.Fork(s.ctx, world.ForkRequest{
		CheckpointID: id, ParentRunID: *run, Divergence: backend.DivergenceType(*div), Delta: d,
		SeedPolicy: backend.SeedPolicy(*policy), Name: *name, DeliberationIndex: *index,
	})
	if err != nil {
		return err
	}
	return s.out(forkOut{Fork: f, World: spec, Run: child}, func(w io.Writer) {
		fmt.Fprintf(w, "fork: %s\nworld: %s\nrun: %s\n", f.ID, spec.ID, child.ID)
		fmt.Fprintf(w, "parent world: %s\nparent run: %s\ntime: %d\nseed: %d\n", f.ParentWorldID, f.ParentRunID, child.WorldLocalTime, spec.Seed)
	})
}
