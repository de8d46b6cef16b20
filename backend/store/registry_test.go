package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/memorypolicy"
	"ducklm/backend/store"
)

// The registries' part of the storage suite: worlds, runs, checkpoints,
// forks, memories, imports and blobs behave the same on both databases.

func newSpec(name string) backend.WorldSpec {
	return backend.WorldSpec{ID: backend.NewID(backend.KindWorld), Name: name, Domain: backend.DomainSimulated,
		Backend: "starlark", Program: backend.BlobRef{Digest: "sha256:" + string(make([]byte, 0)), Size: 1},
		Params: json.RawMessage(`{}`), Seed: 7, CreatedAt: time.Now().UTC()}
}

func newRun(worldID string) backend.WorldRun {
	now := time.Now().UTC()
	return backend.WorldRun{ID: backend.NewID(backend.KindRun), WorldID: worldID, Status: backend.RunRunning, CreatedAt: now, UpdatedAt: now}
}

func TestWorldRegistry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		w := store.NewWorlds(f.db, f.ledger)
		spec, run := newSpec("Grid of Ducks"), newRun("")
		run.WorldID = spec.ID
		require.NoError(t, w.CreateSpecAndRun(f.ctx, spec, run))

		// A step with its checkpoint, in the events' transaction.
		cp := backend.Checkpoint{ID: backend.NewID(backend.KindCheckpoint), WorldID: spec.ID, RunID: run.ID, WorldLocalTime: 1,
			Blob: backend.BlobRef{Digest: "sha256:00", Size: 2}, CreatedAt: time.Now().UTC()}
		upd := backend.WorldRun{ID: run.ID, WorldLocalTime: 1, LatestCheckpointID: cp.ID, UpdatedAt: time.Now().UTC()}
		stored, err := w.SaveRun(f.ctx, upd, 0, []backend.Event{
			{Type: "world.step", Reality: backend.WorldLocal, WorldLocalTime: 1},
			{Type: "world.checkpoint", Reality: backend.WorldLocal, WorldLocalTime: 1}}, &cp)
		require.NoError(t, err)
		require.Len(t, stored, 2)
		got, err := w.GetRun(f.ctx, run.ID)
		require.NoError(t, err)
		require.EqualValues(t, 1, got.WorldLocalTime)
		require.Equal(t, backend.RunRunning, got.Status, "a zero field keeps what is stored")
		require.Equal(t, cp.ID, got.LatestCheckpointID)
		cps, err := w.ListCheckpoints(f.ctx, run.ID)
		require.NoError(t, err)
		require.Len(t, cps, 1)
		require.EqualValues(t, 2, cps[0].LedgerSeq)

		// A fork with its child, in one transaction.
		child, childRun := newSpec("child"), newRun("")
		child.ParentWorldID, childRun.WorldID = spec.ID, child.ID
		fork := backend.Fork{ID: backend.NewID(backend.KindFork), ParentWorldID: spec.ID, ParentRunID: run.ID, CheckpointID: cp.ID,
			ChildWorldID: child.ID, Divergence: backend.DivergeSeedChange, Delta: json.RawMessage(`{}`), SeedPolicy: backend.SeedDerive,
			CreatedAt: time.Now().UTC()}
		child.ForkID = fork.ID
		_, err = w.CreateFork(f.ctx, fork, child, childRun, []backend.Event{{Type: "world.forked", Reality: backend.WorldLocal}}, nil)
		require.NoError(t, err)
		of, err := w.ForkOf(f.ctx, child.ID)
		require.NoError(t, err)
		require.Equal(t, fork.ID, of.ID)
		times, err := w.ForkTimes(f.ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, times[fork.ID])

		// Lists and searches, case-insensitive, by name or shortened id.
		page, err := w.ListWorlds(f.ctx, backend.WorldQuery{Text: "dUCKS"})
		require.NoError(t, err)
		require.Equal(t, 1, page.Total)
		require.Equal(t, spec.ID, page.Worlds[0].ID)
		require.Equal(t, 1, page.Worlds[0].Forks)
		page, err = w.ListWorlds(f.ctx, backend.WorldQuery{Text: child.ID[:6] + "…" + child.ID[len(child.ID)-8:]})
		require.NoError(t, err)
		require.Equal(t, 1, page.Total)
		page, err = w.ListWorlds(f.ctx, backend.WorldQuery{Limit: 1})
		require.NoError(t, err)
		require.Equal(t, 2, page.Total)
		require.NotEmpty(t, page.Next)
		next, err := w.ListWorlds(f.ctx, backend.WorldQuery{Limit: 1, After: page.Next})
		require.NoError(t, err)
		require.NotEqual(t, page.Worlds[0].ID, next.Worlds[0].ID)

		// A deliberation branch (its run serves a round) is left out of a
		// list that asks, and counted apart.
		branch, branchRun := newSpec("Grid of Ducks / deliberation 1"), newRun("")
		branch.ParentWorldID, branchRun.WorldID, branchRun.DeliberationIndex = spec.ID, branch.ID, 1
		bfork := fork
		bfork.ID, bfork.ChildWorldID = backend.NewID(backend.KindFork), branch.ID
		branch.ForkID = bfork.ID
		_, err = w.CreateFork(f.ctx, bfork, branch, branchRun, []backend.Event{{Type: "world.forked", Reality: backend.WorldLocal}}, nil)
		require.NoError(t, err)
		page, err = w.ListWorlds(f.ctx, backend.WorldQuery{WithoutBranches: true, Text: "ducks"})
		require.NoError(t, err)
		require.Equal(t, 1, page.Total)
		require.Equal(t, 1, page.Branches)
		require.Equal(t, spec.ID, page.Worlds[0].ID)
		require.Equal(t, 2, page.Worlds[0].Forks, "a world's forks count its branches")
		require.Equal(t, 1, page.Worlds[0].Branches)
		page, err = w.ListWorlds(f.ctx, backend.WorldQuery{Text: "ducks"})
		require.NoError(t, err)
		require.Equal(t, 2, page.Total)
		require.Zero(t, page.Branches)

		// The database refuses to change what is immutable.
		require.ErrorContains(t, f.exec("UPDATE world_specs SET name = 'x' WHERE id = ?", spec.ID), "immutable")
		require.ErrorContains(t, f.exec("DELETE FROM world_specs WHERE id = ?", child.ID), "immutable")
		require.ErrorContains(t, f.exec("UPDATE checkpoints SET digest = 'x' WHERE id = ?", cp.ID), "immutable")
		require.ErrorContains(t, f.exec("UPDATE forks SET delta = '[]' WHERE id = ?", fork.ID), "immutable")
		_, err = w.GetSpec(f.ctx, spec.ID)
		require.NoError(t, err)
	})
}

