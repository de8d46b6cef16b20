package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/starlark"
	"ducklm/backend/world"
)

// The read-only `ducklm world` sub-commands: they never take the data
// directory lock, so they work while the window is open.

func runWorldLs(s *session, args []string) error {
	fs := s.flags()
	branches := fs.Bool("branches", false, "list deliberation branches too (a search records hundreds)")
	if _, err := s.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	dag, err := s.svc.Worlds.Lineage(s.ctx)
	if err != nil {
		return err
	}
	nodes, left := dag.Nodes, 0
	if !*branches {
		nodes = make([]world.Node, 0, len(dag.Nodes))
		for _, n := range dag.Nodes {
			if n.Round() > 0 { // a deliberation branch (backend.BranchRound)
				left++
				continue
			}
			nodes = append(nodes, n)
		}
	}
	return s.out(nodes, func(w io.Writer) {
		if len(dag.Nodes) == 0 {
			fmt.Fprintln(w, "no worlds yet; create one with `ducklm world new --example branching_grid` or `ducklm world demo`")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "WORLD\tNAME\tDOMAIN\tPARENT\tRUNS\tSTATUS\tTIME")
		defer func() {
			if left > 0 {
				what := "branches are"
				if left == 1 {
					what = "branch is"
				}
				fmt.Fprintf(w, "%s deliberation %s not listed (--branches lists them)\n", groupDigits(int64(left)), what)
			}
		}()
		for _, n := range nodes {
			status, at := "-", "-"
			if n.LatestRun != nil {
				status, at = string(n.LatestRun.Status), fmt.Sprint(n.LatestRun.WorldLocalTime)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", n.World.ID, n.World.Name, n.World.Domain, orDash(n.World.ParentWorldID), n.Runs, status, at)
		}
		tw.Flush()
	})
}

// groupDigits writes n with a comma every three digits: 1,000,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// mib writes a byte count in MiB (or bytes when it is not whole MiB).
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// showOut is what `world show` prints: a world, how it was forked, and its
// runs (only the one asked for when a run id was given) with their checkpoints.
type showOut struct {
	World backend.WorldSpec `json:"world"`
	// Limits are what every call of a simulated world's program runs
	// under (the memory limit is the setting worldMemoryMiB).
	Limits *starlark.Limits `json:"limits,omitempty"`
	Fork   *backend.Fork    `json:"fork,omitempty"`
	ForkAt int64            `json:"forkAt,omitempty"` // the parent's world-local time at the fork
	Runs   []runDetail      `json:"runs"`
}

type runDetail struct {
	Run         backend.WorldRun     `json:"run"`
	Checkpoints []backend.Checkpoint `json:"checkpoints"`
	// Rounds sums up the run's rounds of deliberation, oldest first
	// (`ducklm world deliberate` prints one whole).
	Rounds []roundSummary `json:"rounds,omitempty"`
}

// roundSummary is one recorded round of deliberation as world show lists it.
type roundSummary struct {
	Index      int64           `json:"deliberationIndex"`
	ParentTime int64           `json:"parentTime"`
	Strategy   string          `json:"strategy"`
	Used       int             `json:"used"`
	Budget     int             `json:"budget"`
	Chosen     json.RawMessage `json:"chosen"`
	// Score is the chosen first action's best score; Failed says why it has none.
	Score  float64 `json:"score"`
	Failed string  `json:"failed,omitempty"`
	Event  string  `json:"event"`
}

func summarizeRounds(rounds []deliberation.Round) []roundSummary {
	out := make([]roundSummary, len(rounds))
	for i, r := range rounds {
		out[i] = roundSummary{Index: r.DeliberationIndex, ParentTime: r.ParentTime, Strategy: string(r.Strategy),
			Used: r.Budget.Used, Budget: r.Budget.Branches, Chosen: r.Chosen, Event: r.EventID}
		if len(r.Candidates) > 0 {
			out[i].Score, out[i].Failed = r.Candidates[0].Score, r.Candidates[0].Failed
		}
	}
	return out
}

func runWorldShow(s *session, args []string) error {
	fs := s.flags()
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	kind, err := backend.KindOf(pos[0])
	if err != nil {
		return err
	}
	if kind != backend.KindWorld && kind != backend.KindRun {
		return backend.Errorf(backend.EINVALID, "%q is a %s id, but world show takes a world or run id", pos[0], kind)
	}
	if err := s.open(); err != nil {
		return err
	}
	var out showOut
	var runs []backend.WorldRun
	switch kind {
	case backend.KindWorld:
		if out.World, err = s.svc.Worlds.Spec(s.ctx, pos[0]); err != nil {
			return err
		}
		if runs, err = s.svc.Worlds.Runs(s.ctx, out.World.ID); err != nil {
			return err
		}
	case backend.KindRun:
		run, err := s.svc.Worlds.Run(s.ctx, pos[0])
		if err != nil {
			return err
		}
		if out.World, err = s.svc.Worlds.Spec(s.ctx, run.WorldID); err != nil {
			return err
		}
		runs = []backend.WorldRun{run}
	}
	if out.World.Backend == world.BackendStarlark {
		l := s.svc.Worlds.Limits()
		out.Limits = &l
	}
	if out.World.ForkID != "" {
		f, err := s.svc.Worlds.ForkOf(s.ctx, out.World.ID)
		if err != nil {
			return err
		}
		cp, err := s.svc.Worlds.GetCheckpoint(s.ctx, f.CheckpointID)
		if err != nil {
			return err
		}
		out.Fork, out.ForkAt = &f, cp.WorldLocalTime
	}
	out.Runs = make([]runDetail, len(runs))
	for i, r := range runs {
		cps, err := s.svc.Worlds.Checkpoints(s.ctx, r.ID)
		if err != nil {
			return err
		}
		out.Runs[i] = runDetail{Run: r, Checkpoints: cps}
		if out.World.Domain == backend.DomainSimulated {
			rounds, err := s.svc.Deliberation.Rounds(s.ctx, r.ID)
			if err != nil {
				return err
			}
			out.Runs[i].Rounds = summarizeRounds(rounds)
		}
	}
	return s.out(out, func(w io.Writer) { printShow(w, out) })
}

func printShow(w io.Writer, out showOut) {
	sp := out.World
	program := sp.Program.Digest
	if program == "" {
		// A task world recorded since its request is said once: the
		// request is its run's first event.
		program = "- (the task is its run's first event, task.received)"
	}
	fmt.Fprintf(w, "world: %s\nname: %s\ndomain: %s\nbackend: %s\nprogram: %s\nseed: %d\nparams: %s\ncreated: %s\n",
		sp.ID, sp.Name, sp.Domain, sp.Backend, program, sp.Seed, compact(sp.Params), sp.CreatedAt.Format("2006-01-02 15:04:05Z"))
	if l := out.Limits; l != nil {
		fmt.Fprintf(w, "limits: %s execution steps a call, %s of state, %s of memory (the setting worldMemoryMiB)\n",
			groupDigits(int64(l.MaxSteps)), mib(int64(l.MaxStateBytes)), mib(l.MaxMemoryBytes))
	}
	if f := out.Fork; f != nil {
		fmt.Fprintf(w, "fork: %s\nparent world: %s\nparent run: %s\nfork checkpoint: %s\nfork time: %d\n",
			f.ID, f.ParentWorldID, f.ParentRunID, f.CheckpointID, out.ForkAt)
		fmt.Fprintf(w, "divergence: %s\ndelta: %s\nseed policy: %s\n", f.Divergence, compact(f.Delta), f.SeedPolicy)
	}
	for _, d := range out.Runs {
		r := d.Run
		fmt.Fprintf(w, "\nrun: %s\n  status: %s\n  time: %d\n", r.ID, r.Status, r.WorldLocalTime)
		if r.BaseRunID != "" {
			fmt.Fprintf(w, "  base: %s up to seq %d\n  parent time: %d\n  deliberation index: %d\n", r.BaseRunID, r.BaseSeq, r.ParentTime, r.DeliberationIndex)
		}
		fmt.Fprintf(w, "  latest checkpoint: %s\n", orDash(r.LatestCheckpointID))
		if r.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", r.Error)
		}
		fmt.Fprintf(w, "  checkpoints (%d):\n", len(d.Checkpoints))
		for _, cp := range d.Checkpoints {
			fmt.Fprintf(w, "    %s  t=%d  seq %d  %s\n", cp.ID, cp.WorldLocalTime, cp.LedgerSeq, cp.Blob.Digest)
		}
		if len(d.Rounds) > 0 {
			fmt.Fprintf(w, "  deliberations (%d):\n", len(d.Rounds))
			for _, r := range d.Rounds {
				score := "score " + num(r.Score)
				if r.Failed != "" {
					score = "its branches failed"
				}
				fmt.Fprintf(w, "    round %d at t=%d: %s, %d of %d branches, chose %s (%s)\n", r.Index, r.ParentTime, r.Strategy, r.Used, r.Budget, compact(r.Chosen), score)
			}
		}
	}
}

