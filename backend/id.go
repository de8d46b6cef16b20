package backend

import (
	"strings"

	"github.com/google/uuid"
)

// IDKind is the prefix that names what an id identifies.
type IDKind string

// The id kinds. Every id is "<prefix>_<uuidv7 without dashes>": time-sortable,
// unique, and self-describing, so an id of the wrong kind is caught at the edge.
const (
	KindWorld      IDKind = "wld"
	KindRun        IDKind = "run"
	KindCheckpoint IDKind = "ckp"
	KindEvent      IDKind = "evt"
	KindFork       IDKind = "frk"
	KindTask       IDKind = "tsk"
	KindStep       IDKind = "stp"
	KindApproval   IDKind = "apr"
	KindMemory     IDKind = "mem"
	KindBundle     IDKind = "bnd"
	// KindDeliberation names a run's deliberation stream: it shares the
	// run id's body (dlb_X records the rounds of run_X).
	KindDeliberation IDKind = "dlb"
	// KindMCP names the stream of one MCP server (ducklm mcp serve, or the
	// endpoint of ducklm serve): every call an MCP client made of it.
	KindMCP IDKind = "mcp"
)

var kindNames = map[IDKind]string{
	KindWorld:        "world",
	KindRun:          "run",
	KindCheckpoint:   "checkpoint",
	KindEvent:        "event",
	KindFork:         "fork",
	KindTask:         "task",
	KindStep:         "step",
	KindApproval:     "approval request",
	KindMemory:       "memory",
	KindBundle:       "bundle",
	KindDeliberation: "deliberation stream",
	KindMCP:          "MCP server stream",
}

// String returns the human name of the kind ("world", "run", ...).
func (k IDKind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return string(k)
}

// NewID returns a fresh id of the given kind.
func NewID(kind IDKind) string {
	u := uuid.Must(uuid.NewV7())
	var b strings.Builder
	b.Grow(len(kind) + 1 + 32)
	b.WriteString(string(kind))
	b.WriteByte('_')
	const hex = "0123456789abcdef"
	for _, c := range u {
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// KindOf returns the kind of a well-formed id, or an EINVALID error.
func KindOf(id string) (IDKind, error) {
	prefix, body, ok := strings.Cut(id, "_")
	if !ok || prefix == "" {
		return "", Errorf(EINVALID, "%q is not a ducklm id (expected a prefix such as wld_ or run_)", id)
	}
	kind := IDKind(prefix)
	if _, known := kindNames[kind]; !known {
		return "", Errorf(EINVALID, "%q has an unknown id prefix %q", id, prefix)
	}
	if len(body) != 32 {
		return "", Errorf(EINVALID, "%q is not a valid %s id (the part after %s_ must be 32 hex digits)", id, kind, prefix)
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", Errorf(EINVALID, "%q is not a valid %s id (it has a character that is not a lowercase hex digit)", id, kind)
		}
	}
	return kind, nil
}

// CheckID returns nil when id is a well-formed id of the wanted kind, and a
// clear EINVALID error otherwise (including an id of another kind).
func CheckID(id string, want IDKind) error {
	kind, err := KindOf(id)
	if err != nil {
		return err
	}
	if kind != want {
		return Errorf(EINVALID, "%q is a %s id, but a %s id was expected", id, kind, want)
	}
	return nil
}
