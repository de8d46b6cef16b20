package runtime

import (
	"context"

	"ducklm/backend"
	"ducklm/backend/critic"
	"ducklm/backend/memory"
	"ducklm/backend/planner"
)

// Planner returns a plan (or respond/fail/replan) decision; it never executes.
type Planner interface {
	Plan(ctx context.Context, req planner.Request) (backend.Decision, error)
}

// Critic scores a step result; it never decides what is stored or retried.
type Critic interface {
	Evaluate(ctx context.Context, req critic.Request) critic.Critique
}

// Coder writes a helper script for a coder step; the script then runs as a
// sandboxed step that needs approval.
type Coder interface {
	Write(ctx context.Context, req CoderRequest) (CoderScript, error)
}

// CoderRequest asks for a script.
type CoderRequest struct {
	Task     string
	Goal     string
	Language string // "python" or "sh"
	Model    string
	OnToken  func(string)
}

// CoderScript is what the coder wrote.
type CoderScript struct {
	Language string
	Source   string
	Model    string
}

// ModelLister lists the models Ollama offers.
type ModelLister interface {
	ModelNames(ctx context.Context) ([]string, error)
}

// MemoryWriter is the memory store's write path: the write policy decides
// (Decide returns its verdict, whose Decision is a store_memory or skip
// decision object) and the loop applies that decision (Pending.Apply),
// which records it as an event.
type MemoryWriter interface {
	Decide(ctx context.Context, c memory.Candidate) (MemoryVerdict, error)
}

// MemoryVerdict is the write policy's verdict on one candidate
// (memory.Pending): its decision object, and the write that applies it.
type MemoryVerdict interface {
	Decision() backend.Decision
	Apply(ctx context.Context, d backend.Decision) (memory.Decided, error)
	// Drop lets the store's writes go without applying the verdict (the
	// result it was made for was not recorded).
	Drop()
}

// MemoryCarrier is a verdict that can also be recorded in the step's result
// event, its rows written in the result's commit (memory.Pending.Carry):
// one event and one commit for everything that follows a result. Carry
// returns nil when the verdict must be applied instead.
type MemoryCarrier interface {
	Carry(ctx context.Context, d backend.Decision) (*memory.Carried, error)
}

var (
	_ MemoryVerdict = (*memory.Pending)(nil)
	_ MemoryCarrier = (*memory.Pending)(nil)
)
