package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/deliberation"
)

// VerifyOptions tune Verify and the first pass of Import.
type VerifyOptions struct {
	Limits   Limits // zero: DefaultLimits
	Trust    Trust
	Progress func(Progress)
}

// Report is what verifying a bundle found.
type Report struct {
	Manifest Manifest `json:"manifest"`
	Signed   bool     `json:"signed"`
	// Signer is the fingerprint of the key that signed the manifest.
	Signer string `json:"signer,omitempty"`
	// Known reports whether the signer is trusted here; Trust says why.
	Known bool   `json:"known"`
	Trust string `json:"trust"`
	// Counts are what the bundle holds, as verified.
	Counts Counts `json:"counts"`
	// Checks say which steps of the verification passed.
	Checks Checks `json:"checks"`
	// Worlds are the worlds the bundle holds, with their runs, parents
	// first (once verified).
	Worlds []HeldWorld `json:"worlds"`
	// Notes are what a person should know of a good bundle: a run whose
	// record claims a status its events do not give (import recomputes it).
	Notes []string `json:"notes,omitempty"`
	// Replayed counts the simulated runs re-executed to the same events.
	Replayed int    `json:"replayed"`
	OK       bool   `json:"ok"`
	Problem  string `json:"problem,omitempty"`
}

// Checks are the steps of verifying a bundle, in order; each is true once
// it passed, and a step is only tried after the one before it passed.
type Checks struct {
	// Manifest: readable, of the format version this ducklm reads, and
	// every entry it lists has a well-formed name, size and digest.
	Manifest bool `json:"manifest"`
	// Signature: the signature matches the manifest's bytes (true for an
	// unsigned bundle, which has no signature to fail; see Report.Signed).
	Signature bool `json:"signature"`
	// Entries: every entry has the size and sha256 the manifest lists, and
	// every record and event is well formed.
	Entries bool `json:"entries"`
	// References: every id a record names resolves in the bundle or here,
	// the counts agree, and the lineage stays acyclic.
	References bool `json:"references"`
	// Replay: every simulated run with events in the bundle re-executes,
	// through its fork chain, to exactly the events the bundle records
	// (checked when the bundle can be read again: VerifyFile and Import).
	Replay bool `json:"replay"`
}

// HeldWorld is a world a bundle holds.
type HeldWorld struct {
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	Domain        backend.Domain `json:"domain"`
	ParentWorldID string         `json:"parentWorldId,omitempty"`
	Runs          []HeldRun      `json:"runs"`
}

// HeldRun is a run a bundle holds.
type HeldRun struct {
	ID string `json:"id"`
	// Status is what the run's events give: what an import records.
	Status backend.RunStatus `json:"status"`
	// RecordedStatus and RecordedError are what the bundle's run record
	// claims, set only when they differ from what the events give.
	RecordedStatus backend.RunStatus `json:"recordedStatus,omitempty"`
	RecordedError  string            `json:"recordedError,omitempty"`
	// Events in the bundle's stream of the run (not counting those it
	// shares with the run it continues).
	Events int64 `json:"events"`
}

// checked is a verified bundle: its records and, for what is too big to
// hold (events, blobs), only what references need.
type checked struct {
	report Report
	sum    [sha256.Size]byte // of the manifest's bytes

	specs []backend.WorldSpec
	runs  []backend.WorldRun
	forks []backend.Fork
	cps   []backend.Checkpoint

	// Indexes into the slices above, by id (forkByChild: by child world).
	spec, run, fork, cp, forkByChild map[string]int

	heads map[string]int64       // events per stream in the bundle
	folds map[string]*statusFold // each run's status, from its own events
	// recorded holds what a run's record claimed, for each run whose
	// claim recomputeStatuses replaced with another status or error.
	recorded map[string]backend.WorldRun
	blobs    map[string]bool // digests of the blob entries
	real     map[string]backend.Reality

	local Local
	cache localCache
}

// Verify reads a bundle once and checks it completely without writing
// anything: the manifest and its format version, the signature, every
// entry's size and digest, every record and event, and every reference,
// resolved inside the bundle or in local. The error is the first problem.
func Verify(ctx context.Context, local Local, r io.Reader, opts VerifyOptions) (Report, error) {
	c, err := verify(ctx, local, r, opts)
	if err != nil {
		c.report.Problem = backend.ErrorMessage(err)
		return c.report, err
	}
	return c.report, nil
}

