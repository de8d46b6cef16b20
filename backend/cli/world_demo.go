package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"ducklm/backend"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// The Branching Grid demo: one parent run, a checkpoint, two children forked
// from it with different divergences, each run on to the goal or a step cap.
const (
	demoSeed     = 7
	demoPrefix   = 6  // parent steps before the checkpoint
	demoCap      = 60 // child steps at most
	demoCpEvery  = 10 // child checkpoint interval
	demoGridName = "branching grid demo"
)

// demoChildSpec is how one demo child diverges.
type demoChildSpec struct {
	label, name string
	divergence  backend.DivergenceType
	delta       string
	policy      backend.SeedPolicy
}

var demoChildren = []demoChildSpec{
	{"A", "grid without noise", backend.DivergeStatePatch, `{"params":{"noise":0}}`, backend.SeedInherit},
	{"B", "grid with noise 0.6", backend.DivergeStatePatch, `{"params":{"noise":0.6}}`, backend.SeedInherit},
}

// demoOut is what `world demo` prints.
type demoOut struct {
	ParentWorld    string               `json:"parentWorld"`
	ParentRun      string               `json:"parentRun"`
	Checkpoint     string               `json:"checkpoint"`
	CheckpointTime int64                `json:"checkpointTime"`
	SharedPrefix   int                  `json:"sharedPrefix"` // events both children's histories start with
	Parent         demoTerminal         `json:"parent"`
	Children       []demoChild          `json:"children"`
	Verified       map[string]demoCheck `json:"verified"`
}

type demoChild struct {
	Label      string                 `json:"label"`
	World      string                 `json:"world"`
	Run        string                 `json:"run"`
	Fork       string                 `json:"fork"`
	Divergence backend.DivergenceType `json:"divergence"`
	Delta      json.RawMessage        `json:"delta"`
	SeedPolicy backend.SeedPolicy     `json:"seedPolicy"`
	Seed       int64                  `json:"seed"`
	Terminal   demoTerminal           `json:"terminal"`
}

// demoTerminal is where a run ended up.
type demoTerminal struct {
	Pos    [2]int            `json:"pos"`
	Steps  int               `json:"steps"`
	Done   bool              `json:"done"`
	Status backend.RunStatus `json:"status"`
	Time   int64             `json:"time"`
}

type demoCheck struct {
	OK          bool   `json:"ok"`
	Events      int    `json:"events"`
	Steps       int    `json:"steps"`
	Checkpoints int    `json:"checkpoints"`
	Message     string `json:"message,omitempty"`
}

func runWorldDemo(s *session, args []string) error {
	fs := s.flags()
	if _, err := s.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	w := s.svc.Worlds
	spec, run, err := w.Create(s.ctx, world.NewWorld{Name: demoGridName, Program: starlark.BranchingGrid, Seed: demoSeed})
	if err != nil {
		return err
	}
	out := demoOut{ParentWorld: spec.ID, ParentRun: run.ID, Verified: map[string]demoCheck{}}
	var last world.StepOutcome
	for range demoPrefix {
		if last, err = w.Step(s.ctx, run.ID, nil); err != nil {
			return err
		}
	}
	cp, err := w.Checkpoint(s.ctx, run.ID)
	if err != nil {
		return err
	}
	out.Checkpoint, out.CheckpointTime = cp.ID, cp.WorldLocalTime
	if out.Parent, err = terminal(last.State, last.Run); err != nil {
		return err
	}

	var histories [][]backend.Event
	for _, c := range demoChildren {
		f, child, childRun, err := w.Fork(s.ctx, world.ForkRequest{
			CheckpointID: cp.ID, Divergence: c.divergence, Delta: json.RawMessage(c.delta), SeedPolicy: c.policy, Name: c.name,
		})
		if err != nil {
			return err
		}
		res, err := w.RunSteps(s.ctx, childRun.ID, world.RunOptions{Steps: demoCap, CheckpointEvery: demoCpEvery})
		if err != nil {
			return err
		}
		end, err := terminal(res.State, res.Run)
		if err != nil {
			return err
		}
		out.Children = append(out.Children, demoChild{
			Label: c.label, World: child.ID, Run: childRun.ID, Fork: f.ID, Divergence: f.Divergence,
			Delta: f.Delta, SeedPolicy: f.SeedPolicy, Seed: child.Seed, Terminal: end,
		})
		h, err := w.History(s.ctx, childRun.ID)
		if err != nil {
			return err
		}
		histories = append(histories, h)
	}
	out.SharedPrefix = sharedPrefix(histories[0], histories[1])

	runs := map[string]string{"parent": run.ID}
	for _, c := range out.Children {
		runs["child "+c.Label] = c.Run
	}
	for label, id := range runs {
		rep, err := w.Verify(s.ctx, id)
		if err != nil {
			return err
		}
		check := demoCheck{OK: rep.OK, Events: rep.Events, Steps: rep.Steps, Checkpoints: rep.Checkpoints}
		if rep.Divergence != nil {
			check.Message = fmt.Sprintf("seq %d of %s: %s", rep.Divergence.Seq, rep.Divergence.Stream, rep.Divergence.Message)
		}
		out.Verified[label] = check
	}
	if err := s.out(out, func(wr io.Writer) { printDemo(wr, out) }); err != nil {
		return err
	}
	for _, c := range out.Verified {
		if !c.OK {
			return errExit{ExitFail}
		}
	}
	return nil
}

