package bundle

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"os"
	"sort"
	"time"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/deliberation"
)

// ExportOptions tune Export.
type ExportOptions struct {
	// Ancestry includes what a forked root needs to read its full history.
	Ancestry bool
	// Descendants includes every world forked from the roots' runs.
	Descendants bool
	// Key signs the manifest; nil leaves the bundle unsigned.
	Key *Key
	// TempDir holds the spooled records and events while their digests are
	// computed ("" = the system's temporary folder).
	TempDir  string
	Progress func(Progress)
	Now      func() time.Time
}

// eventPage is how many events an export reads at a time.
const eventPage = 5000

// Export writes the bundle of root (a run or a world id) to w and returns
// its manifest. The manifest comes first and holds every entry's digest, so
// records and events are first spooled to a temporary file (hashed as they
// are written), then copied after it; blobs stream from the blob store,
// verified on the way. Memory does not grow with events or blob sizes.
func Export(ctx context.Context, local Local, root string, w io.Writer, opts ExportOptions) (Manifest, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sc, err := collect(ctx, local.Store, root, opts.Ancestry, opts.Descendants)
	if err != nil {
		return Manifest{}, err
	}
	m := Manifest{Format: Format, FormatVersion: FormatVersion, AppVersion: backend.Version,
		CreatedAt: opts.Now().UTC(), Roots: []string{root}, Scope: Scope{Ancestry: opts.Ancestry, Descendants: opts.Descendants}}

	sp, err := newSpool(opts.TempDir)
	if err != nil {
		return m, err
	}
	defer sp.close()
	specs, runs, forks := sc.sortedSpecs(), sc.sortedRuns(), sc.sortedForks()
	for _, r := range runs {
		if err := finishedTask(sc.specs[r.WorldID], r); err != nil {
			return m, &backend.Error{Code: backend.EINVALID, Message: backend.ErrorMessage(err)} // the root was the user's choice
		}
	}
	// Heads are read after the scope, so every checkpoint and fork found
	// above lies within them; events appended meanwhile are left out.
	heads := make(map[string]int64, len(runs))
	for _, r := range runs {
		if heads[r.ID], err = local.Events.Head(ctx, r.ID); err != nil {
			return m, err
		}
	}
	var cps []backend.Checkpoint
	for _, r := range runs {
		list, err := local.Store.ListCheckpoints(ctx, r.ID)
		if err != nil {
			return m, err
		}
		for _, cp := range list {
			if cp.LedgerSeq <= heads[r.ID] {
				cps = append(cps, cp)
			}
		}
	}
	if err := needCheckpoints(cps, runs, forks); err != nil {
		return m, err
	}

	blobs := newBlobSet()
	for _, s := range specs {
		if s.Program.Digest != "" { // a task world's request is its run's first event
			blobs.need(s.Program.Digest, "the program of world "+s.ID)
		}
		if s.InitialState != nil {
			blobs.need(s.InitialState.Digest, "the initial state of world "+s.ID)
		}
	}
	for _, cp := range cps {
		blobs.need(cp.Blob.Digest, "the state of checkpoint "+cp.ID)
	}
	if err := spoolRecords(sp, SpecsName, specs); err != nil {
		return m, err
	}
	if err := spoolRecords(sp, RunsName, runs); err != nil {
		return m, err
	}
	if err := spoolRecords(sp, ForksName, forks); err != nil {
		return m, err
	}
	if err := spoolRecords(sp, CheckpointsName, cps); err != nil {
		return m, err
	}
	for _, r := range runs {
		if heads[r.ID] == 0 {
			continue
		}
		if err := spoolEvents(ctx, sp, local.Events, r.ID, heads[r.ID], blobs); err != nil {
			return m, err
		}
		m.Counts.Streams++
		m.Counts.Events += heads[r.ID]
	}
	// A run's deliberations travel with it: the records of its rounds (the
	// branches they name are its descendants).
	for _, r := range runs {
		stream := deliberation.Stream(r.ID)
		head, err := local.Events.Head(ctx, stream)
		if err != nil {
			return m, err
		}
		if head == 0 {
			continue
		}
		if err := spoolEvents(ctx, sp, local.Events, stream, head, blobs); err != nil {
			return m, err
		}
		m.Counts.Streams++
		m.Counts.Events += head
	}
	blobEntries, err := blobs.entries(ctx, local.Blobs)
	if err != nil {
		return m, err
	}
	m.Entries = append(sp.entries, blobEntries...)
	m.Counts.Worlds, m.Counts.Runs, m.Counts.Forks = int64(len(specs)), int64(len(runs)), int64(len(forks))
	m.Counts.Checkpoints, m.Counts.Blobs = int64(len(cps)), int64(len(blobEntries))
	return m, writeBundle(w, m, sp, local.Blobs, opts)
}

