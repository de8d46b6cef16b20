package runtime

import (
	"context"
	"encoding/json"

	"ducklm/backend"
)

// On a team's database several processes, of several installations, open
// the same runs. A task run is driven by the installation that submitted it
// (its workspace, sandbox and approved hosts are there), and by one process
// of it at a time: the driver holds the run's lock (DriverLocks) for as long
// as it drives. Every other process only reads the run and records what a
// person asks (an answer, a cancel request), which the driving installation
// follows (Followed). docs/team-server.md, "Who drives a task run".

// DriverLocks lets one process at a time drive a run, across every process
// on a shared database (postgres.RunLocks).
type DriverLocks interface {
	// Claim takes the run's lock for this process, unless another driver
	// (in this process or another) holds it: then ok is false. lost is
	// called if the lock is lost while held (its connection ended). release
	// gives it back.
	Claim(ctx context.Context, runID string, lost func()) (release func(), ok bool, err error)
}

// Installations is the shared database's record of the installations that
// opened it (store.DB).
type Installations interface {
	InstallationKnown(ctx context.Context, id string) (bool, error)
}

// onDatabase reports whether installation id has opened this shared
// database: a run it owns is driven when it is running. An owner that never
// has (a run imported from a bundle made on a machine not on this
// database) drives nothing here.
func (c *Controller) onDatabase(ctx context.Context, id string) (bool, error) {
	if c.d.Installations == nil || id == c.d.Installation.ID {
		return true, nil
	}
	if _, ok := c.present.Load(id); ok {
		return true, nil
	}
	ok, err := c.d.Installations.InstallationKnown(ctx, id)
	if ok {
		c.present.Store(id, true)
	}
	return ok, err
}

// DriverNote is the sentence that says who drives a run o owns, for a
// person on this installation: o drives it when it runs, or, when o never
// opened this database, nothing here does and a fork goes on here.
func (c *Controller) DriverNote(ctx context.Context, o Installation) string {
	if ok, err := c.onDatabase(ctx, o.ID); err == nil && !ok {
		return ImportedFrom(o)
	}
	return DrivenBy(o)
}

// ImportedFrom is the sentence for a run whose owner is not on this
// database.
func ImportedFrom(o Installation) string {
	host := o.Host
	if host == "" {
		host = "another machine"
	}
	return "This run was imported from ducklm on " + host + ", which is not on this database: no installation here drives it. Fork it from a checkpoint to go on here."
}

// shared reports whether other processes write this controller's runs.
func (c *Controller) shared() bool { return c.d.Drivers != nil }

// mayDrive reports whether this process may drive the run: on a database
// of its own every run is its own; on a shared one, runs its installation
// owns, and runs recorded without an owner when a person here acted on them.
func (c *Controller) mayDrive(st *RunState) bool {
	if !c.shared() || c.d.Installation.ID == "" {
		return true
	}
	if o := st.Request.Owner; o != nil {
		return o.ID == c.d.Installation.ID
	}
	_, ok := c.adopted.Load(st.RunID)
	return ok
}

// claim takes the run's driving lock (always granted without Drivers).
func (c *Controller) claim(ctx context.Context, runID string, lost func()) (func(), bool, error) {
	if c.d.Drivers == nil {
		return func() {}, true, nil
	}
	if lost == nil {
		lost = func() {}
	}
	return c.d.Drivers.Claim(ctx, runID, lost)
}

// DrivenElsewhere returns the installation that drives the run when it is
// not this one (nil when this installation drives it, or may).
func (c *Controller) DrivenElsewhere(ctx context.Context, runID string) (*Installation, error) {
	st, _, err := c.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	return c.Elsewhere(st), nil
}

// Elsewhere returns the installation that drives the run st when it is not
// this one (nil when this installation drives it, or may).
func (c *Controller) Elsewhere(st *RunState) *Installation {
	if !c.shared() || c.d.Installation.ID == "" || st.Request.Owner == nil || st.Request.Owner.ID == c.d.Installation.ID {
		return nil
	}
	o := *st.Request.Owner
	return &o
}

// DrivenBy is the sentence that says who drives a run of another
// installation.
func DrivenBy(o Installation) string {
	host := o.Host
	if host == "" {
		host = "another machine"
	}
	return "This run is driven by ducklm on " + host + "; it goes on when that installation is running."
}

// adopt lets this process drive a run without an owner after a person's
// action here.
func (c *Controller) adopt(st *RunState) {
	if c.shared() && st.Request.Owner == nil {
		c.adopted.Store(st.RunID, true)
	}
}

// Followed takes the events other processes committed (postgres.Follow
// hands them over, with this process's own): an answer or a cancel request
// on a run this process may drive wakes its driver, which reads them.
func (c *Controller) Followed(batch []backend.Event) {
	for _, e := range batch {
		switch e.Type {
		case EvApproved, EvDenied, EvForked:
			// An answer, or a fork another installation made of this
			// one's run (it shares the run's workspace, so the owner
			// drives it): the driver checks that the run is this process's.
			c.Start(e.Stream)
		case EvCancelRequested:
			c.mu.Lock()
			_, driving := c.drivers[e.Stream]
			c.mu.Unlock()
			if driving {
				var p cancelRequest
				_ = json.Unmarshal(e.Payload, &p)
				c.requestedCancel(e.Stream, p.Reason)
			} else {
				// A driver that stopped just before the request came takes
				// it up when it starts (drive).
				c.Start(e.Stream)
			}
		}
	}
}

// requestedCancel cancels a run this process drives on another process's
// request: the driver is stopped (its steps killed and recorded), then the
// cancellation is recorded under the run's lock. Close waits for it and
// ends it (its context): a request it leaves is still in the ledger, and
// the run's next driver acts on it.
func (c *Controller) requestedCancel(runID, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := c.Cancel(c.life, runID, reason)
		if err != nil && c.life.Err() == nil && backend.ErrorCode(err) != backend.EINVALID {
			c.d.Log("cancel on request", "run", runID, "err", err)
		}
	}()
}
