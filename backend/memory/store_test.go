package memory_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
)

func TestConsiderStoresAndRetrieves(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.candidate("The nginx service on this host listens on port 8080.")
	d := f.consider(t, c)
	require.Equal(t, mp.Store, d.Decision.Action)
	require.Equal(t, mp.RuleNew, d.Decision.Rule)
	require.NoError(t, backend.CheckID(d.MemoryID, backend.KindMemory))
	require.Equal(t, memory.HashModel, d.Model)

	got, err := f.store.Retrieve(f.ctx, "which port does nginx listen on", 5, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	r := got[0]
	require.Equal(t, d.MemoryID, r.ID)
	require.Equal(t, c.Text, r.Text)
	require.Equal(t, mp.Fact, r.Type)
	require.Equal(t, memory.Provenance{RunID: f.run, EventID: c.EventID, Reality: backend.ExternalReal}, r.Provenance)
	require.InDelta(t, 0.7*0.9+0.3*0.8, r.Weight, 1e-9)
	require.Greater(t, r.Similarity, 0.3)
	require.Equal(t, memory.HashModel, r.Model)

	m, err := f.store.Get(f.ctx, d.MemoryID)
	require.NoError(t, err)
	require.Equal(t, c.Text, m.Text)
	require.Equal(t, memory.ContentHash(c.Text), m.ContentHash)
	require.Len(t, m.Vector, memory.HashDims)
	require.Len(t, m.Sources, 1)
	require.Equal(t, c.EventID, m.Sources[0].EventID)

	// The decision is an event on the run's stream, caused by the source
	// event, and it replays.
	evs := f.events(t, memory.EvDecided)
	require.Len(t, evs, 1)
	require.Equal(t, d.EventID, evs[0].ID)
	require.Equal(t, c.EventID, evs[0].CausationID)
	require.Equal(t, backend.ExternalReal, evs[0].Reality)
	p := f.decided(t)[0]
	require.Equal(t, d.MemoryID, p.MemoryID)
	require.Empty(t, p.EmbeddingModel, "the memory's row holds its model")
	require.Empty(t, p.ContentHash, "and its hash")
	require.Equal(t, mp.Thresholds, *p.Table)
	require.NotContains(t, string(evs[0].Payload), "nginx", "events carry hashes, not texts")
}

func TestConsiderMergesDuplicatesKeepingProvenance(t *testing.T) {
	t.Parallel()
	f := setup(t)
	first := f.consider(t, f.candidate("The backup job runs every night at 02:00 and writes to /srv/backup."))

	// The same text from another run (case and spacing differ): exact.
	other := f.candidate("the backup job runs every night at 02:00 and writes to  /srv/backup.")
	other.RunID, other.CriticScore = backend.NewID(backend.KindRun), 1
	d := f.consider(t, other)
	require.Equal(t, mp.Merge, d.Decision.Action)
	require.Equal(t, mp.RuleExact, d.Decision.Rule)
	require.Equal(t, first.MemoryID, d.MemoryID)
	require.True(t, d.Input.Dedup.ExactMatch)

	// A near paraphrase: merged by similarity.
	near := f.candidate("The backup job runs every night at 02:00 and writes to /srv/backup!!")
	near.Text = "Backup job runs every night at 02:00 and writes to /srv/backup"
	d = f.consider(t, near)
	require.Equal(t, mp.Merge, d.Decision.Action, d.Decision.Reason)
	require.Equal(t, mp.RuleNear, d.Decision.Rule)
	require.GreaterOrEqual(t, d.Input.Dedup.NearestSimilarity, 0.92)

	m, err := f.store.Get(f.ctx, first.MemoryID)
	require.NoError(t, err)
	require.Equal(t, 2, m.MergedCount)
	require.Len(t, m.Sources, 3, "every provenance is kept")
	require.Equal(t, other.RunID, m.Sources[1].RunID)
	require.InDelta(t, 0.7*1+0.3*0.8, m.Weight, 1e-9, "the weight rose to the best source's worth")
	require.False(t, m.MergedAt.IsZero())

	got, err := f.store.Retrieve(f.ctx, "backup job", 5, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, got, 1, "one memory")
	require.Equal(t, 2, got[0].MergedCount, "the index carries the merge")

	// A different fact is stored apart.
	d = f.consider(t, f.candidate("The database server runs PostgreSQL 16 on port 5432."))
	require.Equal(t, mp.Store, d.Decision.Action)
	require.Len(t, f.decided(t), 3)
	evs, err := f.ledger.Query(f.ctx, backend.EventQuery{Stream: other.RunID})
	require.NoError(t, err)
	require.Equal(t, []string{memory.EvPolicy, memory.EvDecided}, []string{evs[0].Type, evs[1].Type},
		"a decision is recorded on the stream of the run it came from, after the run's policy table")
	require.Len(t, evs, 2)
}

func TestConsiderSkipsAndRecordsWhy(t *testing.T) {
	t.Parallel()
	f := setup(t)
	low := f.candidate("The weather in the log output was mentioned once.")
	low.CriticScore, low.RuntimeWeight = 0.2, 0.2
	d := f.consider(t, low)
	require.Equal(t, mp.Skip, d.Decision.Action)
	require.Equal(t, mp.RuleLowWorth, d.Decision.Rule)
	require.Empty(t, d.MemoryID)
	require.Empty(t, d.Model, "a skip decided without dedup costs no embedding")

	short := f.candidate("ok")
	d = f.consider(t, short)
	require.Equal(t, mp.RuleTooShort, d.Decision.Rule)

	bad := f.candidate("a candidate with a made-up type")
	bad.Type = "rumour"
	d = f.consider(t, bad)
	require.Equal(t, mp.RuleInvalid, d.Decision.Rule)
	nan := f.candidate("a candidate whose critic returned NaN")
	nan.CriticScore = math.NaN()
	d = f.consider(t, nan)
	require.Equal(t, mp.RuleInvalid, d.Decision.Rule)
	require.Contains(t, d.Decision.Reason, "critic score -1")

	list, err := f.store.List(f.ctx, memory.ListQuery{})
	require.NoError(t, err)
	require.Empty(t, list)
	require.Len(t, f.decided(t), 4, "every decision is an event with its inputs, skips too")

	_, err = f.store.Consider(f.ctx, memory.Candidate{Text: "no run"})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
}

func TestWorldLocalResultsAreNeverFacts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	world := backend.NewID(backend.KindWorld)
	fact := f.consider(t, f.candidate("The agent reaches the goal of the grid in 14 steps."))
	sim := f.candidate("The agent reaches the goal of the grid in 14 steps.")
	sim.Reality, sim.WorldID, sim.Type = backend.WorldLocal, world, mp.Fact
	d := f.consider(t, sim)
	require.Equal(t, mp.Store, d.Decision.Action, "not merged into the fact: %s", d.Decision.Reason)
	require.Equal(t, mp.Hypothesis, d.Decision.StoreAs)
	require.NotEqual(t, fact.MemoryID, d.MemoryID)

	noWorld := f.candidate("The agent reaches the goal of the grid in 9 steps.")
	noWorld.Reality = backend.WorldLocal
	require.Equal(t, mp.RuleNoWorld, f.consider(t, noWorld).Decision.Rule)

	facts, err := f.store.Retrieve(f.ctx, "grid goal steps", 10, memory.Filter{Type: mp.Fact})
	require.NoError(t, err)
	require.Len(t, facts, 1)
	require.Equal(t, fact.MemoryID, facts[0].ID)
	require.Equal(t, backend.ExternalReal, facts[0].Provenance.Reality)

	all, err := f.store.Retrieve(f.ctx, "grid goal steps", 10, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, all, 2)
	for _, r := range all {
		if r.Provenance.Reality == backend.WorldLocal {
			require.Equal(t, mp.Hypothesis, r.Type)
			require.Equal(t, world, r.Provenance.WorldID)
		} else {
			require.Equal(t, mp.Fact, r.Type)
		}
	}
	local, err := f.store.Retrieve(f.ctx, "grid", 10, memory.Filter{Reality: backend.WorldLocal})
	require.NoError(t, err)
	require.Len(t, local, 1)
	require.Equal(t, mp.Hypothesis, local[0].Type)

	// The database refuses a world-local fact outright.
	_, err = f.db.SQL.Exec("UPDATE memories SET type = 'fact' WHERE id = ?", d.MemoryID)
	require.ErrorContains(t, err, "CHECK constraint failed")
}

