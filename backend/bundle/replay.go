package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"slices"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/world"
)

// replay re-executes every simulated run the bundle holds events of, through
// its whole fork chain (in the bundle or here), exactly as `world verify`
// does, before anything is written: a signature vouches for who made a
// bundle, not that its world events are what its programs produce. It
// reads the bundle again (open) for the events and programs it needs and
// writes nothing. The error names the first run and seq that diverge.
func (c *checked) replay(ctx context.Context, open func() (io.ReadCloser, error), limits Limits) error {
	if open == nil {
		return nil
	}
	src := &replaySource{c: c, open: open, limits: limits, local: c.local}
	defer src.closeCursor()
	if err := src.preload(ctx); err != nil {
		return err
	}
	svc := world.New(src, src, src, c.local.WorldLimits.Filled(), c.local.Programs)
	for _, r := range c.runs {
		if c.heads[r.ID] == 0 {
			continue
		}
		spec, err := src.GetSpec(ctx, r.WorldID)
		if err != nil {
			return err
		}
		if spec.Backend != world.BackendStarlark {
			continue
		}
		rep, err := svc.Verify(ctx, r.ID)
		if err != nil {
			return backend.Wrap(err, backend.ECORRUPT, "simulated run %s cannot be re-executed: %s", r.ID, backend.ErrorMessage(err))
		}
		if d := rep.Divergence; d != nil {
			return corrupt("simulated run %s does not replay: at seq %d of stream %s (%s) %s; its world events are not what its program produces",
				r.ID, d.Seq, d.Stream, d.Type, d.Message)
		}
		c.report.Replayed++
	}
	c.report.Checks.Replay = true
	return nil
}

// errReplayReadOnly answers every write a replay's world service might
// attempt: re-execution only reads.
var errReplayReadOnly = backend.Errorf(backend.EINTERNAL, "a bundle being replayed is read-only")

// replaySource is the bundle's records, events and blobs over this
// installation's: what a world service re-executing the bundle's runs reads.
type replaySource struct {
	c      *checked
	open   func() (io.ReadCloser, error)
	limits Limits
	local  Local

	// held are entries read in one pass before the replay (events of
	// simulated runs and their programs), when they fit preloadBytes.
	held map[string][]byte
	// cur continues reading a stream that was not held where the last
	// page of it ended, so a long run is read once, a page at a time.
	cur *streamCursor
}

// preloadBytes bounds what a replay holds of a bundle in memory; past it,
// streams are read from the file a page at a time.
var preloadBytes int64 = 256 << 20

// streamCursor is an open pass over the bundle, inside one events entry.
type streamCursor struct {
	stream string
	next   int64 // the seq the next line holds
	f      io.Closer
	rd     *reader
	sc     *bufio.Scanner
}

func (k *streamCursor) close() {
	k.rd.close()
	k.f.Close()
}

var (
	_ world.Store       = (*replaySource)(nil)
	_ world.Events      = (*replaySource)(nil)
	_ backend.BlobStore = (*replaySource)(nil)
)

// entry streams one entry of the bundle to fn, checked against the
// manifest as it is read.
func (s *replaySource) entry(name string, fn func(io.Reader) error) error {
	if data, ok := s.held[name]; ok {
		return fn(bytes.NewReader(data))
	}
	f, err := s.open()
	if err != nil {
		return err
	}
	defer f.Close()
	rd, h, want, err := s.seek(f, name)
	if err != nil {
		return err
	}
	defer rd.close()
	er, err := rd.open(h, want)
	if err != nil {
		return err
	}
	if err := fn(er); err != nil {
		return err
	}
	return er.finish()
}

// seek reads the bundle in f up to the header of entry name.
func (s *replaySource) seek(f io.Reader, name string) (*reader, *tar.Header, Entry, error) {
	rd, err := newReader(f, s.limits)
	if err != nil {
		return nil, nil, Entry{}, err
	}
	h, data, err := readManifest(rd)
	if err != nil {
		rd.close()
		return nil, nil, Entry{}, err
	}
	if sha256.Sum256(data) != s.c.sum {
		rd.close()
		return nil, nil, Entry{}, corrupt("the bundle changed while it was being read; nothing was written")
	}
	m := s.c.report.Manifest
	rd.allow(m, h.Size)
	i := slices.IndexFunc(m.Entries, func(e Entry) bool { return e.Name == name })
	if i < 0 {
		rd.close()
		return nil, nil, Entry{}, corrupt("the bundle has no entry %s", name)
	}
	for {
		h, err := rd.next()
		if errors.Is(err, io.EOF) {
			rd.close()
			return nil, nil, Entry{}, corrupt("the bundle is truncated: entry %s is missing", name)
		}
		if err != nil {
			rd.close()
			return nil, nil, Entry{}, err
		}
		if h.Name == name {
			return rd, h, m.Entries[i], nil
		}
	}
}