// writeBundle writes the manifest, its signature and every entry.
func writeBundle(w io.Writer, m Manifest, sp *spool, blobs Blobs, opts ExportOptions) error {
	data, err := json.Marshal(m)
	if err != nil {
		return backend.Wrap(err, backend.EINTERNAL, "cannot encode the manifest")
	}
	aw, err := newWriter(w, m.CreatedAt)
	if err != nil {
		return err
	}
	if err := aw.add(ManifestName, int64(len(data)), bytes.NewReader(data)); err != nil {
		return err
	}
	if opts.Key != nil {
		sig, _ := json.Marshal(Signature{Algorithm: "ed25519", PublicKey: opts.Key.Public, Value: ed25519.Sign(opts.Key.Private, data)})
		if err := aw.add(SignatureName, int64(len(sig)), bytes.NewReader(sig)); err != nil {
			return err
		}
	}
	p := Progress{Phase: "export", TotalEntries: len(m.Entries)}
	for _, e := range m.Entries {
		p.TotalBytes += e.Size
	}
	for i, e := range m.Entries {
		var r io.Reader
		var rc io.ReadCloser
		if i < len(sp.entries) {
			r = io.NewSectionReader(sp.f, sp.offsets[i], e.Size)
		} else {
			_, digest := classify(e.Name)
			if rc, err = blobs.Open(digest); err != nil {
				return err
			}
			r = rc
		}
		err := aw.add(e.Name, e.Size, r)
		if rc != nil {
			rc.Close()
		}
		if err != nil {
			return err
		}
		p.Entries++
		p.Bytes += e.Size
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	return aw.close()
}

// needCheckpoints checks that what runs and forks point at is exported.
func needCheckpoints(cps []backend.Checkpoint, runs []backend.WorldRun, forks []backend.Fork) error {
	have := make(map[string]bool, len(cps))
	for _, cp := range cps {
		have[cp.ID] = true
	}
	for _, f := range forks {
		if !have[f.CheckpointID] {
			return backend.Errorf(backend.ECORRUPT, "fork %s starts from checkpoint %s, which is not among its parent run's checkpoints", f.ID, f.CheckpointID)
		}
	}
	for _, r := range runs {
		if r.LatestCheckpointID != "" && !have[r.LatestCheckpointID] {
			return backend.Errorf(backend.ECONFLICT, "run %s changed while it was being exported; export it again", r.ID)
		}
	}
	return nil
}

// spool is a temporary file of entries, each hashed as it is written.
type spool struct {
	f       *os.File
	bw      *bufio.Writer
	off     int64
	entries []Entry
	offsets []int64
}

func newSpool(dir string) (*spool, error) {
	f, err := os.CreateTemp(dir, "ducklm-export-*")
	if err != nil {
		return nil, backend.Wrap(err, backend.EUNAVAILABLE, "cannot create a temporary file for the export")
	}
	return &spool{f: f, bw: bufio.NewWriterSize(f, 256<<10)}, nil
}

func (s *spool) close() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// entryWriter writes one spooled entry.
type entryWriter struct {
	s    *spool
	name string
	h    hash.Hash
	n    int64
}

func (s *spool) begin(name string) *entryWriter {
	return &entryWriter{s: s, name: name, h: sha256.New()}
}

func (e *entryWriter) Write(p []byte) (int, error) {
	n, err := e.s.bw.Write(p)
	e.h.Write(p[:n])
	e.n += int64(n)
	if err != nil {
		return n, backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the export's temporary file")
	}
	return n, nil
}

func (e *entryWriter) end() error {
	if err := e.s.bw.Flush(); err != nil {
		return backend.Wrap(err, backend.EUNAVAILABLE, "cannot write the export's temporary file")
	}
	e.s.entries = append(e.s.entries, Entry{Name: e.name, Size: e.n, SHA256: hex.EncodeToString(e.h.Sum(nil))})
	e.s.offsets = append(e.s.offsets, e.s.off)
	e.s.off += e.n
	return nil
}

// encoder writes JSON lines exactly: payloads keep their bytes (no HTML
// escaping), so an imported event is byte for byte the exported one.
func encoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

func spoolRecords[T any](sp *spool, name string, records []T) error {
	ew := sp.begin(name)
	enc := encoder(ew)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			return backend.Wrap(err, backend.EINTERNAL, "cannot encode %s", name)
		}
	}
	return ew.end()
}

