package bundle

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"

	"ducklm/backend"
	"ducklm/backend/store"
)

// Writer writes an import in one database transaction.
type Writer interface {
	Import(ctx context.Context, fn func(tx *store.ImportTx) error) error
}

var _ Writer = (*store.Ledger)(nil)

// ErrUntrusted is the cause of refusing an unsigned bundle, or one signed
// by a key this installation does not know, without AllowUnsigned.
var ErrUntrusted = errors.New("untrusted bundle")

// ImportOptions tune Import.
type ImportOptions struct {
	VerifyOptions
	// AllowUnsigned accepts a bundle that is unsigned or signed by an
	// unknown key: the user's explicit choice. A signature that does not
	// match is refused regardless.
	AllowUnsigned bool
}

// Result is what an import did.
type Result struct {
	Report
	// Added counts what was new here; Updated counts runs already here
	// whose progress (status, clock, latest checkpoint) the bundle moved on.
	Added   Counts `json:"added"`
	Updated int64  `json:"updated"`
	// AddedIDs are the worlds and runs that were new here, parents first.
	AddedIDs []string `json:"addedIds"`
}

// AlreadyPresent reports that the import changed nothing.
func (r Result) AlreadyPresent() bool { return r.Added.Zero() && r.Updated == 0 }

// eventBatch is how many events one write carries.
const eventBatch = 1000

// ImportFile imports the bundle at path. See Import.
func ImportFile(ctx context.Context, local Local, w Writer, path string, opts ImportOptions) (Result, error) {
	return Import(ctx, local, w, openFile(path), opts)
}

// Import reads the bundle twice. The first pass verifies all of it (see
// Verify) and holds only records and per-stream counts; nothing is written
// unless it passes and the signer is trusted (or AllowUnsigned). The second
// pass writes every record and event in one transaction of w, re-checking
// each entry's digest (a file that changed in between is refused), and puts
// the blobs in the blob store by digest. Existing facts are skipped, so a
// second import of a bundle changes nothing; an id stored here with other
// content fails the import and nothing is written.
func Import(ctx context.Context, local Local, w Writer, open func() (io.ReadCloser, error), opts ImportOptions) (Result, error) {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits()
	}
	f, err := open()
	if err != nil {
		return Result{}, err
	}
	c, err := verify(ctx, local, f, opts.VerifyOptions)
	f.Close()
	res := Result{Report: c.report}
	if err != nil {
		res.Problem = backend.ErrorMessage(err)
		return res, err
	}
	if !c.report.Known && !opts.AllowUnsigned {
		msg := "the bundle is unsigned; import it with --allow-unsigned if you trust where it came from"
		if c.report.Signed {
			msg = "the bundle is signed by an unknown key (" + FormatFingerprint(c.report.Signer) +
				"); if you trust where it came from, import it with --trust to trust that signer from now on, or with --allow-unsigned to take this bundle once"
		}
		res.Problem = msg
		return res, &backend.Error{Code: backend.EINVALID, Message: msg, Err: ErrUntrusted}
	}
	// Before the transaction: a simulated run that does not re-execute to
	// its events is refused with nothing written.
	if err := c.replay(ctx, open, limitsOf(opts.VerifyOptions)); err != nil {
		res.Report = c.report
		res.Report.OK = false
		res.Problem = backend.ErrorMessage(err)
		return res, err
	}
	res.Report = c.report
	if f, err = open(); err != nil {
		return res, err
	}
	defer f.Close()
	err = w.Import(ctx, func(tx *store.ImportTx) error {
		return c.write(ctx, tx, f, local.Blobs, opts, &res)
	})
	if err != nil {
		res.Added, res.Updated, res.AddedIDs = Counts{}, 0, nil
		res.Problem = backend.ErrorMessage(err)
		return res, err
	}
	return res, nil
}