// Query implements world.Events: a stream the bundle holds is read from it.
func (s *replaySource) Query(ctx context.Context, q backend.EventQuery) ([]backend.Event, error) {
	if _, ok := s.c.heads[q.Stream]; !ok {
		if s.local.Events == nil {
			return nil, nil
		}
		return s.local.Events.Query(ctx, q)
	}
	name := eventsName(q.Stream)
	var out []backend.Event
	keep := func(data []byte) (bool, error) {
		e, err := decodeEvent(data)
		if err != nil {
			return false, corrupt("an event of %s is not readable", name)
		}
		if q.ToSeq != 0 && e.Seq > q.ToSeq {
			return false, nil
		}
		if e.Seq >= q.FromSeq {
			out = append(out, e)
		}
		return true, nil
	}
	if data, ok := s.held[name]; ok {
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if more, err := keep(line); err != nil || !more {
				return out, err
			}
		}
		return out, nil
	}
	k, err := s.cursor(q.Stream, max(q.FromSeq, 1))
	if err != nil {
		return nil, err
	}
	for q.ToSeq == 0 || k.next <= q.ToSeq {
		if !k.sc.Scan() {
			if err := k.sc.Err(); err != nil {
				s.closeCursor()
				return nil, k.rd.wrap(err)
			}
			break
		}
		line := k.sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		k.next++
		if _, err := keep(line); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cursor returns a pass over stream positioned at seq from: the open one
// when it is there, else a new pass over the file.
func (s *replaySource) cursor(stream string, from int64) (*streamCursor, error) {
	if k := s.cur; k != nil && k.stream == stream && k.next == from {
		return k, nil
	}
	s.closeCursor()
	name := eventsName(stream)
	f, err := s.open()
	if err != nil {
		return nil, err
	}
	rd, h, want, err := s.seek(f, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	er, err := rd.open(h, want)
	if err != nil {
		rd.close()
		f.Close()
		return nil, err
	}
	sc := bufio.NewScanner(er)
	sc.Buffer(make([]byte, 0, min(64<<10, s.limits.MaxLineBytes)), s.limits.MaxLineBytes)
	k := &streamCursor{stream: stream, next: 1, f: f, rd: rd, sc: sc}
	for k.next < from && sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			k.next++
		}
	}
	s.cur = k
	return k, nil
}

func (s *replaySource) closeCursor() {
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
}

// preload reads, in one pass, the events entries of the bundle's simulated
// runs and the programs of its simulated worlds, when together they fit
// preloadBytes: a bundle of many small worlds is then read twice in all,
// not once more for every run.
func (s *replaySource) preload(ctx context.Context) error {
	want := map[string]bool{}
	for _, r := range s.c.runs {
		if s.c.heads[r.ID] == 0 {
			continue
		}
		spec, err := s.GetSpec(ctx, r.WorldID)
		if err != nil {
			return err
		}
		if spec.Backend != world.BackendStarlark {
			continue
		}
		want[eventsName(r.ID)] = true
		if s.c.blobs[spec.Program.Digest] {
			want[blobName(spec.Program.Digest)] = true
		}
	}
	var total int64
	for _, e := range s.c.report.Manifest.Entries {
		if want[e.Name] {
			total += e.Size
		}
	}
	if len(want) == 0 || total > preloadBytes {
		return nil
	}
	f, err := s.open()
	if err != nil {
		return err
	}
	defer f.Close()
	rd, err := newReader(f, s.limits)
	if err != nil {
		return err
	}
	defer rd.close()
	h, data, err := readManifest(rd)
	if err != nil {
		return err
	}
	if sha256.Sum256(data) != s.c.sum {
		return corrupt("the bundle changed while it was being read; nothing was written")
	}
	m := s.c.report.Manifest
	rd.allow(m, h.Size)
	s.held = map[string][]byte{}
	for _, e := range m.Entries {
		h, err := rd.next()
		if err == nil && h.Name == SignatureName {
			h, err = rd.next()
		}
		if err != nil {
			return err
		}
		if !want[e.Name] {
			continue
		}
		er, err := rd.open(h, e)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(er)
		if err != nil {
			return err
		}
		s.held[e.Name] = data
	}
	return nil
}