// spoolEvents writes a run's stream up to head, a page at a time, and notes
// the output blobs its events point at.
func spoolEvents(ctx context.Context, sp *spool, events Events, runID string, head int64, blobs *blobSet) error {
	ew := sp.begin(eventsName(runID))
	enc := encoder(ew)
	next := int64(1)
	for next <= head {
		page, err := events.Query(ctx, backend.EventQuery{Stream: runID, FromSeq: next, ToSeq: head, Limit: eventPage})
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return backend.Errorf(backend.ECORRUPT, "stream %s ends at seq %d, before its head %d", runID, next-1, head)
		}
		for _, e := range page {
			if e.Seq != next {
				return backend.Errorf(backend.ECORRUPT, "stream %s jumps from seq %d to %d", runID, next-1, e.Seq)
			}
			e.Pos = 0 // a position is local to one ledger
			if err := enc.Encode(e); err != nil {
				return backend.Wrap(err, backend.EINTERNAL, "cannot encode event %s", e.ID)
			}
			blobs.fromPayload(e.Payload)
			next++
		}
	}
	return ew.end()
}

// blobSet collects the blobs an export carries.
type blobSet struct {
	why      map[string]string // digest → what needs it ("" for a step's output)
	optional map[string]bool
}

func newBlobSet() *blobSet {
	return &blobSet{why: map[string]string{}, optional: map[string]bool{}}
}

// need adds a blob the bundle cannot do without.
func (b *blobSet) need(digest, why string) {
	b.why[digest] = why
	delete(b.optional, digest)
}

// fromPayload adds the output blobs an event's payload points at (a step's
// stdout and stderr, a coder's script). They are carried when present; an
// event keeps the tail of its output inline either way.
func (b *blobSet) fromPayload(payload json.RawMessage) {
	if !bytes.Contains(payload, []byte(`"digest"`)) {
		return
	}
	var refs struct {
		Stdout, Stderr, Blob *backend.BlobRef
	}
	if json.Unmarshal(payload, &refs) != nil {
		return
	}
	for _, r := range []*backend.BlobRef{refs.Stdout, refs.Stderr, refs.Blob} {
		if r == nil || blob.CheckDigest(r.Digest) != nil {
			continue
		}
		if _, ok := b.why[r.Digest]; !ok {
			b.why[r.Digest] = ""
			b.optional[r.Digest] = true
		}
	}
}

// entries checks every blob against its digest (reading it once) and
// returns their entries in digest order.
func (b *blobSet) entries(ctx context.Context, store Blobs) ([]Entry, error) {
	digests := make([]string, 0, len(b.why))
	for d := range b.why {
		digests = append(digests, d)
	}
	sort.Strings(digests)
	out := make([]Entry, 0, len(digests))
	for _, d := range digests {
		ok, err := store.Has(ctx, d)
		if err != nil {
			return nil, err
		}
		if !ok {
			if b.optional[d] {
				continue
			}
			return nil, backend.Errorf(backend.ECORRUPT, "%s (blob %s) is missing from this installation's blob store", b.why[d], d)
		}
		rc, err := store.Open(d)
		if err != nil {
			return nil, err
		}
		n, err := io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Name: blobName(d), Size: n, SHA256: d[len("sha256:"):]})
	}
	return out, nil
}
