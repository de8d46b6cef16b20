package api

import (
	"context"
	"fmt"
	"time"

	"ducklm/backend/deliberation"
	"ducklm/backend/service"
	"ducklm/backend/world"
)

// DeliberateInput starts a deliberation on a simulated world's run.
type DeliberateInput struct {
	RunID        string `json:"runId"`
	CheckpointID string `json:"checkpointId"` // "" starts at the run's current state
	Strategy     string `json:"strategy"`     // "beam" or "mcts"
	Width        int    `json:"width"`
	Depth        int    `json:"depth"`
	Budget       int    `json:"budget"`
	Seeds        int    `json:"seeds"`
	Rounds       int    `json:"rounds"`
	UntilDone    bool   `json:"untilDone"`
	Apply        bool   `json:"apply"`
	TimeLimitMs  int64  `json:"timeLimitMs"`
	// Op is the id progress is reported under (service.Progress: done and
	// total count branches) and CancelDeliberation stops it by.
	Op string `json:"op"`
}

// Deliberate searches forks of the run's world and ranks its next actions
// (see deliberation.Options); with Apply it takes the best. It returns when
// the rounds are done or cancelled (a cancelled deliberation answers the
// rounds it finished, with an error saying it stopped).
func (a *API) Deliberate(in DeliberateInput) (deliberation.Result, error) {
	if err := a.ready(); err != nil {
		return deliberation.Result{}, err
	}
	ctx, cancel := context.WithCancel(a.ctx())
	defer cancel()
	if in.Op != "" {
		a.deliberatingMu.Lock()
		if a.deliberating == nil {
			a.deliberating = map[string]context.CancelFunc{}
		}
		a.deliberating[in.Op] = cancel
		a.deliberatingMu.Unlock()
		defer func() {
			a.deliberatingMu.Lock()
			delete(a.deliberating, in.Op)
			a.deliberatingMu.Unlock()
		}()
	}
	report := service.Reporter(a.svc.Progress, in.Op)
	opt := deliberation.Options{RunID: in.RunID, CheckpointID: in.CheckpointID, Strategy: deliberation.Strategy(in.Strategy),
		Width: in.Width, Depth: in.Depth, Budget: in.Budget, Seeds: in.Seeds, Rounds: in.Rounds, UntilDone: in.UntilDone,
		Apply: in.Apply, WallTime: time.Duration(in.TimeLimitMs) * time.Millisecond,
		Progress: func(p deliberation.Progress) {
			report(fmt.Sprintf("round %d", p.DeliberationIndex), int64(p.Branches), int64(p.Budget), "branches")
		}}
	// A cancelled deliberation answers ECANCELLED with what it kept.
	res, err := a.svc.Deliberation.Deliberate(ctx, opt)
	if res.Rounds == nil {
		res.Rounds = []deliberation.Round{}
	}
	return res, a.fail("deliberate", err)
}

// CancelDeliberation stops the deliberation running as op and reports
// whether one was.
func (a *API) CancelDeliberation(op string) (bool, error) {
	if err := a.ready(); err != nil {
		return false, err
	}
	a.deliberatingMu.Lock()
	defer a.deliberatingMu.Unlock()
	cancel, ok := a.deliberating[op]
	if ok {
		cancel()
	}
	return ok, nil
}

// Deliberations returns the recorded rounds of a run's deliberations.
func (a *API) Deliberations(runID string) ([]deliberation.Round, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	rounds, err := a.svc.Deliberation.Rounds(a.ctx(), runID)
	if rounds == nil {
		rounds = []deliberation.Round{}
	}
	return rounds, a.fail("deliberations", err)
}

// ApplyDeliberation steps the run with the choice of its recorded round
// index, if the run is still where that round began.
func (a *API) ApplyDeliberation(runID string, index int64) (world.StepOutcome, error) {
	if err := a.ready(); err != nil {
		return world.StepOutcome{}, err
	}
	out, err := a.svc.Deliberation.Apply(a.ctx(), runID, index)
	return out, a.fail("apply the deliberation's choice", err)
}
