package deliberation

import (
	"context"
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/world"
)

// Evaluator runs one branch: fork a checkpoint, apply actions, score the
// end, record it whole. It is the one interface between the search and the
// worlds: *world.Service runs branches in this process; a queue of jobs for
// worker processes can stand in its place. Calls may run concurrently.
type Evaluator interface {
	Branch(ctx context.Context, req world.BranchRequest) (world.BranchResult, error)
}

var _ Evaluator = (*world.Service)(nil)

// Worlds is what a deliberation needs of the world service besides branches.
type Worlds interface {
	Evaluator
	Run(ctx context.Context, runID string) (backend.WorldRun, error)
	Spec(ctx context.Context, worldID string) (backend.WorldSpec, error)
	Checkpoint(ctx context.Context, runID string) (backend.Checkpoint, error)
	GetCheckpoint(ctx context.Context, id string) (backend.Checkpoint, error)
	Assess(ctx context.Context, checkpointID string) (world.Assessment, error)
	// StepBecause applies a round's choice, its step pointing back to the
	// round's record.
	StepBecause(ctx context.Context, runID string, action json.RawMessage, causationID string) (world.StepOutcome, error)
}

// Ledger is where a round's record goes.
type Ledger interface {
	Append(ctx context.Context, stream string, expect int64, events ...backend.Event) ([]backend.Event, error)
	Head(ctx context.Context, stream string) (int64, error)
	Query(ctx context.Context, q backend.EventQuery) ([]backend.Event, error)
}

// Strategy names a search.
type Strategy string

// The strategies.
const (
	// Beam keeps the Width best nodes of each depth and expands each by
	// every action it offers.
	Beam Strategy = "beam"
	// MCTS is Monte-Carlo tree search with UCT selection; a selected leaf
	// is expanded by all its actions at once and each new node is valued by
	// the program's score (no random rollouts).
	MCTS Strategy = "mcts"
)

// EventRound is the type of a round's record.
const EventRound = "deliberation.round"

// Limits on options, so a typo cannot ask for a search that never ends.
const (
	MaxDepth    = 200
	MaxBudget   = 100_000
	MaxSeeds    = 64
	MaxWidth    = 1_000
	MaxRounds   = 10_000
	defaultUCTC = 1.4
)

// Options describe a deliberation.
type Options struct {
	// RunID is the parent run: a simulated world's run.
	RunID string
	// CheckpointID is where the first round starts; empty takes a
	// checkpoint of the run's current state. Later rounds always start at
	// the parent's state after the action applied before.
	CheckpointID string
	Strategy     Strategy
	// Width is the beam's width (beam only; default 4).
	Width int
	// Depth is the horizon: how many actions past the checkpoint a branch
	// may look (default 10).
	Depth int
	// Budget is the most branches (forks) a round may record (default 200).
	Budget int
	// Seeds is K, the random seeds each candidate is tried under: 1 gives
	// every branch of the round the same seed (common random numbers); K>1
	// averages K seeds, shared by all candidates, for an expected score.
	Seeds int
	// WallTime bounds each round's search (0: no bound); the round ends
	// with what it found when the time is up.
	WallTime time.Duration
	// Rounds is how many rounds to run (default 1); more than one needs
	// Apply. UntilDone runs rounds until the world is done (at most Rounds
	// when set, else MaxRounds).
	Rounds    int
	UntilDone bool
	// Apply steps the parent with each round's chosen action.
	Apply bool
	// Workers bounds branches evaluated at once (default: the cores).
	Workers int
	// Exploration is UCT's constant (default 1.4).
	Exploration float64
	// Progress, when set, hears about every batch of branches.
	Progress func(Progress)
}

// Progress is how far a deliberation is.
type Progress struct {
	Round             int   `json:"round"` // 1-based, within this deliberation
	DeliberationIndex int64 `json:"deliberationIndex"`
	Branches          int   `json:"branches"` // recorded in this round
	Budget            int   `json:"budget"`
	Steps             int   `json:"steps"`
	Deduplicated      int   `json:"deduplicated"`
	ElapsedMs         int64 `json:"elapsedMs"`
	// Added are the branches of the last batch, for drawing the tree live.
	Added []Branch `json:"added,omitempty"`
}

// Branch is one recorded branch as a picture of the tree needs it.
type Branch struct {
	WorldID   string          `json:"worldId"`
	RunID     string          `json:"runId"`
	Parent    string          `json:"parent"` // the world it forked
	Action    json.RawMessage `json:"action"`
	Depth     int             `json:"depth"`
	Seed      int             `json:"seed"` // which of the K seeds
	Score     float64         `json:"score"`
	HasScore  bool            `json:"hasScore"`
	Done      bool            `json:"done"`
	Failed    string          `json:"failed,omitempty"`
	Duplicate bool            `json:"duplicate,omitempty"`
}

// Candidate is a first action the round tried, with what its branches found.
type Candidate struct {
	Action json.RawMessage `json:"action"`
	// Score is the best value found under this action: the mean over the
	// seeds of score(state), at the best node of its subtree.
	Score float64 `json:"score"`
	// Mean is the average value of every node under it (MCTS's estimate).
	Mean float64 `json:"mean"`
	// Visits counts the nodes evaluated under it, itself included.
	Visits int `json:"visits"`
	// Line is the actions of the line to take, this one first: to the node
	// under this action with the best value, one where the world is done
	// before any other, else the deepest (without noise every node along a
	// best path ties, and the deepest says the most of the way).
	Line []json.RawMessage `json:"line"`
	// Branches are the worlds of this action's own branches (one per seed);
	// BestBranches those at the end of the best line.
	Branches     []string `json:"branches"`
	BestBranches []string `json:"bestBranches"`
	// State is the state at the end of the best line (first seed).
	State  json.RawMessage `json:"state,omitempty"`
	Failed string          `json:"failed,omitempty"`
}