func verify(ctx context.Context, local Local, r io.Reader, opts VerifyOptions) (*checked, error) {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits()
	}
	c := &checked{
		spec: map[string]int{}, run: map[string]int{}, fork: map[string]int{}, cp: map[string]int{}, forkByChild: map[string]int{},
		heads: map[string]int64{}, folds: map[string]*statusFold{}, blobs: map[string]bool{}, real: map[string]backend.Reality{},
		local: local, cache: newLocalCache(),
	}
	c.report.Trust = "unsigned"
	rd, err := newReader(r, opts.Limits)
	if err != nil {
		return c, err
	}
	defer rd.close()
	h, data, err := readManifest(rd)
	if err != nil {
		return c, err
	}
	m, err := parseManifest(data, opts.Limits)
	if err != nil {
		return c, err
	}
	c.report.Manifest, c.sum = m, sha256.Sum256(data)
	c.report.Checks.Manifest = true
	rd.allow(m, h.Size)

	h, err = rd.next()
	if err == nil && h.Name == SignatureName {
		sig, serr := rd.readAll(h)
		if serr != nil {
			return c, serr
		}
		if c.report.Signer, serr = checkSignature(sig, data); serr != nil {
			return c, serr
		}
		c.report.Signed, c.report.Checks.Signature = true, true
		c.report.Known, c.report.Trust = opts.Trust.Known(c.report.Signer)
		h, err = rd.next()
	}
	if err == nil || errors.Is(err, io.EOF) { // signed and checked above, or unsigned
		c.report.Checks.Signature = true
	}
	p := Progress{Phase: "verify", TotalEntries: len(m.Entries)}
	for _, e := range m.Entries {
		p.TotalBytes += e.Size
	}
	for _, want := range m.Entries {
		if errors.Is(err, io.EOF) {
			return c, corrupt("the bundle is truncated: entry %s is missing", want.Name)
		}
		if err != nil {
			return c, err
		}
		if err := ctx.Err(); err != nil {
			return c, err
		}
		er, oerr := rd.open(h, want)
		if oerr != nil {
			return c, oerr
		}
		var perr error
		switch k, id := classify(want.Name); k {
		case kindRecords:
			perr = c.readRecords(want.Name, er, opts.Limits)
		case kindEvents:
			perr = c.readEvents(ctx, id, er, opts.Limits)
		case kindBlob:
			c.blobs[id] = true
		}
		// An altered entry is reported as altered, whatever its content
		// looked like to the parser.
		if err := er.finish(); err != nil {
			return c, err
		}
		if perr != nil {
			return c, perr
		}
		p.Entries++
		p.Bytes += want.Size
		if opts.Progress != nil {
			opts.Progress(p)
		}
		h, err = rd.next()
	}
	if err == nil {
		return c, corrupt("entry %s is not listed in the manifest", quote(h.Name))
	}
	if !errors.Is(err, io.EOF) {
		return c, err
	}
	c.report.Checks.Entries = true
	c.recomputeStatuses()
	if err := c.checkRefs(ctx); err != nil {
		return c, err
	}
	c.report.Checks.References = true
	c.report.Worlds = c.held()
	c.report.Notes = c.statusNotes()
	c.report.OK = true
	return c, nil
}

// held lists the verified worlds and their runs in the bundle's order.
func (c *checked) held() []HeldWorld {
	out := make([]HeldWorld, 0, len(c.specs))
	at := make(map[string]int, len(c.specs))
	for _, s := range c.specs {
		at[s.ID] = len(out)
		out = append(out, HeldWorld{ID: s.ID, Name: s.Name, Domain: s.Domain, ParentWorldID: s.ParentWorldID, Runs: []HeldRun{}})
	}
	for _, r := range c.runs {
		// A run's world is in the bundle or here (checked); only the
		// bundle's worlds are listed.
		if i, ok := at[r.WorldID]; ok {
			h := HeldRun{ID: r.ID, Status: r.Status, Events: c.heads[r.ID]}
			if was, ok := c.recorded[r.ID]; ok {
				h.RecordedStatus, h.RecordedError = was.Status, was.Error
			}
			out[i].Runs = append(out[i].Runs, h)
		}
	}
	return out
}

func readManifest(rd *reader) (*tar.Header, []byte, error) {
	h, err := rd.next()
	if errors.Is(err, io.EOF) {
		return nil, nil, corrupt("the bundle is empty")
	}
	if err != nil {
		return nil, nil, err
	}
	if h.Name != ManifestName {
		return nil, nil, corrupt("the bundle's first entry is %s, not %s", quote(h.Name), ManifestName)
	}
	data, err := rd.readAll(h)
	return h, data, err
}

