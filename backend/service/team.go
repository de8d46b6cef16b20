package service

import (
	"context"
	"time"

	"ducklm/backend"
	"ducklm/backend/river"
	"ducklm/backend/settings"
	"ducklm/backend/store"
	"ducklm/backend/tool"
)

// TeamWorkers is how many of the team's workers can take jobs now, and
// their slots: all of them, and those not running a job.
type TeamWorkers struct {
	Alive int `json:"alive"`
	Slots int `json:"slots"`
	Free  int `json:"free"`
}

// AliveWorkers counts the team's workers alive now (working or idle) from
// the workers table.
func AliveWorkers(ctx context.Context, db *store.DB) (TeamWorkers, error) {
	now := time.Now().UTC()
	ws, err := db.Workers(ctx, now.Add(-backend.WorkerLostAfter), now)
	if err != nil {
		return TeamWorkers{}, err
	}
	var t TeamWorkers
	for _, w := range ws {
		if w.State == backend.WorkerWorking || w.State == backend.WorkerIdle {
			t.Alive++
			t.Slots += w.Slots
			t.Free += max(0, w.Slots-len(w.Jobs))
		}
	}
	return t, nil
}

// QueuedFor is how many branches to keep queued for workers with these
// slots: several a slot, so none waits for its next job, and at most 64,
// where the queue's own latency stops paying (the Deliberate dialog's rule).
func QueuedFor(slots int) int { return min(64, max(8, 4*slots)) }

// teamSteps lends this installation's portable task steps the team's
// workers (tool.Team), as the settings say.
type teamSteps struct {
	dir string
	url string
	db  *store.DB
}

var _ tool.Team = (*teamSteps)(nil)

// Branches implements tool.Team: the team's work queue when a worker is
// alive and the settings let task steps go there; else why not, as the
// sentence the step records.
func (t *teamSteps) Branches(ctx context.Context) (*tool.TeamBranches, string) {
	if prefs, err := settings.Load(t.dir); err == nil && prefs.TaskSteps == settings.TaskStepsHere {
		return nil, "Settings → Task steps keeps them on this machine, so its branches ran here."
	}
	team, err := AliveWorkers(ctx, t.db)
	if err != nil {
		return nil, "The team's workers could not be counted (" + backend.ErrorMessage(err) + "), so its branches ran here."
	}
	if team.Alive == 0 {
		return nil, "No worker of the team was alive, so its branches ran here."
	}
	q, err := river.NewQueue(ctx, t.url)
	if err != nil {
		return nil, "The team's work queue could not be opened (" + backend.ErrorMessage(err) + "), so its branches ran here."
	}
	return &tool.TeamBranches{Eval: q, Queued: QueuedFor(team.Slots), Ran: q.Ran, Close: q.Close}, ""
}
