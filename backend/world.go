package backend

import (
	"context"
	"encoding/json"
)

// Domain says whether a world's events are facts of this machine (real: task
// runs) or of a simulation (simulated: deterministic state worlds).
type Domain string

const (
	DomainReal      Domain = "real"
	DomainSimulated Domain = "simulated"
)

// Reality returns the reality of every event recorded in a world of domain d.
func (d Domain) Reality() Reality {
	if d == DomainReal {
		return ExternalReal
	}
	return WorldLocal
}

// BackendCapabilities states what a world backend can do.
type BackendCapabilities struct {
	Deterministic bool `json:"deterministic"` // same (program, seed, actions) ⇒ same bytes
	Checkpoint    bool `json:"checkpoint"`    // exact checkpoint and restore
	Observe       bool `json:"observe"`       // role-relative observation
}

// StepResult is what one world step produced.
type StepResult struct {
	// WorldLocalTime is the world's tick after the step.
	WorldLocalTime int64 `json:"worldLocalTime"`
	// State is the canonical JSON of the new state.
	State json.RawMessage `json:"state"`
	// Emitted are the payloads the program asked to record as world-local
	// events for this step (possibly none).
	Emitted []json.RawMessage `json:"emitted,omitempty"`
	// Done reports that the program declared the world terminal.
	Done bool `json:"done"`
}

// WorldBackend runs one world instance. Implementations are not safe for
// concurrent use; the caller serialises calls.
type WorldBackend interface {
	Capabilities() BackendCapabilities
	// Initialize creates the initial state from the seed.
	Initialize(ctx context.Context, seed uint64) (json.RawMessage, error)
	// Step applies one action (any JSON value) and advances world-local time by one.
	Step(ctx context.Context, action json.RawMessage) (StepResult, error)
	// Observe returns what role sees of the current state.
	Observe(ctx context.Context, role string) (json.RawMessage, error)
	// CheckpointBytes returns the canonical bytes of the whole world state,
	// RNG state and clock included: restoring them reproduces the world exactly.
	CheckpointBytes() ([]byte, error)
	// RestoreBytes replaces the world's state with a checkpoint's bytes.
	RestoreBytes(data []byte) error
	// State returns the canonical JSON of the current state.
	State() json.RawMessage
	// Time returns the world-local time.
	Time() int64
	// Terminate releases the instance; later calls fail.
	Terminate() error
}
