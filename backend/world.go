package backend

import (
	"context"
	"encoding/json"
	"time"
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

// WorldSpec is what a world is: immutable once persisted (the database
// refuses updates). Many runs may reference one spec.
type WorldSpec struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Domain        Domain          `json:"domain"`
	Backend       string          `json:"backend"` // "starlark" for simulated worlds, "task" for task runs
	Program       BlobRef         `json:"program"` // the world program (Starlark source) or the task text
	InitialState  *BlobRef        `json:"initialState,omitempty"`
	Params        json.RawMessage `json:"params"`
	Seed          int64           `json:"seed"` // 0 ≤ seed < 2^63
	ParentWorldID string          `json:"parentWorldId,omitempty"`
	ForkID        string          `json:"forkId,omitempty"`
	CreatedAt     time.Time       `json:"createdAt"`
}

// RunStatus is where a world run is in its life.
type RunStatus string

// The run statuses. Completed, failed and terminated are terminal.
const (
	RunPending          RunStatus = "pending"
	RunRunning          RunStatus = "running"
	RunPaused           RunStatus = "paused"
	RunAwaitingApproval RunStatus = "awaiting_approval"
	RunCompleted        RunStatus = "completed"
	RunFailed           RunStatus = "failed"
	RunTerminated       RunStatus = "terminated"
)

// Terminal reports whether a run in status s can no longer change.
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunTerminated
}

// Words is the status as the window and the CLI say it to a person:
// "awaiting approval", and "cancelled" for a run that was terminated.
func (s RunStatus) Words() string {
	switch s {
	case RunAwaitingApproval:
		return "awaiting approval"
	case RunTerminated:
		return "cancelled"
	}
	return string(s)
}

// WorldRun is one execution of a spec. Its id is also its ledger stream. A
// forked run shares its base run's events up to BaseSeq by reference.
type WorldRun struct {
	ID                 string    `json:"id"`
	WorldID            string    `json:"worldId"`
	Status             RunStatus `json:"status"`
	WorldLocalTime     int64     `json:"worldLocalTime"`
	ParentTime         int64     `json:"parentTime"`
	DeliberationIndex  int64     `json:"deliberationIndex"`
	BaseRunID          string    `json:"baseRunId,omitempty"`
	BaseSeq            int64     `json:"baseSeq"`
	LatestCheckpointID string    `json:"latestCheckpointId,omitempty"`
	Error              string    `json:"error,omitempty"`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`
}

// Checkpoint is an exact snapshot of a run: the canonical bytes of its
// state, RNG and clocks in the blob store, and where it stands in the ledger.
type Checkpoint struct {
	ID             string    `json:"id"`
	WorldID        string    `json:"worldId"`
	RunID          string    `json:"runId"`
	WorldLocalTime int64     `json:"worldLocalTime"`
	LedgerSeq      int64     `json:"ledgerSeq"` // the run's stream seq the snapshot covers (inclusive)
	Blob           BlobRef   `json:"blob"`
	CreatedAt      time.Time `json:"createdAt"`
}

// DivergenceType says how a fork's child differs from its parent.
type DivergenceType string

// The divergence types.
const (
	DivergeStatePatch      DivergenceType = "state_patch"      // delta: a JSON merge patch of the state
	DivergeActionOverride  DivergenceType = "action_override"  // delta: {"actions": [...]} applied first in the child
	DivergeSeedChange      DivergenceType = "seed_change"      // the RNG is reseeded by the seed policy
	DivergeProgramChange   DivergenceType = "program_change"   // delta: {"program": "<new source>"}
	DivergeParameterChange DivergenceType = "parameter_change" // delta: new values of existing scalars in state["params"] (or the top level)
	DivergePlanEdit        DivergenceType = "plan_edit"        // task runs: delta: the edited plan
)

// SeedPolicy says where a child's seed comes from.
type SeedPolicy string

// The seed policies.
const (
	SeedInherit SeedPolicy = "inherit" // the parent's seed and RNG state continue
	SeedDerive  SeedPolicy = "derive"  // a seed derived from the parent's seed and the fork id
	SeedFresh   SeedPolicy = "fresh"   // a new random seed
)

// Fork records how a child world came from a parent run's checkpoint.
type Fork struct {
	ID            string          `json:"id"`
	ParentWorldID string          `json:"parentWorldId"`
	ParentRunID   string          `json:"parentRunId"`
	CheckpointID  string          `json:"checkpointId"`
	ChildWorldID  string          `json:"childWorldId"`
	Divergence    DivergenceType  `json:"divergence"`
	Delta         json.RawMessage `json:"delta"`
	SeedPolicy    SeedPolicy      `json:"seedPolicy"`
	CreatedAt     time.Time       `json:"createdAt"`
}

// WorldQuery selects worlds for a list, newest first, a page at a time.
type WorldQuery struct {
	// Domain keeps worlds of one domain; empty keeps both.
	Domain Domain `json:"domain,omitempty"`
	// Parent keeps the worlds forked directly from this world.
	Parent string `json:"parent,omitempty"`
	// Text keeps worlds whose name contains it (any case) or whose id
	// starts with it.
	Text string `json:"text,omitempty"`
	// WithoutBranches leaves out the worlds of deliberation branches
	// (BranchRound), which a search records by the hundred and the lineage
	// shows under their rounds. A world forked from a branch by hand is not
	// one.
	WithoutBranches bool `json:"withoutBranches,omitempty"`
	// After is the Next of the page before; empty starts at the newest.
	After string `json:"after,omitempty"`
	// Limit is the most worlds on a page (1–500; 0 means 100).
	Limit int `json:"limit,omitempty"`
}

// BranchRound is the one definition of a deliberation branch. Given the
// deliberation indexes of a world's runs, it is the round of deliberation
// the world serves as a branch: the greatest of them. A world is a branch
// when its BranchRound is above 0, which is when one of its runs serves a
// round. Folding one index at a time gives the same answer
// (BranchRound(BranchRound(a, b), c)), so a reader of many runs keeps one
// number a world.
//
// The lineage, its outline (the window's drawing) and `ducklm world ls` read
// it; the store's paged world list says the same in SQL (backend/store,
// branchTest), and TestOneDefinitionOfABranch holds the two together.
func BranchRound(deliberationIndexes ...int64) int64 {
	var round int64
	for _, i := range deliberationIndexes {
		round = max(round, i)
	}
	return round
}

// WorldSummary is a world as a list shows it: its latest run and, for a
// fork, how it left its parent.
type WorldSummary struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Domain    Domain    `json:"domain"`
	Parent    string    `json:"parent,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	Runs      int       `json:"runs"`
	// Forks counts the worlds forked directly from this one; Branches, how
	// many of them are deliberation branches.
	Forks    int `json:"forks"`
	Branches int `json:"branches,omitempty"`
	// LatestRun is the newest run's id, status and world-local time; nil
	// for a world without runs.
	LatestRun *RunSummary `json:"latestRun,omitempty"`
	// Fork says how a forked world left its parent; nil for a root.
	Fork *ForkSummary `json:"fork,omitempty"`
}

