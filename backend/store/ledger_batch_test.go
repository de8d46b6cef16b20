package store_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/blob"
	"ducklm/backend/store"
)

func worldLocal(n int) []backend.Event {
	out := make([]backend.Event, n)
	for i := range out {
		out[i] = backend.Event{Type: "world.step", Reality: backend.WorldLocal, Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
	}
	return out
}

// New streams appended together take seqs 1..n each and consecutive ledger
// positions after everything before, in one transaction: a batch naming a
// stream that exists writes nothing at all.
func TestNewStreamsAppendWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		a, b, c, d := backend.NewID(backend.KindRun), backend.NewID(backend.KindRun), backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)
		first, err := f.ledger.Append(f.ctx, a, 0, worldLocal(2)...)
		require.NoError(t, err)
		var published [][]backend.Event
		f.ledger.OnCommit(func(es []backend.Event) { published = append(published, es) })

		stored, err := f.ledger.AppendNewStreams(f.ctx, []string{b, c}, [][]backend.Event{worldLocal(3), worldLocal(1)}, nil)
		require.NoError(t, err)
		require.Len(t, stored, 2)
		pos := first[1].Pos
		for i, s := range []string{b, c} {
			head, err := f.ledger.Head(f.ctx, s)
			require.NoError(t, err)
			require.EqualValues(t, len(stored[i]), head)
			events, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: s})
			require.NoError(t, err)
			require.Len(t, events, len(stored[i]))
			for j, e := range events {
				pos++
				require.EqualValues(t, j+1, e.Seq)
				require.Equal(t, pos, e.Pos, "positions follow on without a gap")
				require.Equal(t, stored[i][j].ID, e.ID)
			}
		}
		require.Equal(t, stored, published, "each stream's events are published, in order")

		n, err := f.ledger.Count(f.ctx)
		require.NoError(t, err)
		_, err = f.ledger.AppendNewStreams(f.ctx, []string{d, a}, [][]backend.Event{worldLocal(1), worldLocal(1)}, nil)
		require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err), "%v", err)
		after, err := f.ledger.Count(f.ctx)
		require.NoError(t, err)
		require.Equal(t, n, after)
		head, err := f.ledger.Head(f.ctx, d)
		require.NoError(t, err)
		require.Zero(t, head, "the new stream of a refused batch is not created")

		_, err = f.ledger.AppendNewStreams(f.ctx, []string{d, d}, [][]backend.Event{worldLocal(1), worldLocal(1)}, nil)
		require.ErrorContains(t, err, "twice")
		_, err = f.ledger.AppendNewStreams(f.ctx, []string{d}, [][]backend.Event{nil}, nil)
		require.ErrorContains(t, err, "no events")
		_, err = f.ledger.AppendNewStreams(f.ctx, []string{d}, nil, nil)
		require.ErrorContains(t, err, "1 streams for 0 batches")
	})
}

// branchRecord is a branch of spec's run: a fork, a child world and run,
// two events and the end checkpoint.
func branchRecord(parent backend.WorldSpec, parentRun backend.WorldRun, cp backend.Checkpoint) backend.BranchRecord {
	now := time.Now().UTC()
	f := backend.Fork{ID: backend.NewID(backend.KindFork), ParentWorldID: parent.ID, ParentRunID: parentRun.ID, CheckpointID: cp.ID,
		Divergence: backend.DivergeActionOverride, Delta: json.RawMessage(`{"actions":[1]}`), SeedPolicy: backend.SeedInherit, CreatedAt: now}
	child := newSpec("branch")
	child.ParentWorldID, child.ForkID, child.Domain = parent.ID, f.ID, backend.DomainSimulated
	f.ChildWorldID = child.ID
	run := newRun(child.ID)
	run.BaseRunID, run.BaseSeq = parentRun.ID, cp.LedgerSeq
	end := backend.Checkpoint{ID: backend.NewID(backend.KindCheckpoint), WorldID: child.ID, RunID: run.ID, WorldLocalTime: 1,
		LedgerSeq: 2, Blob: backend.BlobRef{Digest: "sha256:00", Size: 1}, CreatedAt: now}
	run.LatestCheckpointID = end.ID
	return backend.BranchRecord{Fork: f, Child: child, Run: run, Events: worldLocal(2), Checkpoint: end}
}