func TestImportChecksReferencesAtCommit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		spec, run := newSpec("imported"), newRun("")
		run.WorldID = spec.ID
		events := []backend.Event{{ID: backend.NewID(backend.KindEvent), Stream: run.ID, Seq: 1, Type: "world.initialized",
			Reality: backend.WorldLocal, Payload: json.RawMessage(`{}`), RecordedAt: time.Now().UTC()}}
		// The run before its spec: foreign keys are checked at commit.
		write := func(tx *store.ImportTx) error {
			if _, _, err := tx.PutRun(run, 1); err != nil {
				return err
			}
			if _, err := tx.PutSpec(spec); err != nil {
				return err
			}
			_, err := tx.AppendEvents(run.ID, backend.WorldLocal, events)
			return err
		}
		require.NoError(t, f.ledger.Import(f.ctx, write))
		require.NoError(t, f.ledger.Import(f.ctx, write), "an import is idempotent")
		head, err := f.ledger.Head(f.ctx, run.ID)
		require.NoError(t, err)
		require.EqualValues(t, 1, head)

		// A run whose world is neither in the import nor stored: nothing is written.
		orphan := newRun(backend.NewID(backend.KindWorld))
		err = f.ledger.Import(f.ctx, func(tx *store.ImportTx) error {
			_, _, err := tx.PutRun(orphan, 0)
			return err
		})
		require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
		_, err = store.NewWorlds(f.db, f.ledger).GetRun(f.ctx, orphan.ID)
		require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	})
}

