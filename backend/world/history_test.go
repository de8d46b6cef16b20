package world_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/world"
)

// forkedHistory is a root run of 3 steps, checkpointed, and a child forked
// from that checkpoint and run 4 more steps: the child's history is the
// root's prefix, then its own events.
func forkedHistory(t *testing.T, f fixture) (root, child backend.WorldRun) {
	t.Helper()
	_, root = create(t, f, 3)
	steps(t, f, root.ID, 3)
	cp, err := f.worlds.Checkpoint(f.ctx, root.ID)
	require.NoError(t, err)
	_, _, child, err = f.worlds.Fork(f.ctx, world.ForkRequest{CheckpointID: cp.ID, Divergence: backend.DivergeStatePatch, Delta: json.RawMessage(`{"params": {"inc": 2}}`)})
	require.NoError(t, err)
	steps(t, f, child.ID, 4)
	return root, child
}

func TestHistoryPageNamesItsSegments(t *testing.T) {
	t.Parallel()
	f := setup(t)
	root, child := forkedHistory(t, f)
	all, err := f.worlds.History(f.ctx, child.ID)
	require.NoError(t, err)

	p, err := f.worlds.HistoryPage(f.ctx, child.ID, 0, 5000)
	require.NoError(t, err)
	require.Equal(t, int64(len(all)), p.Total)
	require.Len(t, p.Segments, 2)
	require.Equal(t, root.ID, p.Segments[0].Stream)
	require.Equal(t, child.ID, p.Segments[1].Stream)
	require.Equal(t, p.Inherited, p.Segments[0].ToSeq)

	// A negative offset is the last page, on a boundary of the page size.
	last, err := f.worlds.HistoryPage(f.ctx, child.ID, -1, 4)
	require.NoError(t, err)
	require.Equal(t, (p.Total-1)/4*4, last.Offset)
	require.Equal(t, all[len(all)-1].ID, last.Events[len(last.Events)-1].ID)
	require.Len(t, last.Events, int(p.Total-last.Offset))
	// -n is the page holding the n-th event from the end: with the last page
	// it covers a screenful even when the last page holds few events.
	for n := int64(1); n <= p.Total+2; n++ {
		back, err := f.worlds.HistoryPage(f.ctx, child.ID, -n, 4)
		require.NoError(t, err)
		want := max(p.Total-n, 0) / 4 * 4
		require.Equal(t, want, back.Offset, "offset -%d", n)
		require.Equal(t, all[want].ID, back.Events[0].ID, "offset -%d", n)
	}

	// A page in the middle starts exactly where asked, across the fork point.
	mid, err := f.worlds.HistoryPage(f.ctx, child.ID, p.Inherited-2, 4)
	require.NoError(t, err)
	require.Len(t, mid.Events, 4)
	for i, e := range mid.Events {
		require.Equal(t, all[int(p.Inherited)-2+i].ID, e.ID)
	}
}

func TestSearchHistoryFiltersByTypeRealityAndText(t *testing.T) {
	t.Parallel()
	f := setup(t)
	root, child := forkedHistory(t, f)
	all, err := f.worlds.History(f.ctx, child.ID)
	require.NoError(t, err)

	// By type: every world.step, root's and the child's, with positions in the whole history.
	m, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Types: []string{world.EventStep}}, 0, 100)
	require.NoError(t, err)
	require.Equal(t, int64(len(all)), m.Total)
	require.Equal(t, m.Total, m.Next, "the whole history was searched")
	require.Len(t, m.Matches, 3+4)
	for _, x := range m.Matches {
		require.Equal(t, world.EventStep, x.Event.Type)
		require.Equal(t, all[x.Index].ID, x.Event.ID)
	}
	require.Equal(t, root.ID, m.Matches[0].Event.Stream)
	require.Equal(t, child.ID, m.Matches[6].Event.Stream)

	// A limit stops the search at the last match, and the next search goes on from there.
	first, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Types: []string{world.EventStep}}, 0, 2)
	require.NoError(t, err)
	require.Len(t, first.Matches, 2)
	require.Equal(t, first.Matches[1].Index+1, first.Next)
	rest, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Types: []string{world.EventStep}}, first.Next, 100)
	require.NoError(t, err)
	require.Len(t, rest.Matches, 5)
	require.Equal(t, m.Matches[2], rest.Matches[0])

	// Plain text is case-insensitive over type, stream, #seq and payload.
	text, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Text: "FORKED"}, 0, 100)
	require.NoError(t, err)
	require.Len(t, text.Matches, 1)
	require.Equal(t, world.EventForked, text.Matches[0].Event.Type)
	require.Equal(t, text.Matches[0].Index, m.Inherited)
	seq, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Text: child.ID + " #3 "}, 0, 100)
	require.NoError(t, err)
	require.Len(t, seq.Matches, 1)
	require.EqualValues(t, 3, seq.Matches[0].Event.Seq)

	// A regular expression, combined with a type.
	re, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Types: []string{world.EventEmitted}, Text: `"drew":[0-4]\b`, Regex: true}, 0, 100)
	require.NoError(t, err)
	want := 0
	for _, e := range all {
		var p struct{ Drew *int }
		if e.Type == world.EventEmitted && json.Unmarshal(e.Payload, &p) == nil && p.Drew != nil && *p.Drew <= 4 {
			want++
		}
	}
	require.Len(t, re.Matches, want)

	// Reality: a simulated world's events are all world-local.
	real, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Reality: backend.ExternalReal}, 0, 100)
	require.NoError(t, err)
	require.Empty(t, real.Matches)
	require.Equal(t, m.Total, real.Next)
}

