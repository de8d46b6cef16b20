package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"ducklm/backend"
	"ducklm/backend/ollama"
)

// LLM plans with a model through Ollama. Tasks Direct handles never reach
// the model.
type LLM struct {
	Client *ollama.Client
	// Options are model options; nil means {"temperature": 0}, so the same
	// prompt gives the same plan as far as the model allows.
	Options map[string]any
}

// maxOutput bounds the model's answer kept in a replan payload.
const maxOutput = 4 << 10

// Plan implements Planner. An unusable answer is a replan decision, not an
// error; the error is for a model that could not be asked (Ollama down, the
// model not installed, the context cancelled), classified by package ollama.
func (p LLM) Plan(ctx context.Context, req Request) (backend.Decision, error) {
	if d, ok := Direct(req); ok {
		return d, nil
	}
	if p.Client == nil {
		return backend.Decision{}, backend.Errorf(backend.EUNAVAILABLE, "the planner has no Ollama client: %s", NeedsModel)
	}
	if req.Model == "" {
		return backend.Decision{}, backend.Errorf(backend.EINVALID, "no planning model was chosen")
	}
	opts := AttemptOptions(p.Options, req.Attempt)
	resp, err := p.Client.Chat(ctx, ollama.ChatRequest{
		Model: req.Model, Messages: messages(req), Format: formatFor(req), Options: opts, OnToken: req.OnToken,
	})
	call := &Call{Model: req.Model, Attempt: req.Attempt, Options: opts, Answer: truncate(resp.Content, maxOutput), Unstreamed: resp.Unstreamed}
	if errors.Is(err, ollama.ErrRepetition) {
		// The model looped until Ollama stopped it: the server is fine and
		// another attempt (which differs: see AttemptOptions) may not loop.
		return replanDecision(req, call, backend.ErrorMessage(err)), nil
	}
	if err != nil {
		return backend.Decision{}, err
	}
	return decide(req, resp, call)
}

// AttemptOptions are the model options of a planning attempt: base (default
// {"temperature": 0}) for the first, and for each replan a seed of its own
// and a temperature 0.3 higher (at most 1), so a replan never sends the
// model the request it answered wrongly before.
func AttemptOptions(base map[string]any, attempt int) map[string]any {
	opts := map[string]any{"temperature": 0.0}
	if base != nil {
		opts = maps.Clone(base)
	}
	if attempt <= 1 {
		return opts
	}
	t, _ := opts["temperature"].(float64)
	opts["temperature"] = min(t+0.3*float64(attempt-1), 1)
	opts["seed"] = attempt - 1
	return opts
}

// answer is a model's answer, once it fits PlanSchema.
type answer struct {
	Decision   string             `json:"decision"`
	Reason     string             `json:"reason"`
	Confidence float64            `json:"confidence"`
	Plan       *backend.TaskGraph `json:"plan"`
	Response   string             `json:"response"`
	Cites      []string           `json:"cites"`
}

func replanDecision(req Request, call *Call, why string) backend.Decision {
	return backend.NewDecision(backend.DecisionReplan, ReplanPayload{
		Error: why, Attempt: req.Attempt, Output: call.Answer, Model: req.Model, Call: call,
	}, 0, why)
}

// decide turns the model's answer into a decision.
func decide(req Request, resp ollama.ChatResponse, call *Call) (backend.Decision, error) {
	text := unfence(resp.Content)
	replan := func(why string) (backend.Decision, error) {
		if resp.DoneReason == "length" {
			why += " (the answer was cut off at the model's length limit; plan fewer or shorter steps)"
		}
		return replanDecision(req, call, why), nil
	}
	if text == "" {
		return replan("the planner's answer was empty")
	}
	doc, err := decodeJSON(text)
	if err != nil {
		return replan("the planner's answer is not valid JSON: " + err.Error())
	}
	// What a server's grammar does not enforce (numeric bounds, lengths,
	// rules across fields) is checked here; what has one meaning is mended
	// first, and the mending recorded.
	call.Normalised = normaliseAnswer(doc)
	why, err := validate(compiled, doc)
	if err != nil {
		return backend.Decision{}, backend.Wrap(err, backend.EINTERNAL, "the planner cannot check answers")
	}
	if why != "" {
		return replan("the planner's answer does not match the plan schema: " + why)
	}
	mended, err := json.Marshal(doc)
	if err != nil {
		return replan("the planner's answer cannot be read: " + err.Error())
	}
	var a answer
	if err := json.Unmarshal(mended, &a); err != nil {
		return replan("the planner's answer cannot be read: " + err.Error())
	}

	switch a.Decision {
	case "respond":
		if strings.TrimSpace(a.Response) == "" {
			return replan(`the planner's answer chose "respond" but gave no "response"`)
		}
		if req.Review != nil && len(a.Cites) == 0 {
			return replan(`the planner's answer chose "respond" but cites no step: give in "cites" the ids of the steps whose results the answer rests on`)
		}
		return backend.NewDecision(backend.DecisionRespond, RespondPayload{Text: a.Response, Cites: a.Cites, Model: req.Model, Call: call},
			a.Confidence, a.Reason), nil
	case "fail":
		reason := fmt.Sprintf("%s declined the task", req.Model)
		if r := strings.TrimSpace(a.Reason); r != "" {
			reason += ", saying: " + quoteSentence(r)
		} else {
			reason += " without saying why."
		}
		reason += " " + backend.PlannerNextStep(req.Model)
		return backend.NewDecision(backend.DecisionFail, FailPayload{Error: reason, Call: call}, a.Confidence, reason), nil
	}
	if a.Plan == nil {
		return replan(`the planner's answer chose "plan" but gave no "plan"`)
	}
	for i, n := range a.Plan.Nodes {
		if n.Kind == backend.KindToolStep && strings.TrimSpace(n.Tool) == "" {
			return replan(fmt.Sprintf(`the planner's answer has a tool step without a "tool" (plan.nodes[%d], id %q)`, i, n.ID))
		}
	}
	normalize(a.Plan)
	return backend.NewDecision(backend.DecisionPlan, PlanPayload{Graph: *a.Plan, Source: SourceModel, Model: req.Model, Call: call},
		a.Confidence, a.Reason), nil
}

// quoteSentence quotes a model's words and ends the sentence after them.
func quoteSentence(s string) string {
	s = truncate(strings.Join(strings.Fields(s), " "), 300)
	return "“" + strings.TrimRight(s, ".") + ".”"
}

// unfence drops a Markdown code fence some models wrap JSON in when the
// server does not enforce the format.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "```"), "```")
	if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
		s = s[nl+1:] // the fence's language tag, e.g. "json"
	}
	return strings.TrimSpace(s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