func TestMemoryRegistry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		r := store.NewMemories(f.db, f.ledger)
		now := time.Now().UTC().Truncate(time.Microsecond)
		m := memory.Memory{ID: backend.NewID(backend.KindMemory), Text: "the disk is full", Type: memorypolicy.Type("fact"), Model: "builtin",
			Vector: []float32{0.6, 0.8}, ContentHash: "h1", Provenance: memory.Provenance{Reality: backend.ExternalReal}, Weight: 0.5,
			CreatedAt: now, UpdatedAt: now}
		require.NoError(t, r.Insert(f.ctx, m, "", nil))
		merged, err := r.Merge(f.ctx, m.ID, memory.Source{Provenance: m.Provenance, Worth: 0.3, AddedAt: now}, 0.3, now, "", nil)
		require.NoError(t, err)
		require.Equal(t, 0.5, merged.Weight, "a merge never lowers the weight")
		merged, err = r.Merge(f.ctx, m.ID, memory.Source{Provenance: m.Provenance, Worth: 0.9, AddedAt: now}, 0.9, now, "", nil)
		require.NoError(t, err)
		require.Equal(t, 0.9, merged.Weight)
		require.Equal(t, 2, merged.MergedCount)
		got, err := r.Get(f.ctx, m.ID)
		require.NoError(t, err)
		require.Len(t, got.Sources, 3)
		require.Equal(t, []float32{0.6, 0.8}, got.Vector)

		var loaded []string
		st, consistent, err := r.Load(f.ctx, "builtin", func(m memory.Memory) error { loaded = append(loaded, m.ID); return nil })
		require.NoError(t, err)
		require.True(t, consistent)
		require.Equal(t, []string{m.ID}, loaded)
		require.EqualValues(t, 1, st.Count)
		require.EqualValues(t, 3, st.Generation, "every change advances the generation")

		gone := backend.NewID(backend.KindMemory)
		stored, err := r.Stored(f.ctx, []string{m.ID, gone})
		require.NoError(t, err)
		require.Equal(t, map[string]bool{m.ID: true}, stored)

		require.NoError(t, r.Delete(f.ctx, m.ID))
		_, err = r.Get(f.ctx, m.ID)
		require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
		stored, err = r.Stored(f.ctx, []string{m.ID})
		require.NoError(t, err)
		require.Empty(t, stored)
		_, err = r.Merge(f.ctx, m.ID, memory.Source{Provenance: m.Provenance, Worth: 0.9, AddedAt: now}, 0.9, now, "", nil)
		require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "a merge into a memory that is gone")
	})
}

func TestMemoryRegistryKeepsAServersURLAndTime(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		r := store.NewMemories(f.db, f.ledger)
		now := time.Now().UTC().Truncate(time.Microsecond)
		at := now.Add(-time.Minute)
		p := memory.Provenance{Reality: backend.ExternalReal, URL: "https://news.example/notes", ObservedAt: at}
		m := memory.Memory{ID: backend.NewID(backend.KindMemory), Text: "the notes say 2.4", Type: memorypolicy.Type("observation"), Model: "builtin",
			Vector: []float32{0.6, 0.8}, ContentHash: "h2", Provenance: p, Weight: 0.5, CreatedAt: now, UpdatedAt: now}
		require.NoError(t, r.Insert(f.ctx, m, "", nil))
		later := p
		later.ObservedAt = at.Add(30 * time.Second)
		merged, err := r.Merge(f.ctx, m.ID, memory.Source{Provenance: later, Worth: 0.6, AddedAt: now}, 0.6, now, "", nil)
		require.NoError(t, err)
		require.Equal(t, p, merged.Provenance, "the memory keeps its first provenance")
		got, err := r.Get(f.ctx, m.ID)
		require.NoError(t, err)
		require.Equal(t, "https://news.example/notes", got.Provenance.URL)
		require.True(t, at.Equal(got.Provenance.ObservedAt))
		require.Len(t, got.Sources, 2)
		require.Equal(t, p, got.Sources[0].Provenance)
		require.Equal(t, later, got.Sources[1].Provenance)
	})
}

func TestDatabaseBlobs(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, f fixture) {
		b := store.NewBlobs(f.db)
		data := []byte(`{"state":"exact bytes"}`)
		ref, err := b.Put(f.ctx, data, "application/json")
		require.NoError(t, err)
		again, err := b.Put(f.ctx, data, "application/json")
		require.NoError(t, err)
		require.Equal(t, ref, again, "identical content is stored once")
		got, err := b.Get(f.ctx, ref)
		require.NoError(t, err)
		require.Equal(t, data, got)
		has, err := b.Has(f.ctx, ref.Digest)
		require.NoError(t, err)
		require.True(t, has)
		rc, err := b.Open(ref.Digest)
		require.NoError(t, err)
		rc.Close()

		missing := backend.BlobRef{Digest: "sha256:" + "ab" + ref.Digest[9:]}
		_, err = b.Get(f.ctx, missing)
		require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
		_, err = b.Get(f.ctx, backend.BlobRef{Digest: "md5:x"})
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
		require.ErrorContains(t, f.exec("UPDATE blobs SET data = ? WHERE digest = ?", []byte("other"), ref.Digest), "immutable")

		// Content that no longer matches its digest is reported, never returned.
		require.NoError(t, f.exec("INSERT INTO blobs (digest, size, data, created_at) VALUES (?, 5, ?, 0)", missing.Digest, []byte("wrong")))
		_, err = b.Get(f.ctx, missing)
		require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
	})
}