func TestRetrieveFiltersAndLimits(t *testing.T) {
	t.Parallel()
	f := setup(t)
	otherRun := backend.NewID(backend.KindRun)
	for i, text := range []string{
		"The CI pipeline builds the Go binary with go build ./... on every push.",
		"To release, tag the commit and push the tag; CI publishes the artifacts.",
		"The user prefers short answers without emoji.",
	} {
		c := f.candidate(text)
		c.Type = []mp.Type{mp.Fact, mp.Procedure, mp.Preference}[i]
		if i == 2 {
			c.RunID = otherRun
		}
		f.consider(t, c)
	}
	get := func(flt memory.Filter, k int) []memory.Retrieved {
		t.Helper()
		r, err := f.store.Retrieve(f.ctx, "how does CI build and release", k, flt)
		require.NoError(t, err)
		return r
	}
	require.Len(t, get(memory.Filter{}, 10), 3)
	require.Len(t, get(memory.Filter{}, 2), 2)
	require.Len(t, get(memory.Filter{Type: mp.Procedure}, 10), 1)
	require.Len(t, get(memory.Filter{RunID: otherRun}, 10), 1)
	require.Equal(t, mp.Preference, get(memory.Filter{RunID: otherRun}, 10)[0].Type)
	all := get(memory.Filter{}, 10)
	for i := 1; i < len(all); i++ {
		require.GreaterOrEqual(t, all[i-1].Similarity, all[i].Similarity, "most similar first")
	}
	require.Less(t, len(get(memory.Filter{MinSimilarity: all[0].Similarity}, 10)), 3)

	for _, tc := range []struct {
		k   int
		q   string
		flt memory.Filter
	}{{0, "x", memory.Filter{}}, {101, "x", memory.Filter{}}, {5, "  ", memory.Filter{}},
		{5, "x", memory.Filter{Type: "rumour"}}, {5, "x", memory.Filter{Reality: "dream"}}, {5, "x", memory.Filter{RunID: "wld_1"}}} {
		_, err := f.store.Retrieve(f.ctx, tc.q, tc.k, tc.flt)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%+v", tc)
	}
}

