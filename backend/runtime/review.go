package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/planner"
	"ducklm/backend/router"
)

// review applies the router's review decision: it opens a review round
// (unless one is open: ducklm stopped in it) and asks the orchestrator, the
// planning model, what the steps' results mean. plan records its answer.
func (c *Controller) review(ctx context.Context, st *RunState, dec backend.Decision) (stop bool) {
	var p router.ReviewPayload
	_ = json.Unmarshal(dec.Payload, &p)
	if !p.Resume || st.Review == nil {
		if err := c.append(ctx, st, EvReviewing, ReviewRound{Round: len(st.Reviews) + 1, Kept: st.finished(), Reason: dec.Reason}); err != nil {
			return true
		}
		if err := c.catchUp(ctx, st); err != nil {
			return true
		}
	}
	return c.plan(ctx, st, dec)
}

// retry applies the router's retry decision: the step is pending again,
// and its slot is held for the backoff before it may start.
func (c *Controller) retry(ctx context.Context, st *RunState, dec backend.Decision, steps *workers) error {
	var p router.RetryPayload
	_ = json.Unmarshal(dec.Payload, &p)
	rec := st.Steps[p.Step]
	if rec == nil {
		return backend.Errorf(backend.ENOTFOUND, "the run has no step %q to retry", p.Step)
	}
	note := stepNote{Step: p.Step, Attempt: p.Attempt, Reason: rec.Error, DelayMS: p.DelayMS, Decision: &dec}
	if err := c.appendWith(ctx, st, nil, event(EvStepRetrying, note, st.Ticks)); err != nil {
		return err
	}
	if err := c.catchUp(ctx, st); err != nil {
		return err
	}
	steps.hold(ctx, p.Step, time.Duration(p.DelayMS)*time.Millisecond)
	return nil
}

// The review's budget for the steps' output: each step gets its share of
// reviewBudget, at least reviewStepMin and at most reviewStepMax
// characters, as the output's head and tail.
const (
	reviewBudget  = 16000
	reviewStepMin = 400
	reviewStepMax = 4000
)

// reviewRequest is what the orchestrator is told in an open review round:
// every step of the plan, with its arguments, how it ended, the critic's
// score and its output.
func (c *Controller) reviewRequest(ctx context.Context, st *RunState) *planner.Review {
	if st.Review == nil {
		return nil
	}
	ids := st.Order()
	share := min(max(reviewBudget/max(len(ids), 1), reviewStepMin), reviewStepMax)
	r := &planner.Review{Round: st.Review.Round, MaxRounds: max(st.Request.MaxReviews, 0)}
	for _, id := range ids {
		rec := st.Steps[id]
		o := planner.StepOutcome{ID: id, Kind: rec.Node.Kind, Tool: rec.Node.Tool, Title: rec.Node.Title, Args: rec.Args(), State: rec.State}
		if rec.Critique != nil {
			score := rec.Critique.Score
			o.Score = &score
		}
		if res := rec.Result; res != nil {
			exit := res.ExitCode
			o.Exit = &exit
			o.Result = headTail(c.resultText(ctx, rec), share)
		}
		if rec.State == StepFailed || rec.State == StepSkipped {
			o.Result = strings.TrimSpace(rec.Error + "\n" + o.Result)
		}
		r.Steps = append(r.Steps, o)
	}
	return r
}

// headTail keeps the first and last parts of s within n bytes, marking
// what was left out.
func headTail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	head := n * 2 / 5
	tail := n - head
	return truncateUTF8(s, head) + "\n[… " + itoa(len(s)-head-tail) + " bytes left out …]\n" + lastUTF8(s, tail)
}

// checkAnswer refuses an answer that does not rest on the steps it cites:
// a review's answer cites at least one step, and every step it cites is
// one of the run's finished steps.
func (s *RunState) checkAnswer(cites []string) string {
	if s.Review == nil {
		return ""
	}
	if len(cites) == 0 {
		return `the response cites no step: give in "cites" the ids of the steps whose results the answer rests on`
	}
	var bad []string
	for _, id := range cites {
		if rec := s.Steps[id]; rec == nil || rec.State != StepDone {
			bad = append(bad, id)
		}
	}
	if len(bad) > 0 {
		return "the response cites " + strings.Join(bad, ", ") + ", which " + isAre(len(bad)) +
			" not a finished step of the plan; cite only the ids of the finished steps listed in the results (" +
			strings.Join(s.finished(), ", ") + ")"
	}
	return ""
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// answered records the run's answer; the router then completes the run
// with it (RunAnswer.Reason), so a run has exactly one answer whenever
// ducklm stops. The answer is offered to memory first: a completed run has
// offered every result.
func (c *Controller) answered(ctx context.Context, st *RunState, a RunAnswer) (stop bool) {
	a.Cites = slices.Clone(a.Cites)
	ans := event(EvAnswered, a, st.Ticks)
	ans.ID = backend.NewID(backend.KindEvent) // the memory's provenance points here
	if err := c.appendWith(ctx, st, nil, ans); err != nil {
		c.d.Log("answer", "run", st.RunID, "err", err)
		return true
	}
	if err := c.catchUp(ctx, st); err != nil {
		return true
	}
	c.rememberAnswer(ctx, st, ans.ID, a)
	return false
}

// rememberAnswer offers the answer to the memory write policy as a fact
// resting on the steps it cites (their critic scores are its score); the
// loop applies the policy's decision. A memory failure is logged: the run
// has its answer either way.
func (c *Controller) rememberAnswer(ctx context.Context, st *RunState, eventID string, a RunAnswer) {
	if c.d.Memory == nil {
		return
	}
	score, n := 0.0, 0
	for _, id := range a.Cites {
		if rec := st.Steps[id]; rec != nil && rec.Critique != nil {
			score += rec.Critique.Score
			n++
		}
	}
	if n > 0 {
		score /= float64(n)
	} else {
		score = 0.5
	}
	cand := memory.FromAnswer(memory.Answer{RunID: st.RunID, EventID: eventID, Task: st.Request.Task, Text: a.Text,
		Cites: a.Cites, CriticScore: score, Tick: st.Ticks})
	verdict, err := c.d.Memory.Decide(ctx, cand)
	if err == nil {
		_, err = verdict.Apply(ctx, verdict.Decision())
	}
	if err != nil {
		c.d.Log("memory write of the answer skipped", "run", st.RunID, "err", backend.ErrorMessage(err))
	}
}
