package backend

import (
	"context"
	"encoding/json"
	"time"
)

// Reality says what kind of fact an event records. A world-local event can
// never become an external-real fact: the ledger refuses to record one under
// the other reality and offers no conversion.
type Reality string

const (
	// ExternalReal events record things that happened on this machine: task
	// runs, tool results, approvals.
	ExternalReal Reality = "external_real"
	// WorldLocal events record what happened inside a simulated world.
	WorldLocal Reality = "world_local"
)

// Valid reports whether r is one of the two realities.
func (r Reality) Valid() bool { return r == ExternalReal || r == WorldLocal }

// Event is the ledger's envelope. The ledger assigns Seq, Pos and RecordedAt;
// the caller may choose ID (a retry with the same id and content is a no-op).
// The three clocks are separate fields on purpose and are never derived from
// one another.
type Event struct {
	ID            string          `json:"id"`
	Stream        string          `json:"stream"`
	Seq           int64           `json:"seq"`
	Pos           int64           `json:"pos"` // global position across streams, assigned at commit
	Type          string          `json:"type"`
	SchemaVersion int             `json:"schemaVersion"`
	Payload       json.RawMessage `json:"payload"`
	Reality       Reality         `json:"reality"`
	CausationID   string          `json:"causationId,omitempty"`
	CorrelationID string          `json:"correlationId,omitempty"`
	RecordedAt    time.Time       `json:"recordedAt"`

	// ParentTime is the parent world's local time at the fork (0 for a root).
	ParentTime int64 `json:"parentTime"`
	// DeliberationIndex is the deliberation step of the parent this world serves.
	DeliberationIndex int64 `json:"deliberationIndex"`
	// WorldLocalTime is the world's own tick count when the event happened.
	WorldLocalTime int64 `json:"worldLocalTime"`
}

// EventSchemaVersion is the newest event envelope and payload schema this
// build writes and understands. An event that claims a newer one (from a
// bundle made by a later ducklm) is refused: this build would misread it.
const EventSchemaVersion = 1

// ExpectAny tells Append not to check the stream's current head.
const ExpectAny int64 = -1

// EventQuery selects events. Zero values mean "no filter".
type EventQuery struct {
	Stream  string
	FromSeq int64 // inclusive
	ToSeq   int64 // inclusive; 0 = no upper bound
	Types   []string
	Reality Reality
	Limit   int
}

// EventPage is one newest-first page of a stream.
type EventPage struct {
	Events []Event `json:"events"`
	// Next is the seq cursor for the following (older) page; 0 when there is none.
	Next int64 `json:"next"`
}

// Ledger is the durable, append-only event store: the source of truth.
type Ledger interface {
	// Append records events on one stream in one transaction, assigning
	// gap-free seqs after the stream's head. When expect is not ExpectAny it
	// must equal the head, or the append fails with ECONFLICT. Events whose
	// id is already stored with the same content are skipped (a retry);
	// with different content they fail with ECONFLICT. It returns the
	// events as stored.
	Append(ctx context.Context, stream string, expect int64, events ...Event) ([]Event, error)
	// Head returns the stream's last seq (0 for an empty or unknown stream).
	Head(ctx context.Context, stream string) (int64, error)
	// Query returns events of one stream in seq order (or across streams in
	// pos order when Stream is empty).
	Query(ctx context.Context, q EventQuery) ([]Event, error)
	// Page returns up to limit events of stream, newest first, with seq < before
	// (before = 0 starts at the head).
	Page(ctx context.Context, stream string, before int64, limit int) (EventPage, error)
	// Since returns up to limit events across all streams with pos > after,
	// in pos order.
	Since(ctx context.Context, after int64, limit int) ([]Event, error)
	// Get returns one event by id.
	Get(ctx context.Context, id string) (Event, error)
}
