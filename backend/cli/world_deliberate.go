package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/river"
)

func runWorldDeliberate(s *session, args []string) error {
	fs := s.flags()
	cp := fs.String("checkpoint", "", "start from this checkpoint of the run (default: its current state)")
	strategy := fs.String("strategy", "beam", "beam or mcts")
	width := fs.Int("width", 4, "beam width")
	depth := fs.Int("depth", 10, "how many actions ahead a branch may look")
	budget := fs.Int("budget", 200, "most branches (forks) a round may record")
	seeds := fs.Int("seeds", 1, "seeds each candidate is tried under (K > 1: an expected score)")
	limit := fs.Duration("time-limit", 0, "wall time of a round's search (0: none)")
	rounds := fs.Int("rounds", 1, "rounds to run (more than one needs --apply)")
	untilDone := fs.Bool("until-done", false, "run rounds until the world is done (needs --apply)")
	apply := fs.Bool("apply", false, "step the run with each round's chosen action")
	onWorkers := fs.Int("on-workers", 0, "run branches as jobs for `ducklm worker` processes, this many at once (needs DUCKLM_DATABASE_URL)")
	id, err := s.parseID(fs, args, backend.KindRun)
	if err != nil {
		return err
	}
	roundsSet := false
	fs.Visit(func(f *flag.Flag) { roundsSet = roundsSet || f.Name == "rounds" })
	if roundsSet && *untilDone {
		return s.cmd.bad("give --rounds N or --until-done, not both")
	}
	if *cp != "" {
		if err := needID(*cp, backend.KindCheckpoint); err != nil {
			return err
		}
	}
	opt := deliberation.Options{RunID: id, CheckpointID: *cp, Strategy: deliberation.Strategy(*strategy), Width: *width,
		Depth: *depth, Budget: *budget, Seeds: *seeds, WallTime: *limit, Rounds: *rounds, UntilDone: *untilDone, Apply: *apply}
	for name, v := range map[string]int{"width": *width, "depth": *depth, "budget": *budget, "seeds": *seeds, "rounds": *rounds} {
		if v < 1 {
			return s.cmd.bad("--%s must be a positive number, not %d", name, v)
		}
	}
	if *untilDone {
		opt.Rounds = 0
	}
	if err := opt.Normalize(); err != nil {
		return s.cmd.bad("%s", strings.TrimSuffix(backend.ErrorMessage(err), "."))
	}
	if *onWorkers < 0 {
		return s.cmd.bad("--on-workers must be a positive number, not %d", *onWorkers)
	}
	var url string
	if *onWorkers > 0 {
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
	delib := s.svc.Deliberation
	if *onWorkers > 0 {
		q, err := river.NewQueue(s.ctx, url)
		if err != nil {
			return err
		}
		defer q.Close()
		delib, opt.Workers = delib.WithEvaluator(q), *onWorkers
	}
	res, err := delib.Deliberate(s.ctx, opt)
	if err != nil && len(res.Rounds) == 0 {
		return err
	}
	if perr := s.out(res, func(w io.Writer) { printDeliberation(w, res) }); perr != nil {
		return perr
	}
	return err
}

func printDeliberation(w io.Writer, res deliberation.Result) {
	for _, r := range res.Rounds {
		b := r.Budget
		fmt.Fprintf(w, "round %d at time %d: %s", r.DeliberationIndex, r.ParentTime, r.Strategy)
		if r.Width > 0 {
			fmt.Fprintf(w, " width %d", r.Width)
		}
		fmt.Fprintf(w, ", depth %d, %d seed(s); %d of %d branches, %d steps, %d duplicate(s), deepest %d, %d ms (%s)\n",
			r.Depth, len(r.Seeds), b.Used, b.Branches, b.Steps, b.Deduplicated, b.Depth, b.WallMs, stopWhy(b.Stopped))
		for i, c := range r.Candidates {
			line := make([]string, len(c.Line))
			for j, a := range c.Line {
				line[j] = compact(a)
			}
			fmt.Fprintf(w, "  %d. %-12s score %-8s mean %-8s visits %-5d line %s\n", i+1, compact(c.Action),
				num(c.Score), num(c.Mean), c.Visits, oneLine(strings.Join(line, " "), 60))
			if c.Failed != "" {
				fmt.Fprintf(w, "     failed: %s\n", c.Failed)
			} else if len(c.Branches) > 0 {
				fmt.Fprintf(w, "     branches: %s\n", strings.Join(c.Branches, " "))
			}
		}
		fmt.Fprintf(w, "  chosen: %s", compact(r.Chosen))
		if r.Applied != nil {
			fmt.Fprintf(w, " (applied: time %d, %s)", r.Applied.Run.WorldLocalTime, r.Applied.Run.Status)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "run %s: time %d, %s", res.Run.ID, res.Run.WorldLocalTime, res.Run.Status)
	if res.Done {
		fmt.Fprint(w, ", done")
	}
	fmt.Fprintln(w)
}

func stopWhy(s string) string {
	switch s {
	case "budget":
		return "budget spent"
	case "time":
		return "time limit"
	case "exhausted":
		return "nothing left within the depth"
	}
	return s
}

func num(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}
