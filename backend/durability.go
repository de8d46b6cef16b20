package backend

import (
	"context"
	"encoding/json"
)

// Repeatable is implemented by the tools whose calls may be safe to
// repeat: a call that only reads (a file of the workspace, a GET of a web
// page) changes nothing when it runs twice. The tool says, per call, from
// its args. The runtime does not sync a repeatable step's start before it
// runs (its result's commit makes the start durable with it); a crash
// meanwhile leaves a start without a result, and the step runs again
// instead of waiting, in doubt, for the user. The tool catalog shows the
// mark.
type Repeatable interface {
	Repeatable(args json.RawMessage) bool
}

// IsRepeatable reports whether t's call with args is safe to repeat.
func IsRepeatable(t Tool, args json.RawMessage) bool {
	r, ok := t.(Repeatable)
	return ok && r.Repeatable(args)
}

// MayRepeat reports whether some of t's calls are safe to repeat (the
// catalog's mark).
func MayRepeat(t Tool) bool {
	_, ok := t.(Repeatable)
	return ok
}

type deferSyncKey struct{}

// DeferSync marks the writes made with ctx as not needing a durable sync of
// their own: the store commits them without waiting for the disk, and they
// become durable with the next synced commit of the same database (its
// write-ahead log is one file, written in order). A crash before that may
// lose them, and only them: what a caller defers must be safe to lose (a
// repeatable step's start, a derived record a reader rebuilds).
func DeferSync(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferSyncKey{}, true)
}

// SyncDeferred reports whether ctx's writes may skip their own sync.
func SyncDeferred(ctx context.Context) bool {
	v, _ := ctx.Value(deferSyncKey{}).(bool)
	return v
}

// A Flusher is a store that commits some writes without a sync of their
// own (DeferSync) and can make them durable on demand.
type Flusher interface {
	// Flush makes every write committed before it durable: nothing to do
	// when a synced commit since has, else one synced commit. stream names
	// a stream of the store that exists (the run whose writes it covers).
	Flush(ctx context.Context, stream string) error
}

// A Prepared write is a change a component prepared for its store to make
// in the same transaction as an append to a run's stream: the rows of a
// memory decision, written with the step result that records the decision
// (one commit for everything that follows a result). Only the store that
// prepared it can make it; another refuses it.
type Prepared interface {
	// PreparedBy names the store that prepared it, for a refusal.
	PreparedBy() string
}
