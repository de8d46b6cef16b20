package deliberation

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"sync"

	"ducklm/backend"
	"ducklm/backend/world"
)

// runLocks keeps two deliberations of one run in this process apart: each
// round takes the next deliberation index of the run.
var runLocks sync.Map

// Deliberate runs rounds of deliberation on a run (see Options). Each round
// records its branches, then one external-real event on the run's
// deliberation stream (Stream) with what it compared and chose; with Apply
// it then steps the parent with the chosen action. A cancelled context stops
// at once: the branches recorded stay, the round has no record.
func (s *Service) Deliberate(ctx context.Context, opt Options) (res Result, err error) {
	defer func() { err = stopped(ctx, err, len(res.Rounds)) }()
	if err := opt.Normalize(); err != nil {
		return res, err
	}
	if err := backend.CheckID(opt.RunID, backend.KindRun); err != nil {
		return res, err
	}
	mu, _ := runLocks.LoadOrStore(opt.RunID, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	run, err := s.worlds.Run(ctx, opt.RunID)
	if err != nil {
		return res, err
	}
	spec, err := s.worlds.Spec(ctx, run.WorldID)
	if err != nil {
		return res, err
	}
	if spec.Backend != world.BackendStarlark {
		return res, backend.Errorf(backend.EINVALID, "run %s is a %s run; deliberation searches forks of simulated worlds", run.ID, spec.Backend)
	}
	if run.Status.Terminal() {
		return res, backend.Errorf(backend.EINVALID, "run %s is %s; there is nothing left to deliberate (fork it to continue)", run.ID, run.Status)
	}
	res.Run = run
	cpID := opt.CheckpointID
	for r := 1; r <= opt.Rounds; r++ {
		var cp backend.Checkpoint
		if cpID != "" {
			if cp, err = s.worlds.GetCheckpoint(ctx, cpID); err != nil {
				return res, err
			}
			if err := s.checkFrom(ctx, run, cp, opt.Apply); err != nil {
				return res, err
			}
			cpID = "" // later rounds start where the parent is
		} else if cp, err = s.worlds.Checkpoint(ctx, run.ID); err != nil {
			return res, err
		}
		round, err := s.round(ctx, opt, r, spec, cp)
		if err != nil {
			return res, err
		}
		if opt.Apply {
			out, err := s.worlds.StepBecause(ctx, run.ID, round.Chosen, round.EventID)
			if err != nil {
				res.Rounds = append(res.Rounds, round)
				return res, err
			}
			round.Applied, round.AppliedAt = &out, out.Run.WorldLocalTime
			res.Run, res.Done, res.State = out.Run, out.Done, out.State
		}
		res.Rounds = append(res.Rounds, round)
		if res.Done || (!opt.UntilDone && r >= opt.Rounds) {
			break
		}
	}
	if !opt.Apply {
		res.Run, err = s.worlds.Run(ctx, opt.RunID)
	}
	return res, err
}

// stopped says why a deliberation whose context ended did not finish: the
// user cancelled it (ECANCELLED), or its caller's time ran out (ELIMIT, a
// task step's time limit). Either way the branches it recorded stay.
func stopped(ctx context.Context, err error, rounds int) error {
	if err == nil {
		return nil
	}
	switch ctx.Err() {
	case context.Canceled:
		return backend.Wrap(err, backend.ECANCELLED,
			"the deliberation was cancelled after %d finished %s; the branches it recorded stay in the lineage as hypotheses",
			rounds, plural(rounds, "round"))
	case context.DeadlineExceeded:
		return backend.Wrap(err, backend.ELIMIT,
			"the deliberation ran out of time after %d finished %s; the branches it recorded stay in the lineage as hypotheses",
			rounds, plural(rounds, "round"))
	}
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// checkFrom refuses a starting checkpoint that is not the run's (or in its
// history), and, when the choice is to be applied, one that is not the
// run's current state.
func (s *Service) checkFrom(ctx context.Context, run backend.WorldRun, cp backend.Checkpoint, apply bool) error {
	if cp.RunID != run.ID {
		return backend.Errorf(backend.EINVALID, "checkpoint %s belongs to run %s, not to run %s", cp.ID, cp.RunID, run.ID)
	}
	if apply && cp.WorldLocalTime != run.WorldLocalTime {
		return backend.Errorf(backend.EINVALID,
			"checkpoint %s is at time %d but run %s is at time %d; --apply continues the run from where it is, so deliberate from its current state (or fork it at the checkpoint first)",
			cp.ID, cp.WorldLocalTime, run.ID, run.WorldLocalTime)
	}
	return nil
}

// round searches from cp and records the round.
func (s *Service) round(ctx context.Context, opt Options, r int, spec backend.WorldSpec, cp backend.Checkpoint) (Round, error) {
	at, err := s.worlds.Assess(ctx, cp.ID)
	if err != nil {
		return Round{}, err
	}
	if !at.HasActions || !at.HasScore {
		return Round{}, backend.Errorf(backend.EINVALID,
			"world %s cannot be deliberated: its program must define actions(state) and score(state)", spec.ID)
	}
	if at.Done {
		return Round{}, backend.Errorf(backend.EINVALID, "the world is done at checkpoint %s; there is nothing to choose", cp.ID)
	}
	if len(at.Actions) == 0 {
		return Round{}, backend.Errorf(backend.EINVALID, "actions(state) offers nothing at checkpoint %s, so there is nothing to choose", cp.ID)
	}
	if need := len(at.Actions) * opt.Seeds; need > opt.Budget {
		return Round{}, backend.Errorf(backend.EINVALID,
			"a budget of %d branches cannot try each of the %d actions under %d seeds once; it needs at least %d", opt.Budget, len(at.Actions), opt.Seeds, need)
	}
	stream := Stream(cp.RunID)
	head, err := s.ledger.Head(ctx, stream)
	if err != nil {
		return Round{}, err
	}
	sr := &search{s: s, opt: opt, ctx: ctx, round: r, index: head + 1, ptime: cp.WorldLocalTime,
		seeds: roundSeeds(spec.Seed, cp.RunID, head+1, opt.Seeds), seen: map[string]*node{}, start: s.now(),
		lo: math.Inf(1), hi: math.Inf(-1)}
	sr.name = spec.Name + " / deliberation " + itoa(sr.index)
	sr.budget.Branches = opt.Budget
	k := opt.Seeds
	root := &node{next: at.Actions, value: at.Score, cps: make([]string, k), key: at.Digest}
	for i := range root.cps {
		root.cps[i] = cp.ID
	}
	sr.root, sr.seen[root.key] = root, root
	if opt.Strategy == MCTS {
		err = sr.mcts()
	} else {
		err = sr.beam()
	}
	if err != nil {
		return Round{}, err
	}
	sr.budget.WallMs = s.now().Sub(sr.start).Milliseconds()
	cands := sr.rank()
	if len(cands) == 0 || cands[0].Failed != "" {
		return Round{}, errNoChoice
	}
	round := Round{DeliberationIndex: sr.index, ParentRunID: cp.RunID, ParentWorldID: spec.ID, CheckpointID: cp.ID,
		ParentTime: cp.WorldLocalTime, Strategy: opt.Strategy, Depth: opt.Depth, Seeds: sr.seeds, Budget: sr.budget,
		Candidates: cands, Chosen: cands[0].Action, Branches: sr.branches}
	if opt.Strategy == Beam {
		round.Width = opt.Width
	}
	round.Scores = make(map[string]float64, len(sr.branches))
	for _, b := range sr.branches {
		if b.HasScore && b.Failed == "" {
			round.Scores[b.WorldID] = b.Score
		}
	}
	payload, err := json.Marshal(round)
	if err != nil {
		return Round{}, backend.Wrap(err, backend.EINTERNAL, "cannot record the round")
	}
	e := backend.Event{ID: backend.NewID(backend.KindEvent), Type: EventRound, Payload: payload, Reality: backend.ExternalReal,
		ParentTime: cp.WorldLocalTime, DeliberationIndex: sr.index, WorldLocalTime: cp.WorldLocalTime}
	if _, err := s.ledger.Append(ctx, stream, head, e); err != nil {
		return Round{}, err
	}
	round.EventID = e.ID
	return round, nil
}

// roundSeeds derives the round's K seeds from the world's seed, the run and
// the round: reproducible, shared by every candidate of the round (common
// random numbers), and new each round.
func roundSeeds(worldSeed int64, runID string, index int64, k int) []int64 {
	out := make([]int64, k)
	for i := range out {
		h := fnv.New64a()
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(worldSeed))
		h.Write(b[:])
		h.Write([]byte(runID))
		binary.BigEndian.PutUint64(b[:], uint64(index))
		h.Write(b[:])
		binary.BigEndian.PutUint64(b[:], uint64(i))
		h.Write(b[:])
		out[i] = int64(h.Sum64() & (1<<63 - 1))
	}
	return out
}

// Rounds returns the recorded rounds of a run's deliberations, oldest first.
func (s *Service) Rounds(ctx context.Context, runID string) ([]Round, error) {
	events, err := s.ledger.Query(ctx, backend.EventQuery{Stream: Stream(runID), Types: []string{EventRound}})
	if err != nil {
		return nil, err
	}
	out := make([]Round, 0, len(events))
	for _, e := range events {
		var r Round
		if err := json.Unmarshal(e.Payload, &r); err != nil {
			return nil, backend.Errorf(backend.ECORRUPT, "deliberation record %s is unreadable", e.ID)
		}
		r.EventID = e.ID
		r.AppliedAt = s.appliedAt(ctx, r)
		out = append(out, r)
	}
	return out, nil
}

// appliedLook is how many events after a round's checkpoint appliedAt
// reads: the step that applies a round comes first after it (Apply
// refuses a run that has moved), checkpoint records aside.
const appliedLook = 8

// appliedAt finds the step that took r's choice: the run's first step
// after the round's checkpoint, pointing back to the round's record. It
// answers that step's world time, or 0 when the run has not taken it.
func (s *Service) appliedAt(ctx context.Context, r Round) int64 {
	cp, err := s.worlds.GetCheckpoint(ctx, r.CheckpointID)
	if err != nil || cp.RunID != r.ParentRunID {
		return 0
	}
	events, err := s.ledger.Query(ctx, backend.EventQuery{Stream: r.ParentRunID, FromSeq: cp.LedgerSeq + 1, Limit: appliedLook})
	if err != nil {
		return 0
	}
	for _, e := range events {
		if e.CausationID == r.EventID {
			return e.WorldLocalTime
		}
	}
	return 0
}

func itoa(i int64) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// Apply takes the choice of a recorded round: it steps the parent run with
// the round's chosen action, provided the run is still where the round
// began (else the choice was made for a state that is gone).
func (s *Service) Apply(ctx context.Context, runID string, index int64) (world.StepOutcome, error) {
	if err := backend.CheckID(runID, backend.KindRun); err != nil {
		return world.StepOutcome{}, err
	}
	mu, _ := runLocks.LoadOrStore(runID, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	rounds, err := s.Rounds(ctx, runID)
	if err != nil {
		return world.StepOutcome{}, err
	}
	if index < 1 || index > int64(len(rounds)) {
		return world.StepOutcome{}, backend.Errorf(backend.ENOTFOUND, "run %s has no round of deliberation %d", runID, index)
	}
	r := rounds[index-1]
	run, err := s.worlds.Run(ctx, runID)
	if err != nil {
		return world.StepOutcome{}, err
	}
	if run.WorldLocalTime != r.ParentTime {
		return world.StepOutcome{}, backend.Errorf(backend.ECONFLICT,
			"round %d chose for time %d, but run %s is at time %d now; deliberate again", index, r.ParentTime, runID, run.WorldLocalTime)
	}
	return s.worlds.StepBecause(ctx, runID, r.Chosen, r.EventID)
}