// Search implements world.Events: Query, keeping the events t matches.
func (s *replaySource) Search(ctx context.Context, q backend.EventQuery, t backend.EventText) ([]backend.Event, error) {
	match, err := t.Matcher()
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	q.Limit = 0
	events, err := s.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := events[:0]
	for _, e := range events {
		if (len(q.Types) == 0 || slices.Contains(q.Types, e.Type)) && (q.Reality == "" || e.Reality == q.Reality) && (match == nil || match(backend.EventLine(e))) {
			out = append(out, e)
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// Head implements world.Events.
func (s *replaySource) Head(ctx context.Context, stream string) (int64, error) {
	if n, ok := s.c.heads[stream]; ok {
		return n, nil
	}
	if s.local.Events == nil {
		return 0, nil
	}
	return s.local.Events.Head(ctx, stream)
}

// TypeCounts implements world.Events.
func (s *replaySource) TypeCounts(ctx context.Context, stream string, toSeq int64) (map[string]int64, error) {
	events, err := s.Query(ctx, backend.EventQuery{Stream: stream, FromSeq: 1, ToSeq: toSeq})
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, e := range events {
		out[e.Type]++
	}
	return out, nil
}

// Get implements backend.BlobStore: here first, else from the bundle.
func (s *replaySource) Get(ctx context.Context, ref backend.BlobRef) ([]byte, error) {
	if err := blob.CheckDigest(ref.Digest); err != nil {
		return nil, err
	}
	if s.local.Blobs != nil {
		if ok, err := s.local.Blobs.Has(ctx, ref.Digest); err == nil && ok {
			f, err := s.local.Blobs.Open(ref.Digest)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		}
	}
	if !s.c.blobs[ref.Digest] {
		return nil, backend.Errorf(backend.ENOTFOUND, "blob %s is neither in the bundle nor here", ref.Digest)
	}
	var buf bytes.Buffer
	err := s.entry(blobName(ref.Digest), func(r io.Reader) error {
		_, err := io.Copy(&buf, r)
		return err
	})
	return buf.Bytes(), err
}

// Has implements backend.BlobStore.
func (s *replaySource) Has(ctx context.Context, digest string) (bool, error) {
	if s.c.blobs[digest] {
		return true, nil
	}
	if s.local.Blobs == nil {
		return false, nil
	}
	return s.local.Blobs.Has(ctx, digest)
}

// Put implements backend.BlobStore; a replay writes nothing.
func (s *replaySource) Put(context.Context, []byte, string) (backend.BlobRef, error) {
	return backend.BlobRef{}, errReplayReadOnly
}

// PutReader implements backend.BlobStore; a replay writes nothing.
func (s *replaySource) PutReader(context.Context, io.Reader, string) (backend.BlobRef, error) {
	return backend.BlobRef{}, errReplayReadOnly
}

// GetSpec implements world.Store.
func (s *replaySource) GetSpec(ctx context.Context, id string) (backend.WorldSpec, error) {
	if i, ok := s.c.spec[id]; ok {
		return s.c.specs[i], nil
	}
	if s.local.Store == nil {
		return backend.WorldSpec{}, backend.Errorf(backend.ENOTFOUND, "world %s is neither in the bundle nor here", id)
	}
	return s.local.Store.GetSpec(ctx, id)
}

// ListSpecs implements world.Store.
func (s *replaySource) ListSpecs(ctx context.Context) ([]backend.WorldSpec, error) {
	out := slices.Clone(s.c.specs)
	if s.local.Store != nil {
		local, err := s.local.Store.ListSpecs(ctx)
		if err != nil {
			return nil, err
		}
		for _, sp := range local {
			if _, ok := s.c.spec[sp.ID]; !ok {
				out = append(out, sp)
			}
		}
	}
	return out, nil
}

// GetRun implements world.Store.
func (s *replaySource) GetRun(ctx context.Context, id string) (backend.WorldRun, error) {
	if i, ok := s.c.run[id]; ok {
		return s.c.runs[i], nil
	}
	if s.local.Store == nil {
		return backend.WorldRun{}, backend.Errorf(backend.ENOTFOUND, "run %s is neither in the bundle nor here", id)
	}
	return s.local.Store.GetRun(ctx, id)
}

// ListRuns implements world.Store.
func (s *replaySource) ListRuns(ctx context.Context, worldID string) ([]backend.WorldRun, error) {
	var out []backend.WorldRun
	for _, r := range s.c.runs {
		if r.WorldID == worldID {
			out = append(out, r)
		}
	}
	if s.local.Store != nil {
		local, err := s.local.Store.ListRuns(ctx, worldID)
		if err != nil {
			return nil, err
		}
		for _, r := range local {
			if _, ok := s.c.run[r.ID]; !ok {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// GetCheckpoint implements world.Store.
func (s *replaySource) GetCheckpoint(ctx context.Context, id string) (backend.Checkpoint, error) {
	if i, ok := s.c.cp[id]; ok {
		return s.c.cps[i], nil
	}
	if s.local.Store == nil {
		return backend.Checkpoint{}, backend.Errorf(backend.ENOTFOUND, "checkpoint %s is neither in the bundle nor here", id)
	}
	return s.local.Store.GetCheckpoint(ctx, id)
}

// ListCheckpoints implements world.Store.
func (s *replaySource) ListCheckpoints(ctx context.Context, runID string) ([]backend.Checkpoint, error) {
	var out []backend.Checkpoint
	for _, cp := range s.c.cps {
		if cp.RunID == runID {
			out = append(out, cp)
		}
	}
	if len(out) > 0 || s.local.Store == nil {
		return out, nil
	}
	return s.local.Store.ListCheckpoints(ctx, runID)
}

// ListForks implements world.Store.
func (s *replaySource) ListForks(ctx context.Context) ([]backend.Fork, error) {
	out := slices.Clone(s.c.forks)
	if s.local.Store != nil {
		local, err := s.local.Store.ListForks(ctx)
		if err != nil {
			return nil, err
		}
		for _, f := range local {
			if _, ok := s.c.fork[f.ID]; !ok {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// ForkTimes implements world.Store.
func (s *replaySource) ForkTimes(ctx context.Context) (map[string]int64, error) {
	forks, err := s.ListForks(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(forks))
	for _, f := range forks {
		cp, err := s.GetCheckpoint(ctx, f.CheckpointID)
		if err != nil {
			return nil, err
		}
		out[f.ID] = cp.WorldLocalTime
	}
	return out, nil
}

// ForkOf implements world.Store.
func (s *replaySource) ForkOf(ctx context.Context, childWorldID string) (backend.Fork, error) {
	if i, ok := s.c.forkByChild[childWorldID]; ok {
		return s.c.forks[i], nil
	}
	if s.local.Store == nil {
		return backend.Fork{}, backend.Errorf(backend.ENOTFOUND, "world %s was not forked", childWorldID)
	}
	return s.local.Store.ForkOf(ctx, childWorldID)
}

// ListWorlds implements world.Store; re-execution lists no worlds.
func (s *replaySource) ListWorlds(context.Context, backend.WorldQuery) (backend.WorldPage, error) {
	return backend.WorldPage{}, errReplayReadOnly
}

// CreateSpecAndRun implements world.Store; a replay writes nothing.
func (s *replaySource) CreateSpecAndRun(context.Context, backend.WorldSpec, backend.WorldRun) error {
	return errReplayReadOnly
}

// CreateRun implements world.Store; a replay writes nothing.
func (s *replaySource) CreateRun(context.Context, backend.WorldRun) error { return errReplayReadOnly }

// SaveRun implements world.Store; a replay writes nothing.
func (s *replaySource) SaveRun(context.Context, backend.WorldRun, int64, []backend.Event, *backend.Checkpoint, ...backend.Prepared) ([]backend.Event, error) {
	return nil, errReplayReadOnly
}

// CreateFork implements world.Store; a replay writes nothing.
func (s *replaySource) CreateFork(context.Context, backend.Fork, backend.WorldSpec, backend.WorldRun, []backend.Event, *backend.Checkpoint) ([]backend.Event, error) {
	return nil, errReplayReadOnly
}