func TestRemoveAndList(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a := f.consider(t, f.candidate("The staging host is called staging-01 in the inventory."))
	b := f.consider(t, f.candidate("Logs of the web app rotate daily and keep 14 days."))
	list, err := f.store.List(f.ctx, memory.ListQuery{})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, b.MemoryID, list[0].ID, "newest first")
	require.Nil(t, list[0].Vector)

	require.NoError(t, f.store.Remove(f.ctx, a.MemoryID))
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(f.store.Remove(f.ctx, a.MemoryID)))
	_, err = f.store.Get(f.ctx, a.MemoryID)
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err))
	got, err := f.store.Retrieve(f.ctx, "staging host inventory", 10, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, b.MemoryID, got[0].ID)
	var sources int
	require.NoError(t, f.db.SQL.QueryRow("SELECT count(*) FROM memory_sources WHERE memory_id = ?", a.MemoryID).Scan(&sources))
	require.Zero(t, sources, "its provenance went with it")

	st, err := f.store.Status(f.ctx)
	require.NoError(t, err)
	require.Equal(t, memory.Status{Model: memory.HashModel, Indexed: 1, LoadedFrom: "database", LoadTime: st.LoadTime}, st)
}

func TestAServersAnswerKeepsItsURLAndTimeAsProvenance(t *testing.T) {
	t.Parallel()
	f := setup(t)
	at := time.Date(2026, 12, 1, 18, 0, 0, 123456000, time.UTC)
	c := f.candidate("web_fetch: https://news.example/notes answered 200 at 2026-12-01T18:00:00Z: Duck 2.4 reads web pages.")
	c.URL, c.ObservedAt = "https://news.example/notes", at
	d := f.consider(t, c)
	require.Equal(t, mp.Store, d.Decision.Action)
	m, err := f.store.Get(f.ctx, d.MemoryID)
	require.NoError(t, err)
	require.Equal(t, "https://news.example/notes", m.Provenance.URL)
	require.True(t, at.Equal(m.Provenance.ObservedAt), "%s", m.Provenance.ObservedAt)
	require.Len(t, m.Sources, 1)
	require.Equal(t, "https://news.example/notes", m.Sources[0].URL)
	require.True(t, at.Equal(m.Sources[0].ObservedAt))

	// The same answer fetched later merges, each time kept.
	later := c
	later.ObservedAt = at.Add(time.Hour)
	d2 := f.consider(t, later)
	require.Equal(t, mp.Merge, d2.Decision.Action)
	m, err = f.store.Get(f.ctx, d.MemoryID)
	require.NoError(t, err)
	require.Len(t, m.Sources, 2)
	require.True(t, at.Add(time.Hour).Equal(m.Sources[1].ObservedAt))

	// Any other memory has none.
	plain := f.consider(t, f.candidate("The database server runs PostgreSQL 16 on port 5432."))
	m, err = f.store.Get(f.ctx, plain.MemoryID)
	require.NoError(t, err)
	require.Empty(t, m.Provenance.URL)
	require.True(t, m.Provenance.ObservedAt.IsZero())
}
