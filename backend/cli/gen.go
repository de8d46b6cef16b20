package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/world"
)

// The gen commands fill a data directory with large, genuine data for
// measuring the window: worlds forked through the world service, events
// recorded by running a real Starlark world (saved in batches). Nothing is
// written that the services would not write themselves.
var genCommands = []worldCommand{
	{name: "gen lineage", args: "[--worlds N] [--trees T] [--seed S] [--json]",
		summary: "create N simulated worlds forked from one another (a fork forest of T trees)", write: true, run: runGenLineage, top: true},
	{name: "gen events", args: "[--events N] [--prefix P] [--seed S] [--json]",
		summary: "create a world forked after P events of its parent and run it until its history holds N events", write: true, run: runGenEvents, top: true},
}

func init() {
	registerGroup("gen", "generate large genuine data to measure the window with (ducklm gen help)", genUsage(), runGen)
}

func genUsage() string {
	var b strings.Builder
	b.WriteString("gen <command> [arguments]\n\nCommands:")
	for _, c := range genCommands {
		fmt.Fprintf(&b, "\n  %s\n      %s", c.usage(), c.summary)
	}
	b.WriteString("\n\nThe data goes to the data directory in use ($DUCKLM_HOME); use a fresh one.")
	return b.String()
}

func runGen(env Env, args []string) error {
	if len(args) == 0 {
		return usageError("usage: name a gen command (ducklm gen help lists them)")
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		fmt.Fprintf(env.Stdout, "usage: ducklm %s\n", genUsage())
		return nil
	}
	for _, c := range genCommands {
		if c.name == "gen "+args[0] {
			return c.exec(env, args[1:])
		}
	}
	return usageError("usage: unknown gen command %q", args[0])
}

// genProgram is a world that never ends: a noisy level that drifts by the
// params' drift each step, emitting a reading and, now and then, an alarm,
// so a history of it has several event types and varied payloads to search.
const genProgram = `
def init(seed):
    return {"t": 0, "level": 0, "params": {"drift": 1, "alarm": 90}}

def step(state, action, rng):
    d = rng.randint(0, 99)
    level = state["level"] + state["params"]["drift"] * (d - 49)
    s = {"t": state["t"] + 1, "level": level, "params": state["params"]}
    events = [{"kind": "reading", "value": d, "level": level}]
    if d >= state["params"]["alarm"]:
        events.append({"kind": "alarm", "value": d})
    return s, events

def observe(state, role):
    return state
`

// genWorld is a world made by gen and where it can be forked from.
type genWorld struct {
	world, run, checkpoint string
}

type genLineageOut struct {
	Worlds  int     `json:"worlds"`
	Forks   int     `json:"forks"`
	Trees   int     `json:"trees"`
	Seconds float64 `json:"seconds"`
}

func runGenLineage(s *session, args []string) error {
	fs := s.flags()
	n := fs.Int("worlds", 5000, "")
	trees := fs.Int("trees", 0, "")
	seed := fs.Int64("seed", 1, "")
	if _, err := s.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *n < 1 || *n > 1_000_000 {
		return s.cmd.bad("--worlds is 1 to 1000000, not %d", *n)
	}
	if *trees == 0 {
		*trees = max(1, *n/1000)
	}
	if *trees < 1 || *trees > *n {
		return s.cmd.bad("--trees is 1 to --worlds (%d), not %d", *n, *trees)
	}
	if err := s.open(); err != nil {
		return err
	}
	started := time.Now()
	rng := rand.New(rand.NewPCG(uint64(*seed), 0x6475636b6c6d))
	w := s.svc.Worlds
	made := make([]genWorld, 0, *n)
	report := s.genProgress(int64(*n), "worlds")
	for t := range *trees {
		spec, run, err := w.Create(s.ctx, world.NewWorld{Name: fmt.Sprintf("tree %d", t+1), Program: []byte(genProgram), Seed: int64(rng.Uint64() >> 1)})
		if err != nil {
			return err
		}
		out, err := w.RunSteps(s.ctx, run.ID, world.RunOptions{Steps: 3})
		if err != nil {
			return err
		}
		made = append(made, genWorld{spec.ID, run.ID, out.Run.LatestCheckpointID})
	}
	divergences := []struct {
		kind   backend.DivergenceType
		delta  string
		policy backend.SeedPolicy
	}{
		{backend.DivergeStatePatch, `{"params":{"drift":2}}`, backend.SeedInherit},
		{backend.DivergeParameterChange, `{"alarm":80}`, backend.SeedInherit},
		{backend.DivergeSeedChange, `{}`, backend.SeedDerive},
	}
	for i := len(made); i < *n; i++ {
		// Mostly forks of recent worlds (deep branches), sometimes of any
		// earlier one (bushy trees).
		var p genWorld
		if rng.IntN(4) == 0 {
			p = made[rng.IntN(len(made))]
		} else {
			p = made[max(0, len(made)-1-rng.IntN(40))]
		}
		d := divergences[rng.IntN(len(divergences))]
		_, child, run, err := w.Fork(s.ctx, world.ForkRequest{CheckpointID: p.checkpoint, Divergence: d.kind, Delta: json.RawMessage(d.delta),
			SeedPolicy: d.policy, Name: fmt.Sprintf("branch %d", i)})
		if err != nil {
			return err
		}
		g := genWorld{child.ID, run.ID, run.LatestCheckpointID}
		if i%8 == 0 { // some branches move on before they are forked again
			out, err := w.RunSteps(s.ctx, run.ID, world.RunOptions{Steps: 2, SaveEvery: 2})
			if err != nil {
				return err
			}
			g.checkpoint = out.Run.LatestCheckpointID
		}
		made = append(made, g)
		report(int64(i + 1))
	}
	out := genLineageOut{Worlds: *n, Forks: *n - *trees, Trees: *trees, Seconds: time.Since(started).Seconds()}
	return s.out(out, func(wr io.Writer) {
		fmt.Fprintf(wr, "worlds: %d\nforks: %d\ntrees: %d\nseconds: %.1f\n", out.Worlds, out.Forks, out.Trees, out.Seconds)
	})
}

