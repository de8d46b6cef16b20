package critic

import (
	"context"

	"ducklm/backend"
)

// WithFallback critiques with Model when it can and with Heuristic when it
// cannot: no model, no model chosen for the request, or a model failure of
// any kind. It always returns a critique; a fallback one says why in its
// Explanation and ModelError.
type WithFallback struct {
	Model     *Model
	Heuristic Heuristic
}

// Evaluate returns the model's critique of req, or the heuristic one.
func (w WithFallback) Evaluate(ctx context.Context, req Request) Critique {
	if w.Model == nil || w.Model.Client == nil || req.Model == "" {
		return w.fallback(req, "no critic model is available")
	}
	c, err := w.Model.Evaluate(ctx, req)
	if err != nil {
		return w.fallback(req, backend.ErrorMessage(err))
	}
	return c
}

func (w WithFallback) fallback(req Request, reason string) Critique {
	c := w.Heuristic.Evaluate(req)
	c.ModelError = reason
	c.Explanation += Note(reason)
	return c
}

// Note is what a critique made without the critic model adds to the rule of
// thumb's explanation: why the model was not used (its ModelError), and
// that the score is no model's judgement. A record that keeps ModelError
// can leave the note out and give it back (the runtime's step.finished).
func Note(modelError string) string {
	return " The critic model was not used (" + modelError + "): this is a rule of thumb over the exit status and output, not a judgement of the result."
}
