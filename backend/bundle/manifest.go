package bundle

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/starlark"
)

// Format names the bundle format in its manifest.
const Format = "ducklm-bundle"

// FormatVersion is the manifest format this build writes and reads.
const FormatVersion = 1

// Entry names in the archive.
const (
	ManifestName    = "manifest.json"
	SignatureName   = "signature"
	SpecsName       = "specs.jsonl"
	RunsName        = "runs.jsonl"
	ForksName       = "forks.jsonl"
	CheckpointsName = "checkpoints.jsonl"
	eventsDir       = "events/"
	eventsExt       = ".jsonl"
	blobsDir        = "blobs/sha256/"
)

// metaNames are the record entries, in the order a bundle holds them.
var metaNames = []string{SpecsName, RunsName, ForksName, CheckpointsName}

// Manifest describes a bundle. It is the first entry, and the signature
// covers its exact bytes, so it vouches for every other entry through
// their digests.
type Manifest struct {
	Format        string    `json:"format"`
	FormatVersion int       `json:"formatVersion"`
	AppVersion    string    `json:"appVersion"`
	CreatedAt     time.Time `json:"createdAt"`
	// Roots are the run or world ids the bundle was exported for.
	Roots   []string `json:"roots"`
	Scope   Scope    `json:"scope"`
	Counts  Counts   `json:"counts"`
	Entries []Entry  `json:"entries"`
}

// Scope says what was exported beside the roots.
type Scope struct {
	// Ancestry: every ancestor world, run, fork, checkpoint and stream a
	// forked root needs to read its full history.
	Ancestry bool `json:"ancestry"`
	// Descendants: every world forked (directly or not) from the roots.
	Descendants bool `json:"descendants"`
}

// Counts are the sizes of a bundle or of what an import added.
type Counts struct {
	Worlds      int64 `json:"worlds"`
	Runs        int64 `json:"runs"`
	Forks       int64 `json:"forks"`
	Checkpoints int64 `json:"checkpoints"`
	Streams     int64 `json:"streams"`
	Events      int64 `json:"events"`
	Blobs       int64 `json:"blobs"`
}

// String lists the counts in words.
func (c Counts) String() string {
	return fmt.Sprintf("%s, %s, %s, %s, %s in %s, %s", plural(c.Worlds, "world"), plural(c.Runs, "run"),
		plural(c.Forks, "fork"), plural(c.Checkpoints, "checkpoint"), plural(c.Events, "event"),
		plural(c.Streams, "stream"), plural(c.Blobs, "blob"))
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Zero reports whether nothing is counted.
func (c Counts) Zero() bool { return c == Counts{} }

// Entry is one archive entry other than the manifest and the signature.
type Entry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // 64 lowercase hex digits
}

// Signature is the content of the signature entry.
type Signature struct {
	Algorithm string `json:"algorithm"` // "ed25519"
	PublicKey []byte `json:"publicKey"` // 32 bytes (base64 in JSON)
	Value     []byte `json:"signature"` // 64 bytes over the manifest's bytes
}

// Limits bound what a reader accepts, so a hostile bundle cannot exhaust
// memory, disk or time.
type Limits struct {
	MaxEntries       int   // entries in the archive
	MaxEntryBytes    int64 // one events file or blob
	MaxRecordsBytes  int64 // the manifest and each record file (held in memory)
	MaxLineBytes     int   // one JSON line (one event)
	MaxTotalBytes    int64 // everything the archive decompresses to
	MaxWindowBytes   uint64
	MaxSignatureSize int64
}

// DefaultLimits are generous for real bundles and still bounded.
func DefaultLimits() Limits {
	return Limits{
		MaxEntries:       250_000,
		MaxEntryBytes:    16 << 30,
		MaxRecordsBytes:  256 << 20,
		MaxLineBytes:     64 << 20,
		MaxTotalBytes:    64 << 30,
		MaxWindowBytes:   64 << 20,
		MaxSignatureSize: 4 << 10,
	}
}