// parseManifest reads and checks a manifest: format, version, entry names,
// their order (records, then events, then blobs), sizes and digests.
func parseManifest(data []byte, limits Limits) (Manifest, error) {
	var m Manifest
	if err := strictJSON(data, &m); err != nil {
		return m, corrupt("the manifest is not readable JSON")
	}
	if m.Format != Format {
		return m, corrupt("this is not a ducklm bundle (format %q)", clip(m.Format))
	}
	if m.FormatVersion != FormatVersion {
		return m, corrupt("the bundle has format version %d; this ducklm reads version %d (upgrade ducklm to import it)", m.FormatVersion, FormatVersion)
	}
	if len(m.Roots) == 0 {
		return m, corrupt("the manifest names no root run or world")
	}
	for _, id := range m.Roots {
		if backend.CheckID(id, backend.KindRun) != nil && backend.CheckID(id, backend.KindWorld) != nil {
			return m, corrupt("the manifest's root %s is not a run or world id", quote(id))
		}
	}
	if len(m.Entries) > limits.MaxEntries {
		return m, backend.Errorf(backend.ELIMIT, "the bundle lists %d entries, past the limit of %d", len(m.Entries), limits.MaxEntries)
	}
	seen := make(map[string]bool, len(m.Entries))
	var total int64
	var streams, blobs int64
	stage := 0 // 0..3 the record files in order, 4 events, 5 blobs
	for i, e := range m.Entries {
		k, id := classify(e.Name)
		switch {
		case k == kindRecords && i < len(metaNames) && e.Name == metaNames[i]:
			stage = i
		case k == kindEvents && stage >= len(metaNames)-1 && stage <= 4:
			stage = 4
			streams++
		case k == kindBlob && stage >= len(metaNames)-1:
			stage = 5
			blobs++
			if "sha256:"+e.SHA256 != id {
				return m, corrupt("blob %s is listed with another digest (%s); a blob's name is its digest", quote(e.Name), quote(e.SHA256))
			}
		default:
			return m, corrupt("the manifest lists %s out of place (records come first, then events, then blobs)", quote(e.Name))
		}
		if seen[e.Name] {
			return m, corrupt("the manifest lists %s twice", e.Name)
		}
		seen[e.Name] = true
		if blob.CheckDigest("sha256:"+e.SHA256) != nil {
			return m, corrupt("the manifest's digest of %s is not 64 lowercase hex digits", e.Name)
		}
		max := limits.MaxEntryBytes
		if k == kindRecords {
			max = limits.MaxRecordsBytes
		}
		if e.Size < 0 || e.Size > max {
			return m, backend.Errorf(backend.ELIMIT, "entry %s is %s, past the limit of %s", quote(e.Name), byteSize(e.Size), byteSize(max))
		}
		if total += e.Size; total > limits.MaxTotalBytes {
			return m, backend.Errorf(backend.ELIMIT, "the bundle holds more than %s, past the limit", byteSize(limits.MaxTotalBytes))
		}
	}
	for _, name := range metaNames {
		if !seen[name] {
			return m, corrupt("the manifest does not list %s", name)
		}
	}
	if m.Counts.Streams != streams || m.Counts.Blobs != blobs {
		return m, corrupt("the manifest counts %d streams and %d blobs, but lists %d and %d", m.Counts.Streams, m.Counts.Blobs, streams, blobs)
	}
	return m, nil
}

// checkSignature verifies a signature entry over the manifest's bytes and
// returns the signer's fingerprint.
func checkSignature(data, manifest []byte) (string, error) {
	var s Signature
	if err := strictJSON(data, &s); err != nil || s.Algorithm != "ed25519" {
		return "", corrupt("the bundle's signature is unreadable (expected an ed25519 signature)")
	}
	if len(s.PublicKey) != ed25519.PublicKeySize || len(s.Value) != ed25519.SignatureSize {
		return "", corrupt("the bundle's signature is malformed")
	}
	if !ed25519.Verify(ed25519.PublicKey(s.PublicKey), manifest, s.Value) {
		return "", corrupt("the signature does not match the manifest: the bundle was altered after it was signed")
	}
	return Fingerprint(s.PublicKey), nil
}

// readRecords reads one record file into c.
func (c *checked) readRecords(name string, r io.Reader, limits Limits) error {
	line := 0
	return scanLines(r, name, limits.MaxLineBytes, func(data []byte) error {
		line++
		var err error
		switch name {
		case SpecsName:
			var s backend.WorldSpec
			if err = strictJSON(data, &s); err == nil {
				err = c.addSpec(s)
			}
		case RunsName:
			var r backend.WorldRun
			if err = strictJSON(data, &r); err == nil {
				err = c.addRun(r)
			}
		case ForksName:
			var f backend.Fork
			if err = strictJSON(data, &f); err == nil {
				err = c.addFork(f)
			}
		case CheckpointsName:
			var cp backend.Checkpoint
			if err = strictJSON(data, &cp); err == nil {
				err = c.addCheckpoint(cp)
			}
		}
		if isJSONError(err) {
			return corrupt("line %d of %s is not a valid record", line, name)
		}
		return err
	})
}