// eventOut is an event with whether it came from an ancestor's stream.
type eventOut struct {
	backend.Event
	Inherited bool `json:"inherited"`
}

func runWorldEvents(s *session, args []string) error {
	fs := s.flags()
	full := fs.Bool("full", false, "include inherited history")
	types := fs.String("type", "", "event types, comma-separated")
	limit := fs.Int("limit", 0, "at most N events, oldest first")
	pos, err := s.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	runID := pos[0]
	if err := needID(runID, backend.KindRun); err != nil {
		return err
	}
	if *limit < 0 {
		return s.cmd.bad("--limit must not be negative")
	}
	if err := s.open(); err != nil {
		return err
	}
	if _, err := s.svc.Worlds.Run(s.ctx, runID); err != nil {
		return err
	}
	var want []string
	for _, t := range strings.Split(*types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			want = append(want, t)
		}
	}
	var events []backend.Event
	if *full {
		all, err := s.svc.Worlds.History(s.ctx, runID)
		if err != nil {
			return err
		}
		for _, e := range all {
			if (len(want) == 0 || contains(want, e.Type)) && (*limit == 0 || len(events) < *limit) {
				events = append(events, e)
			}
		}
	} else if events, err = s.svc.Ledger.Query(s.ctx, backend.EventQuery{Stream: runID, Types: want, Limit: *limit}); err != nil {
		return err
	}
	out := make([]eventOut, len(events))
	for i, e := range events {
		out[i] = eventOut{Event: e, Inherited: e.Stream != runID}
	}
	return s.out(out, func(w io.Writer) {
		if len(out) == 0 {
			fmt.Fprintln(w, "no events")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ORIGIN\tSEQ\tTYPE\tTIME\tPAYLOAD")
		for _, e := range out {
			origin := "own"
			if e.Inherited {
				origin = "inherited from " + e.Stream
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\n", origin, e.Seq, e.Type, e.WorldLocalTime, clip(compact(e.Payload), 160))
		}
		tw.Flush()
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lineageOut is what `world lineage WORLD` prints.
type lineageOut struct {
	World       backend.WorldSpec   `json:"world"`
	Ancestors   []backend.WorldSpec `json:"ancestors"`
	Descendants []backend.WorldSpec `json:"descendants"`
}

func runWorldLineage(s *session, args []string) error {
	fs := s.flags()
	pos, err := s.parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		if err := needID(pos[0], backend.KindWorld); err != nil {
			return err
		}
	}
	if err := s.open(); err != nil {
		return err
	}
	dag, err := s.svc.Worlds.Lineage(s.ctx)
	if err != nil {
		return err
	}
	t := newTree(dag)
	if len(pos) == 0 {
		return s.out(dag, func(w io.Writer) {
			if len(dag.Nodes) == 0 {
				fmt.Fprintln(w, "no worlds yet")
			}
			for _, root := range t.roots {
				t.print(w, root, 0)
			}
		})
	}
	var out lineageOut
	if out.Ancestors, err = s.svc.Worlds.Ancestors(s.ctx, pos[0]); err != nil {
		return err
	}
	if out.Descendants, err = s.svc.Worlds.Descendants(s.ctx, pos[0]); err != nil {
		return err
	}
	out.World = t.nodes[pos[0]].World
	return s.out(out, func(w io.Writer) {
		fmt.Fprintf(w, "world: %s\n", out.World.ID)
		fmt.Fprintf(w, "ancestors (%d, parent first):\n", len(out.Ancestors))
		for _, a := range out.Ancestors {
			fmt.Fprintf(w, "  %s\n", t.label(a.ID))
		}
		if len(out.Ancestors) == 0 {
			fmt.Fprintln(w, "  none (a root world)")
		}
		fmt.Fprintf(w, "descendants (%d):\n", len(out.Descendants))
		for _, c := range t.children[out.World.ID] {
			t.print(w, c, 1)
		}
		if len(out.Descendants) == 0 {
			fmt.Fprintln(w, "  none")
		}
	})
}

// tree is the lineage DAG arranged for printing: every world has at most
// one parent, so the DAG of worlds is a forest.
type tree struct {
	nodes    map[string]world.Node
	edges    map[string]world.Edge // by child world id
	children map[string][]string
	roots    []string
}

func newTree(dag world.Lineage) tree {
	t := tree{nodes: map[string]world.Node{}, edges: map[string]world.Edge{}, children: map[string][]string{}}
	for _, n := range dag.Nodes {
		t.nodes[n.World.ID] = n
	}
	for _, e := range dag.Edges {
		t.edges[e.Fork.ChildWorldID] = e
	}
	for _, n := range dag.Nodes { // oldest first, so children keep their creation order
		p := n.World.ParentWorldID
		if _, ok := t.nodes[p]; ok {
			t.children[p] = append(t.children[p], n.World.ID)
		} else {
			t.roots = append(t.roots, n.World.ID)
		}
	}
	return t
}

// label is one world's line: id, name and its latest run.
func (t tree) label(id string) string {
	n := t.nodes[id]
	runs := "no runs"
	if n.LatestRun != nil {
		runs = fmt.Sprintf("%d run(s), latest %s at t=%d", n.Runs, n.LatestRun.Status, n.LatestRun.WorldLocalTime)
	}
	return fmt.Sprintf("%s %s (%s)", id, n.World.Name, runs)
}

func (t tree) print(w io.Writer, id string, depth int) {
	edge := ""
	if e, ok := t.edges[id]; ok && depth > 0 {
		edge = fmt.Sprintf("[%s @ t=%d] ", e.Fork.Divergence, e.At)
	}
	fmt.Fprintf(w, "%s%s%s\n", strings.Repeat("  ", depth), edge, t.label(id))
	for _, c := range t.children[id] {
		t.print(w, c, depth+1)
	}
}

// maxDiffShown bounds the events shown per side in text output.
const maxDiffShown = 5

func runWorldDiff(s *session, args []string) error {
	fs := s.flags()
	pos, err := s.parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	for _, id := range pos {
		if err := needID(id, backend.KindRun); err != nil {
			return err
		}
	}
	if err := s.open(); err != nil {
		return err
	}
	d, err := s.svc.Worlds.Diff(s.ctx, pos[0], pos[1])
	if err != nil {
		return err
	}
	return s.out(d, func(w io.Writer) {
		fmt.Fprintf(w, "a: %s\nb: %s\ncommon world: %s\n", d.A, d.B, orDash(d.CommonWorldID))
		if d.ForkPoint != nil {
			fmt.Fprintf(w, "fork point: %s seq %d\n", d.ForkPoint.Stream, d.ForkPoint.ToSeq)
		}
		fmt.Fprintf(w, "shared events: %d\n", d.SharedEvents)
		fmt.Fprintf(w, "state changes (%d):\n", len(d.StateChanges))
		for _, c := range d.StateChanges {
			fmt.Fprintf(w, "  %s %s: %s → %s\n", c.Path, c.Kind, jsonOrNone(c.A), jsonOrNone(c.B))
		}
		for _, side := range []struct {
			name, run string
			events    []backend.Event
			total     int
		}{{"a", d.A, d.EventsA, d.EventsATotal}, {"b", d.B, d.EventsB, d.EventsBTotal}} {
			fmt.Fprintf(w, "%s after the fork: %d events\n", side.name, side.total)
			for i, e := range side.events {
				if i == maxDiffShown {
					fmt.Fprintf(w, "  … %d more\n", side.total-maxDiffShown)
					break
				}
				fmt.Fprintf(w, "  %d %s t=%d %s\n", e.Seq, e.Type, e.WorldLocalTime, clip(compact(e.Payload), 120))
			}
		}
	})
}

func jsonOrNone(raw []byte) string {
	if len(raw) == 0 {
		return "(none)"
	}
	return compact(raw)
}

func runWorldVerify(s *session, args []string) error {
	fs := s.flags()
	id, err := s.parseID(fs, args, backend.KindRun)
	if err != nil {
		return err
	}
	if err := s.open(); err != nil {
		return err
	}
	rep, err := s.svc.Worlds.Verify(s.ctx, id)
	if err != nil {
		return err
	}
	if err := s.out(rep, func(w io.Writer) {
		if rep.OK {
			fmt.Fprintf(w, "verified: %d events, %d steps, %d checkpoints\n", rep.Events, rep.Steps, rep.Checkpoints)
			return
		}
		d := rep.Divergence
		fmt.Fprintf(w, "diverged: %s seq %d (%s): %s\n  expected: %s\n  actual: %s\n",
			d.Stream, d.Seq, d.Type, d.Message, orDash(d.Expected), orDash(d.Actual))
	}); err != nil {
		return err
	}
	if !rep.OK {
		return errExit{ExitFail}
	}
	return nil
}