// manifestBytes bounds the manifest: about 256 bytes for each entry it
// may list, within the bound of record files.
func (l Limits) manifestBytes() int64 {
	return min(l.MaxRecordsBytes, int64(l.MaxEntries)*256+64<<10)
}

// Progress reports how far an export or import is.
type Progress struct {
	Phase        string `json:"phase"` // "export", "verify" or "write"
	Entries      int    `json:"entries"`
	TotalEntries int    `json:"totalEntries"`
	Bytes        int64  `json:"bytes"`
	TotalBytes   int64  `json:"totalBytes"`
}

// Store is what bundles read of the world registry.
type Store interface {
	GetSpec(ctx context.Context, id string) (backend.WorldSpec, error)
	ListSpecs(ctx context.Context) ([]backend.WorldSpec, error)
	GetRun(ctx context.Context, id string) (backend.WorldRun, error)
	ListRuns(ctx context.Context, worldID string) ([]backend.WorldRun, error)
	GetCheckpoint(ctx context.Context, id string) (backend.Checkpoint, error)
	ListCheckpoints(ctx context.Context, runID string) ([]backend.Checkpoint, error)
	ListForks(ctx context.Context) ([]backend.Fork, error)
	ForkOf(ctx context.Context, childWorldID string) (backend.Fork, error)
}

// Events is what bundles read of the ledger.
type Events interface {
	Query(ctx context.Context, q backend.EventQuery) ([]backend.Event, error)
	Head(ctx context.Context, stream string) (int64, error)
}

// Blobs is what bundles need of the blob store.
type Blobs interface {
	Open(digest string) (io.ReadCloser, error)
	Has(ctx context.Context, digest string) (bool, error)
	PutReader(ctx context.Context, r io.Reader, mediaType string) (backend.BlobRef, error)
}

// Local is the data directory a bundle is exported from or checked
// against. A nil field means an empty installation.
type Local struct {
	Store  Store
	Events Events
	Blobs  Blobs
	// Programs runs the world programs a simulated run's replay needs
	// (a worldproc.Pool bounds their memory; nil runs them in this
	// process), under WorldLimits (zero: the defaults).
	Programs    starlark.Runner
	WorldLimits starlark.Limits
}

// kind classifies an entry name; it never interprets a name as a path.
type kind int

const (
	kindBad kind = iota
	kindManifest
	kindSignature
	kindRecords
	kindEvents
	kindBlob
)

// classify returns what an entry is and, for events and blobs, the run id
// or the blob digest it names. Only the exact shapes above are accepted:
// no absolute path, no "..", no other folder, no stray character.
func classify(name string) (kind, string) {
	switch name {
	case ManifestName:
		return kindManifest, ""
	case SignatureName:
		return kindSignature, ""
	case SpecsName, RunsName, ForksName, CheckpointsName:
		return kindRecords, ""
	}
	if rest, ok := strings.CutPrefix(name, eventsDir); ok {
		stream, ok := strings.CutSuffix(rest, eventsExt)
		if ok && (backend.CheckID(stream, backend.KindRun) == nil || backend.CheckID(stream, backend.KindDeliberation) == nil) {
			return kindEvents, stream
		}
		return kindBad, ""
	}
	if hex, ok := strings.CutPrefix(name, blobsDir); ok {
		if blob.CheckDigest("sha256:"+hex) == nil {
			return kindBlob, "sha256:" + hex
		}
	}
	return kindBad, ""
}

func eventsName(runID string) string { return eventsDir + runID + eventsExt }

func blobName(digest string) string { return blobsDir + strings.TrimPrefix(digest, "sha256:") }

// corrupt is a problem with a bundle: it failed verification.
func corrupt(format string, args ...any) error {
	return backend.Errorf(backend.ECORRUPT, format, args...)
}