// terminal reads a Branching Grid state's position and step count.
func terminal(state json.RawMessage, run backend.WorldRun) (demoTerminal, error) {
	var st struct {
		Pos   [2]int `json:"pos"`
		Steps int    `json:"steps"`
	}
	if err := json.Unmarshal(state, &st); err != nil {
		return demoTerminal{}, backend.Wrap(err, backend.EINTERNAL, "the Branching Grid state has an unexpected shape")
	}
	return demoTerminal{Pos: st.Pos, Steps: st.Steps, Done: run.Status == backend.RunCompleted, Status: run.Status, Time: run.WorldLocalTime}, nil
}

// sharedPrefix counts the leading events two histories have in common, by id.
func sharedPrefix(a, b []backend.Event) int {
	n := 0
	for n < len(a) && n < len(b) && a[n].ID == b[n].ID {
		n++
	}
	return n
}

func printDemo(w io.Writer, out demoOut) {
	fmt.Fprintf(w, "Branching Grid demo (seed %d): %d parent steps, a checkpoint, two forks, each child run to the goal or %d steps\n\n",
		demoSeed, demoPrefix, demoCap)
	fmt.Fprintf(w, "parent world: %s\nparent run: %s\n", out.ParentWorld, out.ParentRun)
	fmt.Fprintf(w, "checkpoint: %s\ncheckpoint time: %d\n", out.Checkpoint, out.CheckpointTime)
	fmt.Fprintf(w, "shared prefix: %d events\n", out.SharedPrefix)
	fmt.Fprintf(w, "parent state: %s\n", describe(out.Parent))
	for _, c := range out.Children {
		fmt.Fprintf(w, "\nchild %s world: %s\nchild %s run: %s\nchild %s fork: %s\n", c.Label, c.World, c.Label, c.Run, c.Label, c.Fork)
		fmt.Fprintf(w, "child %s divergence: %s %s (seed policy %s, seed %d)\n", c.Label, c.Divergence, compact(c.Delta), c.SeedPolicy, c.Seed)
		fmt.Fprintf(w, "child %s terminal: %s\n", c.Label, describe(c.Terminal))
	}
	fmt.Fprintln(w)
	for _, label := range []string{"parent", "child A", "child B"} {
		c := out.Verified[label]
		if c.OK {
			fmt.Fprintf(w, "verified %s: %d events, %d steps, %d checkpoints\n", label, c.Events, c.Steps, c.Checkpoints)
		} else {
			fmt.Fprintf(w, "DIVERGED %s: %s\n", label, c.Message)
		}
	}
}

func describe(t demoTerminal) string {
	return fmt.Sprintf("pos [%d,%d], steps %d, done %t, status %s", t.Pos[0], t.Pos[1], t.Steps, t.Done, t.Status)
}