// TestSearchHistoryStreamsInSlices: a call that runs out of time answers
// with what it found and where to go on; calls from Next find the same
// matches, in order, as one long search, across the fork point.
func TestSearchHistoryStreamsInSlices(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, child := forkedHistory(t, f)
	whole, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Text: "drew"}, 0, 1000)
	require.NoError(t, err)
	require.Equal(t, whole.Total, whole.Next)
	require.NotEmpty(t, whole.Matches)

	sliced := f.reopen()
	sliced.SetSearchSlicing(0, 0, 2) // answer after each chunk of two positions
	var got []world.HistoryMatch
	calls := 0
	for from := int64(0); from < whole.Total; calls++ {
		m, err := sliced.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Text: "drew"}, from, 1000)
		require.NoError(t, err)
		require.Equal(t, from, m.From)
		require.Greater(t, m.Next, from, "every call makes progress")
		require.LessOrEqual(t, m.Next-from, int64(2), "a call stops after its slice")
		got = append(got, m.Matches...)
		from = m.Next
	}
	require.Equal(t, whole.Matches, got)
	require.Greater(t, calls, 1)

	// Out of time, a call still reads its least positions: a short history
	// is searched in one call however busy the machine is.
	short := f.reopen()
	short.SetSearchSlicing(0, 1000, 2)
	one, err := short.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Text: "drew"}, 0, 1000)
	require.NoError(t, err)
	require.Equal(t, whole, one)
}

func TestSearchHistoryRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, child := forkedHistory(t, f)
	_, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Text: "(", Regex: true}, 0, 10)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, err = f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{Reality: "dreamt"}, 0, 10)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	_, err = f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{}, 0, 0)
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	// A search starting past the end finds nothing and says it is done.
	m, err := f.worlds.SearchHistory(f.ctx, child.ID, world.HistoryFilter{}, 1000, 10)
	require.NoError(t, err)
	require.Empty(t, m.Matches)
	require.Equal(t, m.Total, m.Next)
}

func TestHistoryTypesCountsTheWholeHistory(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, child := forkedHistory(t, f)
	all, err := f.worlds.History(f.ctx, child.ID)
	require.NoError(t, err)
	want := map[string]int64{}
	for _, e := range all {
		want[e.Type]++
	}
	got, err := f.worlds.HistoryTypes(f.ctx, child.ID)
	require.NoError(t, err)
	have := map[string]int64{}
	for _, tc := range got {
		have[tc.Type] = tc.Count
	}
	require.Equal(t, want, have)
	for i := 1; i < len(got); i++ {
		require.GreaterOrEqual(t, got[i-1].Count, got[i].Count, "most frequent first")
	}
}

func TestRunStepsInBatchesRecordsTheSameHistory(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, one := create(t, f, 11)
	_, batched := create(t, f, 11)
	_, err := f.worlds.RunSteps(f.ctx, one.ID, world.RunOptions{Steps: 25, CheckpointEvery: 10})
	require.NoError(t, err)
	_, err = f.worlds.RunSteps(f.ctx, batched.ID, world.RunOptions{Steps: 25, CheckpointEvery: 10, SaveEvery: 7})
	require.NoError(t, err)

	a, err := f.worlds.History(f.ctx, one.ID)
	require.NoError(t, err)
	b, err := f.worlds.History(f.ctx, batched.ID)
	require.NoError(t, err)
	require.Equal(t, shape(a), shape(b))
	cps, err := f.worlds.Checkpoints(f.ctx, batched.ID)
	require.NoError(t, err)
	require.Len(t, cps, 1+3) // the start, 10, 20 and the end
	// The batched run reopens from its record and goes on exactly.
	again, err := f.reopen().State(f.ctx, batched.ID)
	require.NoError(t, err)
	mine, err := f.worlds.State(f.ctx, one.ID)
	require.NoError(t, err)
	require.JSONEq(t, string(mine), string(again))
	rep, err := f.worlds.Verify(f.ctx, batched.ID)
	require.NoError(t, err)
	require.True(t, rep.OK, "%+v", rep.Divergence)
}

// shape is what two runs of the same world must agree on: types, seqs,
// clocks and payloads (ids and times differ).
func shape(events []backend.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		payload := string(e.Payload)
		if e.Type == world.EventCheckpoint {
			payload = "" // holds the checkpoint's own id
		}
		out[i] = fmt.Sprintf("%d %s %d %s", e.Seq, e.Type, e.WorldLocalTime, payload)
	}
	return out
}