// RunSummary is a run as a world list shows it.
type RunSummary struct {
	ID             string    `json:"id"`
	Status         RunStatus `json:"status"`
	WorldLocalTime int64     `json:"worldLocalTime"`
	// DeliberationIndex is the round of deliberation a branch's run
	// serves; 0 for every other run.
	DeliberationIndex int64 `json:"deliberationIndex,omitempty"`
	// Stepping is set while a batch of steps is being computed for the
	// run (as this process sees it): a running simulated run without it
	// is idle, waiting for its next action.
	Stepping bool `json:"stepping,omitempty"`
}

// ForkSummary is how a world was forked: the fork, its divergence and the
// parent's world-local time at the checkpoint it started from.
type ForkSummary struct {
	ID         string         `json:"id"`
	Divergence DivergenceType `json:"divergence"`
	At         int64          `json:"at"`
}

// WorldPage is one page of a world list.
type WorldPage struct {
	Worlds []WorldSummary `json:"worlds"`
	// Total counts every world the query selects, on all pages.
	Total int `json:"total"`
	// Branches counts the deliberation branches the query matched but left
	// out (WithoutBranches), on all pages.
	Branches int `json:"branches,omitempty"`
	// Next continues the list (WorldQuery.After); empty on the last page.
	Next string `json:"next,omitempty"`
}

// BranchRecord is all that one branch of a deliberation records: its fork,
// its child world and run, its events (the last one its end checkpoint's)
// and that end checkpoint. A store that records many branches in one commit
// takes a batch of these; each branch's stream is new (its events start at
// seq 1).
type BranchRecord struct {
	Fork       Fork
	Child      WorldSpec
	Run        WorldRun
	Events     []Event
	Checkpoint Checkpoint
}