// readEvents checks one stream: its run is in the bundle, its events are
// its own, gap-free from seq 1, with ids of the event kind and the reality
// of the run's world.
//
// A run's deliberation stream (dlb_<the run's id>) holds external-real
// records of its rounds only, and comes with its run.
func (c *checked) readEvents(ctx context.Context, runID string, r io.Reader, limits Limits) error {
	owner, isDeliberation := deliberationOwner(runID)
	i, ok := c.run[owner]
	if !ok {
		return corrupt("the bundle holds events of run %s but no record of it", owner)
	}
	reality := backend.ExternalReal
	if !isDeliberation {
		var err error
		if reality, err = c.realityOf(ctx, c.runs[i].WorldID); err != nil {
			return err
		}
	}
	c.real[runID] = reality
	name := eventsName(runID)
	var fold *statusFold
	if !isDeliberation {
		fold = newStatusFold()
		c.folds[runID] = fold
	}
	var seq int64
	err := scanLines(r, name, limits.MaxLineBytes, func(data []byte) error {
		e, err := decodeEvent(data)
		if err != nil {
			return corrupt("line %d of %s is not a valid event", seq+1, name)
		}
		if err := checkEvent(e, runID, seq+1, reality); err != nil {
			return err
		}
		if isDeliberation && e.Type != deliberation.EventRound {
			return corrupt("event %s of the deliberation stream %s is a %s; such a stream records rounds only", e.ID, runID, quote(e.Type))
		}
		seq = e.Seq
		if fold != nil {
			fold.apply(e)
		}
		return nil
	})
	c.heads[runID] = seq
	c.report.Counts.Events += seq
	return err
}

// deliberationOwner returns the run a deliberation stream belongs to (and
// true), or stream itself for a run's own stream.
func deliberationOwner(stream string) (string, bool) {
	if body, ok := strings.CutPrefix(stream, string(backend.KindDeliberation)+"_"); ok {
		return string(backend.KindRun) + "_" + body, true
	}
	return stream, false
}

func decodeEvent(data []byte) (backend.Event, error) {
	var e backend.Event
	err := strictJSON(data, &e)
	return e, err
}

func checkEvent(e backend.Event, stream string, seq int64, reality backend.Reality) error {
	switch {
	case e.Stream != stream:
		return corrupt("event %s in %s names stream %s", quote(e.ID), eventsName(stream), quote(e.Stream))
	case backend.CheckID(e.ID, backend.KindEvent) != nil:
		return corrupt("seq %d of stream %s has an id that is not an event id (%s)", seq, stream, quote(e.ID))
	case e.Seq != seq:
		return corrupt("stream %s jumps from seq %d to seq %d; a stream's seqs are gap-free from 1", stream, seq-1, e.Seq)
	case e.Reality != reality:
		return corrupt("event %s of stream %s is %s, but its world's events are %s", e.ID, stream, quote(string(e.Reality)), reality)
	case e.Type == "":
		return corrupt("event %s has no type", e.ID)
	case e.SchemaVersion < 1:
		return corrupt("event %s has schema version %d", e.ID, e.SchemaVersion)
	case e.SchemaVersion > backend.EventSchemaVersion:
		return corrupt("event %s has schema version %d; this ducklm reads events up to version %d (upgrade ducklm to import it)",
			e.ID, e.SchemaVersion, backend.EventSchemaVersion)
	case len(e.Payload) == 0 || !json.Valid(e.Payload):
		return corrupt("event %s has a payload that is not valid JSON", e.ID)
	case e.ParentTime < 0 || e.DeliberationIndex < 0 || e.WorldLocalTime < 0:
		return corrupt("event %s has a negative clock", e.ID)
	case e.RecordedAt.IsZero():
		return corrupt("event %s has no recorded time", e.ID)
	}
	return nil
}

// scanLines calls fn for each non-empty line of r.
func scanLines(r io.Reader, name string, max int, fn func([]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, max)), max)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return backend.Errorf(backend.ELIMIT, "a line of %s is longer than the limit of %d bytes", name, max)
	} else if err != nil {
		return err
	}
	return nil
}

// strictJSON decodes one JSON value with no unknown field and nothing after it.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &jsonError{err}
	}
	if dec.More() {
		return &jsonError{errors.New("trailing data")}
	}
	return nil
}

type jsonError struct{ err error }

func (e *jsonError) Error() string { return e.err.Error() }

func isJSONError(err error) bool {
	var je *jsonError
	return errors.As(err, &je)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