// Budget is what a round spent.
type Budget struct {
	Branches     int   `json:"branches"` // the round's limit
	Used         int   `json:"used"`     // branches recorded
	Steps        int   `json:"steps"`    // world steps simulated
	Deduplicated int   `json:"deduplicated"`
	Depth        int   `json:"depth"` // deepest node reached
	WallMs       int64 `json:"wallMs"`
	// Stopped says why the search ended: "budget" (every branch of it
	// recorded), "time" (the time limit), "exhausted" (nothing left to
	// expand within the depth). A cancelled round has no record.
	Stopped string `json:"stopped"`
}

// Round is the record of one round: the payload of its event.
type Round struct {
	EventID           string          `json:"eventId,omitempty"`
	DeliberationIndex int64           `json:"deliberationIndex"`
	ParentRunID       string          `json:"parentRunId"`
	ParentWorldID     string          `json:"parentWorldId"`
	CheckpointID      string          `json:"checkpointId"`
	ParentTime        int64           `json:"parentTime"`
	Strategy          Strategy        `json:"strategy"`
	Width             int             `json:"width,omitempty"`
	Depth             int             `json:"depth"`
	Seeds             []int64         `json:"seeds"`
	Budget            Budget          `json:"budget"`
	Candidates        []Candidate     `json:"candidates"`
	Chosen            json.RawMessage `json:"chosen"`
	// Scores is each scored branch's score by its world: what a drawing of
	// the search colours it by (a failed branch has none).
	Scores map[string]float64 `json:"scores,omitempty"`
	// Branches lists every branch recorded, for the tree (not in the
	// event: the lineage holds them).
	Branches []Branch `json:"-"`
	// Applied is what applying the chosen action did (nil without Apply).
	Applied *world.StepOutcome `json:"-"`
	// AppliedAt is the run's world time after it took the round's choice
	// (its step points back to the round's record); 0 while it has not.
	// Not in the record: Rounds and Deliberate fill it in.
	AppliedAt int64 `json:"appliedAt,omitempty"`
}

// Result is what a deliberation did.
type Result struct {
	Rounds []Round          `json:"rounds"`
	Run    backend.WorldRun `json:"run"`
	Done   bool             `json:"done"`
	State  json.RawMessage  `json:"state,omitempty"`
	// Cancelled says, for a deliberation the user cancelled, that it stopped
	// and what it kept; set by a caller that answers a cancel as a result
	// (api.Deliberate), empty otherwise.
	Cancelled string `json:"cancelled,omitempty"`
}

// Service runs deliberations.
type Service struct {
	worlds Worlds
	eval   Evaluator
	ledger Ledger
	now    func() time.Time
}

// New returns the deliberation service; branches run through worlds.Branch.
func New(worlds Worlds, ledger Ledger) *Service {
	return &Service{worlds: worlds, eval: worlds, ledger: ledger, now: time.Now}
}

// WithEvaluator returns a copy of s whose branches run through eval.
func (s *Service) WithEvaluator(eval Evaluator) *Service {
	c := *s
	c.eval = eval
	return &c
}

// Stream returns the ledger stream of a run's deliberations: external-real
// facts, one event per round, its seq the round's deliberation index.
func Stream(runID string) string {
	return "dlb_" + strings.TrimPrefix(runID, string(backend.KindRun)+"_")
}

// Normalize fills in the defaults and checks every option but the ids, so
// a caller can refuse bad input before it opens anything.
func (o *Options) Normalize() error {
	if o.Strategy == "" {
		o.Strategy = Beam
	}
	if o.Strategy != Beam && o.Strategy != MCTS {
		return backend.Errorf(backend.EINVALID, "unknown strategy %q (use beam or mcts)", o.Strategy)
	}
	check := func(name string, v *int, def, max int) error {
		if *v == 0 {
			*v = def
		}
		if *v < 1 || *v > max {
			return backend.Errorf(backend.EINVALID, "%s must be from 1 to %d, not %d", name, max, *v)
		}
		return nil
	}
	if err := check("the width", &o.Width, 4, MaxWidth); err != nil {
		return err
	}
	if err := check("the depth", &o.Depth, 10, MaxDepth); err != nil {
		return err
	}
	if err := check("the budget", &o.Budget, 200, MaxBudget); err != nil {
		return err
	}
	if err := check("the number of seeds", &o.Seeds, 1, MaxSeeds); err != nil {
		return err
	}
	rounds := o.Rounds
	if err := check("the number of rounds", &o.Rounds, 1, MaxRounds); err != nil {
		return err
	}
	if o.UntilDone && rounds == 0 {
		o.Rounds = MaxRounds
	}
	if (o.Rounds > 1 || o.UntilDone) && !o.Apply {
		return backend.Errorf(backend.EINVALID, "more than one round, or rounds until done, need --apply: a round without applying its choice would deliberate the same state again")
	}
	if o.WallTime < 0 {
		return backend.Errorf(backend.EINVALID, "the wall time must not be negative")
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Exploration == 0 {
		o.Exploration = defaultUCTC
	}
	if o.Exploration < 0 || math.IsNaN(o.Exploration) {
		return backend.Errorf(backend.EINVALID, "the exploration constant must not be negative")
	}
	return nil
}