// write is the second pass, inside the import transaction.
func (c *checked) write(ctx context.Context, tx *store.ImportTx, r io.Reader, blobs Blobs, opts ImportOptions, res *Result) error {
	rd, err := newReader(r, opts.Limits)
	if err != nil {
		return err
	}
	defer rd.close()
	h, data, err := readManifest(rd)
	if err != nil {
		return err
	}
	if sha256.Sum256(data) != c.sum {
		return corrupt("the bundle changed while it was being imported; nothing was written")
	}
	m := c.report.Manifest
	rd.allow(m, h.Size)
	h, err = rd.next()
	if err == nil && h.Name == SignatureName {
		h, err = rd.next() // checked in the first pass, over the same manifest
	}
	if err := c.writeRecords(tx, res); err != nil {
		return err
	}
	p := Progress{Phase: "write", TotalEntries: len(m.Entries)}
	for _, e := range m.Entries {
		p.TotalBytes += e.Size
	}
	for _, want := range m.Entries {
		if errors.Is(err, io.EOF) {
			return corrupt("the bundle is truncated: entry %s is missing", want.Name)
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		er, oerr := rd.open(h, want)
		if oerr != nil {
			return oerr
		}
		var werr error
		switch k, id := classify(want.Name); k {
		case kindEvents:
			werr = c.writeEvents(tx, id, er, opts.Limits, res)
		case kindBlob:
			werr = writeBlob(ctx, blobs, id, er, res)
		}
		if werr != nil {
			return werr
		}
		if err := er.finish(); err != nil {
			return err
		}
		p.Entries++
		p.Bytes += want.Size
		if opts.Progress != nil {
			opts.Progress(p)
		}
		h, err = rd.next()
	}
	if !errors.Is(err, io.EOF) {
		if err == nil {
			return corrupt("entry %s is not listed in the manifest", quote(h.Name))
		}
		return err
	}
	return nil
}

// writeRecords writes the verified records: parents before children.
func (c *checked) writeRecords(tx *store.ImportTx, res *Result) error {
	sc := &scope{specs: map[string]backend.WorldSpec{}, runs: map[string]backend.WorldRun{}}
	for _, s := range c.specs {
		sc.specs[s.ID] = s
	}
	for _, r := range c.runs {
		sc.runs[r.ID] = r
	}
	for _, s := range sc.sortedSpecs() {
		added, err := tx.PutSpec(s)
		if err != nil {
			return err
		}
		res.Added.Worlds += count(added)
		if added {
			res.AddedIDs = append(res.AddedIDs, s.ID)
		}
	}
	for _, r := range sc.sortedRuns() {
		added, updated, err := tx.PutRun(r, c.heads[r.ID])
		if err != nil {
			return err
		}
		res.Added.Runs += count(added)
		if added {
			res.AddedIDs = append(res.AddedIDs, r.ID)
		}
		res.Updated += count(updated)
	}
	for _, cp := range c.cps {
		added, err := tx.PutCheckpoint(cp)
		if err != nil {
			return err
		}
		res.Added.Checkpoints += count(added)
	}
	for _, f := range c.forks {
		added, err := tx.PutFork(f)
		if err != nil {
			return err
		}
		res.Added.Forks += count(added)
	}
	return nil
}

// writeEvents streams one events entry into the transaction in batches.
func (c *checked) writeEvents(tx *store.ImportTx, runID string, r io.Reader, limits Limits, res *Result) error {
	reality := c.real[runID]
	batch := make([]backend.Event, 0, eventBatch)
	added := 0
	flush := func() error {
		n, err := tx.AppendEvents(runID, reality, batch)
		added += n
		batch = batch[:0]
		return err
	}
	var seq int64
	err := scanLines(r, eventsName(runID), limits.MaxLineBytes, func(data []byte) error {
		e, err := decodeEvent(data)
		if err != nil {
			return corrupt("line %d of %s is not a valid event", seq+1, eventsName(runID))
		}
		if err := checkEvent(e, runID, seq+1, reality); err != nil {
			return err
		}
		seq = e.Seq
		if batch = append(batch, e); len(batch) == eventBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if added > 0 {
		res.Added.Streams++
		res.Added.Events += int64(added)
	}
	return nil
}

// writeBlob puts a blob in the store by its digest, never by a path.
func writeBlob(ctx context.Context, blobs Blobs, digest string, r io.Reader, res *Result) error {
	ok, err := blobs.Has(ctx, digest)
	if err != nil || ok {
		return err
	}
	ref, err := blobs.PutReader(ctx, r, "application/octet-stream")
	if err != nil {
		return err
	}
	if ref.Digest != digest {
		return corrupt("blob %s holds content whose digest is %s", digest, ref.Digest)
	}
	res.Added.Blobs++
	return nil
}

func count(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// IsProblem reports whether err from Verify or Import is about the bundle
// (corrupt, over a limit, in conflict with what is here, or untrusted)
// rather than about the request or this machine.
func IsProblem(err error) bool {
	switch backend.ErrorCode(err) {
	case backend.ECORRUPT, backend.ELIMIT, backend.ECONFLICT:
		return true
	}
	return errors.Is(err, ErrUntrusted)
}