// Branches recorded together are one transaction with the caller's part:
// its error leaves none of them; its success leaves all, each as CreateFork
// would have recorded it.
func TestBranchesRecordInOneCommit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		w := store.NewWorlds(f.db, f.ledger)
		parent := newSpec("parent")
		parent.Domain = backend.DomainSimulated
		parentRun := newRun(parent.ID)
		require.NoError(t, w.CreateSpecAndRun(f.ctx, parent, parentRun))
		cp := backend.Checkpoint{ID: backend.NewID(backend.KindCheckpoint), WorldID: parent.ID, RunID: parentRun.ID,
			Blob: backend.BlobRef{Digest: "sha256:00", Size: 1}, CreatedAt: time.Now().UTC()}
		_, err := w.SaveRun(f.ctx, parentRun, 0, worldLocal(1), &cp)
		require.NoError(t, err)
		recs := []backend.BranchRecord{branchRecord(parent, parentRun, cp), branchRecord(parent, parentRun, cp), branchRecord(parent, parentRun, cp)}

		err = w.CreateBranches(f.ctx, recs, func(*sql.Tx) error { return backend.Errorf(backend.ECONFLICT, "not this worker's job") })
		require.ErrorContains(t, err, "not this worker's job")
		for _, r := range recs {
			_, err := w.GetRun(f.ctx, r.Run.ID)
			require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "no branch is left of a batch rolled back")
		}

		ran := false
		require.NoError(t, w.CreateBranches(f.ctx, recs, func(tx *sql.Tx) error {
			ran = true
			var n int
			require.NoError(t, tx.QueryRow(f.db.Rebind("SELECT count(*) FROM forks WHERE parent_world_id = ?"), parent.ID).Scan(&n))
			require.Equal(t, 3, n, "the caller's part runs after the branches are written, in their transaction")
			return nil
		}))
		require.True(t, ran)
		for _, r := range recs {
			run, err := w.GetRun(f.ctx, r.Run.ID)
			require.NoError(t, err)
			require.Equal(t, r.Checkpoint.ID, run.LatestCheckpointID)
			spec, err := w.GetSpec(f.ctx, r.Child.ID)
			require.NoError(t, err)
			require.Equal(t, r.Fork.ID, spec.ForkID)
			fk, err := w.ForkOf(f.ctx, r.Child.ID)
			require.NoError(t, err)
			require.Equal(t, r.Fork.ID, fk.ID)
			got, err := w.GetCheckpoint(f.ctx, r.Checkpoint.ID)
			require.NoError(t, err)
			require.EqualValues(t, 2, got.LedgerSeq)
			head, err := f.ledger.Head(f.ctx, r.Run.ID)
			require.NoError(t, err)
			require.EqualValues(t, 2, head)
		}

		// Again: the batch is refused whole, nothing is written twice.
		n, err := f.ledger.Count(f.ctx)
		require.NoError(t, err)
		require.Error(t, w.CreateBranches(f.ctx, recs, nil))
		after, err := f.ledger.Count(f.ctx)
		require.NoError(t, err)
		require.Equal(t, n, after)

		// Where branches start: checkpoints with their worlds, in one read.
		cps, specs, err := w.BranchStarts(f.ctx, []string{recs[0].Checkpoint.ID, recs[2].Checkpoint.ID, backend.NewID(backend.KindCheckpoint)})
		require.NoError(t, err)
		require.Len(t, cps, 2, "a checkpoint not stored is left out")
		require.Len(t, specs, 2)
		for i, c := range cps {
			want, err := w.GetCheckpoint(f.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, want, c)
			spec, err := w.GetSpec(f.ctx, c.WorldID)
			require.NoError(t, err)
			require.Equal(t, spec, specs[i])
		}
		_, _, err = w.BranchStarts(f.ctx, []string{"not an id"})
		require.Error(t, err)

		bad := branchRecord(parent, parentRun, cp)
		bad.Checkpoint.LedgerSeq = 5
		require.ErrorContains(t, w.CreateBranches(f.ctx, []backend.BranchRecord{bad}, nil), "at seq 5")
	})
}

