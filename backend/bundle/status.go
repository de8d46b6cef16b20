package bundle

import (
	"encoding/json"
	"fmt"
	"strings"

	"ducklm/backend"
	"ducklm/backend/runtime"
	"ducklm/backend/world"
)

// statusFold recomputes a run's status from its own events, the way the
// app that wrote them did: a bundle's run records say what the run's status
// was, but the events are what the signature and the digests vouch for
// step by step, and an import must not show a run as finished (or as
// running) when its events say otherwise.
type statusFold struct {
	task     *runtime.RunState // the fold of a task run's events
	isTask   bool
	status   backend.RunStatus // a simulated run's
	errorMsg string
}

func newStatusFold() *statusFold {
	return &statusFold{task: runtime.NewRunState("", ""), status: backend.RunRunning}
}

// apply folds one event of the run's own stream.
func (f *statusFold) apply(e backend.Event) {
	switch {
	case e.Type == world.EventCompleted:
		f.status, f.errorMsg = backend.RunCompleted, ""
	case e.Type == world.EventFailed:
		var p struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(e.Payload, &p)
		f.status, f.errorMsg = backend.RunFailed, p.Error
	case strings.HasPrefix(e.Type, "world."):
	default:
		f.isTask = true
		f.task.Apply(e)
	}
}

// result is the status and error the events give the run.
func (f *statusFold) result() (backend.RunStatus, string) {
	if f.isTask {
		errMsg := ""
		if f.task.Status == backend.RunFailed {
			errMsg = f.task.Error
		}
		return f.task.Status, errMsg
	}
	return f.status, f.errorMsg
}

// recomputeStatuses replaces every run's recorded status and error with
// what its events give. A run with no events of its own in the bundle is
// as a new run is: pending for a task run, running for a simulated one.
func (c *checked) recomputeStatuses() {
	for i := range c.runs {
		r := &c.runs[i]
		f := c.folds[r.ID]
		if f == nil {
			f = newStatusFold()
			if c.isTaskRun(r.WorldID) {
				f.isTask = true
			}
		}
		was := *r
		r.Status, r.Error = f.result()
		if was.Status != r.Status || was.Error != r.Error {
			if c.recorded == nil {
				c.recorded = map[string]backend.WorldRun{}
			}
			c.recorded[r.ID] = was
		}
	}
}

// statusNotes are the report's sentences for the runs whose records claim
// what their events do not give, in the bundle's order.
func (c *checked) statusNotes() []string {
	var out []string
	for _, r := range c.runs {
		was, ok := c.recorded[r.ID]
		if !ok {
			continue
		}
		claim, now := string(was.Status), string(r.Status)
		if was.Error != "" {
			claim += fmt.Sprintf(" (%q)", was.Error)
		}
		if r.Error != "" {
			now += fmt.Sprintf(" (%q)", r.Error)
		}
		out = append(out, fmt.Sprintf("run %s is recorded as %s, but its events say %s; import recomputes the status from the events", r.ID, claim, now))
	}
	return out
}

// isTaskRun reports whether the bundle's spec of a world says its runs are
// task runs.
func (c *checked) isTaskRun(worldID string) bool {
	i, ok := c.spec[worldID]
	return ok && c.specs[i].Backend == runtime.BackendTask
}
