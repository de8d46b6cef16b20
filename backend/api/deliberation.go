package api

import (
	"context"
	"fmt"
	"time"

	"ducklm/backend"
	"ducklm/backend/deliberation"
	"ducklm/backend/river"
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
	// OnWorkers > 0 runs the branches as jobs for the team's `ducklm
	// worker` processes, keeping this many queued at once; it needs the
	// team's PostgreSQL and a worker alive. 0 runs them in this process.
	OnWorkers int `json:"onWorkers"`
}

// Deliberate searches forks of the run's world and ranks its next actions
// (see deliberation.Options); with Apply it takes the best. It returns when
// the rounds are done or cancelled: a deliberation CancelDeliberation
// stopped answers the rounds it finished, with Cancelled saying it stopped,
// and no error.
func (a *API) Deliberate(in DeliberateInput) (deliberation.Result, error) {
	if err := a.ready(); err != nil {
		return deliberation.Result{}, err
	}
	ctx, cancel := context.WithCancel(a.ctx())
	defer cancel()
	defer a.track(in.Op, cancel)()
	report := service.Reporter(a.svc.Progress, in.Op)
	opt := deliberation.Options{RunID: in.RunID, CheckpointID: in.CheckpointID, Strategy: deliberation.Strategy(in.Strategy),
		Width: in.Width, Depth: in.Depth, Budget: in.Budget, Seeds: in.Seeds, Rounds: in.Rounds, UntilDone: in.UntilDone,
		Apply: in.Apply, WallTime: time.Duration(in.TimeLimitMs) * time.Millisecond,
		Progress: func(p deliberation.Progress) {
			report(fmt.Sprintf("round %d", p.DeliberationIndex), int64(p.Branches), int64(p.Budget), "branches")
		}}
	delib := a.svc.Deliberation
	if in.OnWorkers != 0 {
		q, err := a.workerQueue(ctx, in.OnWorkers)
		if err != nil {
			return deliberation.Result{Rounds: []deliberation.Round{}}, a.fail("deliberate on workers", err)
		}
		defer q.Close()
		delib, opt.Workers = delib.WithEvaluator(q), in.OnWorkers
	}
	// A cancelled deliberation answers ECANCELLED with what it kept.
	res, err := delib.Deliberate(ctx, opt)
	if res.Rounds == nil {
		res.Rounds = []deliberation.Round{}
	}
	if backend.ErrorCode(err) == backend.ECANCELLED && ctx.Err() != nil && a.ctx().Err() == nil {
		// The user asked for this stop, so it is the call's answer, not its
		// failure: answered as an error, the browser logged the cancelled
		// call as a failed request (a 422) and the log an error.
		a.log.Info("deliberation cancelled", "op", in.Op, "rounds", len(res.Rounds))
		res.Cancelled = backend.ErrorMessage(err)
		return res, nil
	}
	return res, a.fail("deliberate", err)
}

// CancelDeliberation stops the deliberation running as op and reports
// whether one was.
func (a *API) CancelDeliberation(op string) (bool, error) {
	if err := a.ready(); err != nil {
		return false, err
	}
	return a.cancelOp(op), nil
}

// track registers cancel as op's (nothing for ""); the returned function
// forgets it.
func (a *API) track(op string, cancel context.CancelFunc) (untrack func()) {
	if op == "" {
		return func() {}
	}
	a.deliberatingMu.Lock()
	if a.deliberating == nil {
		a.deliberating = map[string]context.CancelFunc{}
	}
	a.deliberating[op] = cancel
	a.deliberatingMu.Unlock()
	return func() {
		a.deliberatingMu.Lock()
		delete(a.deliberating, op)
		a.deliberatingMu.Unlock()
	}
}

// cancelOp cancels what runs as op and reports whether something did.
func (a *API) cancelOp(op string) bool {
	a.deliberatingMu.Lock()
	defer a.deliberatingMu.Unlock()
	cancel, ok := a.deliberating[op]
	if ok {
		cancel()
	}
	return ok
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

// workerQueue opens the team's work queue for a deliberation's branches,
// refusing with a sentence when the branches would wait for no one: on
// this machine's SQLite database, or with no worker alive.
func (a *API) workerQueue(ctx context.Context, n int) (*river.Queue, error) {
	if n < 0 {
		return nil, backend.Errorf(backend.EINVALID, "branches queued at once for workers is %d; it is a positive number (or 0 to run them here)", n)
	}
	return a.teamQueue(ctx,
		"branches run on workers only for a team's PostgreSQL; this window uses this machine's SQLite database (choose the team's in Settings → Database)",
		"no worker is alive to take the branches; start one with `ducklm worker` on a machine that reaches the team's database, or run the branches here")
}

// teamQueue opens the team's work queue, or refuses with onSQLite on this
// machine's own database and with noneAlive when no worker is alive.
func (a *API) teamQueue(ctx context.Context, onSQLite, noneAlive string) (*river.Queue, error) {
	url := a.svc.Database().URL
	if url == "" {
		return nil, backend.Errorf(backend.EINVALID, "%s", onSQLite)
	}
	team, err := service.AliveWorkers(ctx, a.svc.DB)
	if err != nil {
		return nil, err
	}
	if team.Alive == 0 {
		return nil, backend.Errorf(backend.EUNAVAILABLE, "%s", noneAlive)
	}
	return river.NewQueue(ctx, url)
}