// Several blobs are stored in one statement, each once, and read back.
func TestDatabaseBlobsPutMany(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		b := store.NewBlobs(f.db)
		one, two := []byte(`{"n":1}`), []byte(`{"n":2}`)
		ref, err := b.Put(f.ctx, one, "application/json")
		require.NoError(t, err)
		require.NoError(t, b.PutMany(f.ctx, [][]byte{one, two, two}, "application/json"), "stored and repeated content is taken")
		for _, d := range [][]byte{one, two} {
			got, err := b.Get(f.ctx, backend.BlobRef{Digest: blob.Digest(d)})
			require.NoError(t, err)
			require.Equal(t, d, got)
		}
		var n int
		require.NoError(t, f.db.SQL.QueryRow("SELECT count(*) FROM blobs").Scan(&n))
		require.Equal(t, 2, n)
		require.Equal(t, ref.Digest, blob.Digest(one))
		require.NoError(t, b.PutMany(f.ctx, nil, "application/json"))

		missing := blob.Digest([]byte("never stored"))
		got, err := b.GetMany(f.ctx, []string{blob.Digest(one), blob.Digest(two), missing})
		require.NoError(t, err)
		require.Equal(t, map[string][]byte{blob.Digest(one): one, blob.Digest(two): two}, got, "what is not stored is left out")
		_, err = b.GetMany(f.ctx, []string{"md5:x"})
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
		require.NoError(t, f.exec("INSERT INTO blobs (digest, size, data, created_at) VALUES (?, 5, ?, 0)", missing, []byte("wrong")))
		_, err = b.GetMany(f.ctx, []string{missing})
		require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err), "content that no longer matches its digest is reported")
	})
}

// Two workers storing end states that overlap (identical states share one
// blob) never deadlock: PutMany inserts in digest order, so a statement
// waiting on another's uncommitted row holds none that the other needs.
// Here the other statement has inserted the lower digest and goes on to
// the higher one after PutMany, given them the other way round, waits.
func TestPutManyInDigestOrderNeverDeadlocks(t *testing.T) {
	t.Parallel()
	f := setupPostgres(t)
	b := store.NewBlobs(f.db)
	lo, hi := []byte(`{"state":"a"}`), []byte(`{"state":"b"}`)
	if blob.Digest(lo) > blob.Digest(hi) {
		lo, hi = hi, lo
	}
	insert := "INSERT INTO blobs (digest, size, data, created_at) VALUES ($1, $2, $3, 0) ON CONFLICT (digest) DO NOTHING"
	other, err := f.db.SQL.BeginTx(f.ctx, nil)
	require.NoError(t, err)
	defer other.Rollback()
	_, err = other.ExecContext(f.ctx, insert, blob.Digest(lo), len(lo), lo)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { done <- b.PutMany(f.ctx, [][]byte{hi, lo}, "application/json") }()
	require.Eventually(t, func() bool {
		var waiting int
		err := f.db.SQL.QueryRowContext(f.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting > 0
	}, 60*time.Second, 20*time.Millisecond, "PutMany waits for the other statement's row")

	_, err = other.ExecContext(f.ctx, insert, blob.Digest(hi), len(hi), hi)
	require.NoError(t, err, "the other statement is not chosen as a deadlock's victim")
	require.NoError(t, other.Commit())
	select {
	case err := <-done:
		require.NoError(t, err, "nor is PutMany")
	case <-time.After(60 * time.Second):
		t.Fatal("PutMany did not finish after the other statement committed")
	}
	got, err := b.GetMany(f.ctx, []string{blob.Digest(lo), blob.Digest(hi)})
	require.NoError(t, err)
	require.Len(t, got, 2)
}