type genEventsOut struct {
	World     string  `json:"world"`
	Run       string  `json:"run"`
	Events    int64   `json:"events"`    // in the run's full history
	Inherited int64   `json:"inherited"` // of them, from its parent
	Seconds   float64 `json:"seconds"`
}

// genSaveEvery is how many steps one ledger transaction holds.
const genSaveEvery = 2000

func runGenEvents(s *session, args []string) error {
	fs := s.flags()
	n := fs.Int64("events", 1_000_000, "")
	prefix := fs.Int64("prefix", 1000, "")
	seed := fs.Int64("seed", 1, "")
	if _, err := s.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *n < 10 || *n > 100_000_000 {
		return s.cmd.bad("--events is 10 to 100000000, not %d", *n)
	}
	if *prefix < 2 || *prefix >= *n {
		return s.cmd.bad("--prefix is 2 to --events - 1, not %d", *prefix)
	}
	if *seed < 0 {
		return s.cmd.bad("--seed is a whole number from 0, not %d", *seed)
	}
	if err := s.open(); err != nil {
		return err
	}
	started := time.Now()
	w := s.svc.Worlds
	_, root, err := w.Create(s.ctx, world.NewWorld{Name: "gen parent", Program: []byte(genProgram), Seed: *seed})
	if err != nil {
		return err
	}
	if err := s.growTo(root.ID, *prefix, s.genProgress(*prefix, "parent events")); err != nil {
		return err
	}
	cp, err := w.Checkpoint(s.ctx, root.ID)
	if err != nil {
		return err
	}
	_, child, run, err := w.Fork(s.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch,
		Delta: json.RawMessage(`{"params":{"drift":3}}`), Name: fmt.Sprintf("gen %d events", *n)})
	if err != nil {
		return err
	}
	if err := s.growTo(run.ID, *n, s.genProgress(*n, "events")); err != nil {
		return err
	}
	page, err := w.HistoryPage(s.ctx, run.ID, 0, 1)
	if err != nil {
		return err
	}
	out := genEventsOut{World: child.ID, Run: run.ID, Events: page.Total, Inherited: page.Inherited, Seconds: time.Since(started).Seconds()}
	return s.out(out, func(wr io.Writer) {
		fmt.Fprintf(wr, "world: %s\nrun: %s\nevents: %d\ninherited: %d\nseconds: %.1f\n", out.World, out.Run, out.Events, out.Inherited, out.Seconds)
	})
}

// growTo runs runID until its full history holds at least want events
// (reporting how far it is), with a checkpoint every 10,000 steps. A step
// records 2 or 3 events, so the last batches are sized to land close.
func (s *session) growTo(runID string, want int64, report func(done int64)) error {
	w := s.svc.Worlds
	for {
		page, err := w.HistoryPage(s.ctx, runID, 0, 1)
		if err != nil {
			return err
		}
		report(page.Total)
		if page.Total >= want {
			return nil
		}
		left := want - page.Total
		steps := min(max(left/3, 1), 50_000)
		if _, err := w.RunSteps(s.ctx, runID, world.RunOptions{Steps: int(steps), CheckpointEvery: 10_000, SaveEvery: genSaveEvery}); err != nil {
			return err
		}
	}
}

// genProgress returns a reporter of long work on stderr, printing about every
// tenth of it.
func (s *session) genProgress(total int64, what string) func(done int64) {
	last := int64(-1)
	return func(done int64) {
		if tenth := done * 10 / max(total, 1); tenth != last {
			last = tenth
			fmt.Fprintf(s.env.Stderr, "%d of %d %s\n", done, total, what)
		}
	}
}
