package api_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/api"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/service"
	"ducklm/backend/settings"
)

// memorySetup is setup with the service, for its progress hub, and the
// Ollama at ollamaHost ("" = nothing listens).
func memorySetup(t *testing.T, ollamaHost string) (*api.API, *service.Service) {
	t.Helper()
	if ollamaHost == "" {
		ollamaHost = "127.0.0.1:1"
	}
	svc, err := service.OpenWith(context.Background(), t.TempDir(), service.Options{OllamaHost: ollamaHost})
	require.NoError(t, err)
	t.Cleanup(func() { svc.Close() })
	return api.New(svc, nil, slog.New(slog.NewTextHandler(io.Discard, nil))), svc
}

// runShell runs a one-step shell task to its end, approving what it asks,
// and returns the run's id: its scored result is offered to the memory
// write policy the way every task step's is.
func runShell(t *testing.T, a *api.API, task, command string) string {
	t.Helper()
	run, err := a.SubmitTask(api.TaskInput{Task: task, ApprovalMode: "auto_sandboxed",
		Plan: `{"nodes":[{"id":"step-1","kind":"tool","tool":"shell_exec","args":{"command":"` + command + `"}}]}`})
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		d, err := a.RunDetail(run.ID)
		require.NoError(t, err)
		for _, ap := range d.Approvals { // no bubblewrap here: every shell step asks
			require.NoError(t, a.Answer(api.AnswerInput{RunID: run.ID, RequestID: ap.RequestID, Approve: true}))
		}
		if d.Run.Status == backend.RunCompleted {
			return run.ID
		}
		require.NotEqual(t, backend.RunFailed, d.Run.Status, d.Run.Error)
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the run %s did not complete", run.ID)
	return ""
}

func TestMemoryScreenSearchesShowsProvenanceAndDeletes(t *testing.T) {
	a, svc := memorySetup(t, "")

	st, err := a.MemoryStatus()
	require.NoError(t, err)
	require.Zero(t, st.Memories)
	require.Equal(t, memory.HashModel, st.Model)
	require.True(t, st.Builtin)
	page, err := a.ListMemories(api.MemoryListInput{})
	require.NoError(t, err)
	require.NotNil(t, page.Memories, "an empty page is a list, not null")
	require.Empty(t, page.Memories)

	runID := runShell(t, a, "find the port nginx listens on", "echo nginx listens on port 8080")
	page, err = a.ListMemories(api.MemoryListInput{})
	require.NoError(t, err)
	require.Len(t, page.Memories, 1, "the scored step result passed the write policy")
	m := page.Memories[0]
	require.Equal(t, mp.Observation, m.Type)
	require.Equal(t, runID, m.Provenance.RunID)
	require.Contains(t, m.Text, "nginx listens on port 8080")

	found, err := a.SearchMemories(api.MemorySearch{Query: "which port does nginx listen on"})
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.Equal(t, m.ID, found[0].ID)
	require.Greater(t, found[0].Similarity, 0.0)
	require.Equal(t, backend.ExternalReal, found[0].Provenance.Reality)
	found, err = a.SearchMemories(api.MemorySearch{Query: "nginx", Reality: "world_local"})
	require.NoError(t, err)
	require.NotNil(t, found)
	require.Empty(t, found, "no hypothesis from a simulated world matches")
	found, err = a.SearchMemories(api.MemorySearch{Query: "nginx", RunID: runID, Type: "observation"})
	require.NoError(t, err)
	require.Len(t, found, 1)
	_, err = a.SearchMemories(api.MemorySearch{Query: "nginx", Type: "rumour"})
	require.EqualError(t, err, `memory type "rumour" is not one of fact, observation, procedure, hypothesis, preference`)
	_, err = a.SearchMemories(api.MemorySearch{Query: "  "})
	require.ErrorContains(t, err, "needs a query")

	d, err := a.MemoryDetail(m.ID)
	require.NoError(t, err)
	require.Equal(t, m.Text, d.Memory.Text)
	require.Equal(t, memory.HashDims, d.Dimensions)
	require.Len(t, d.Sources, 1)
	src := d.Sources[0]
	require.Equal(t, runID, src.RunID)
	require.Equal(t, runID, src.Stream)
	require.Equal(t, "step.finished", src.EventType)
	require.Equal(t, "step-1", src.Step)
	require.Positive(t, src.Seq, "the source event is placed in the run's timeline")
	ev, err := svc.Ledger.Get(context.Background(), src.EventID)
	require.NoError(t, err)
	require.Equal(t, ev.Seq, src.Seq)
	require.Greater(t, src.CriticScore, 0.5)

	st, err = a.MemoryStatus()
	require.NoError(t, err)
	require.EqualValues(t, 1, st.Memories)
	require.Equal(t, 1, st.Indexed)

	require.NoError(t, a.DeleteMemory(m.ID))
	page, err = a.ListMemories(api.MemoryListInput{})
	require.NoError(t, err)
	require.Empty(t, page.Memories)
	found, err = a.SearchMemories(api.MemorySearch{Query: "which port does nginx listen on"})
	require.NoError(t, err)
	require.Empty(t, found, "a deleted memory is gone from the index too")
	require.EqualError(t, a.DeleteMemory(m.ID), "there is no memory "+m.ID)
	_, err = a.MemoryDetail("mem_nope")
	require.Error(t, err)
	_, err = a.ListMemories(api.MemoryListInput{Before: "yesterday"})
	require.ErrorContains(t, err, "start again from the first page")
}

func TestReindexSwitchesTheRunningAppAndReportsProgress(t *testing.T) {
	a, svc := memorySetup(t, "")
	runShell(t, a, "find the port nginx listens on", "echo nginx listens on port 8080")

	var mu sync.Mutex
	var seen []service.Progress
	stop := svc.Progress.Subscribe(func(p service.Progress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	})
	defer stop()
	res, err := a.ReindexMemories(api.ReindexInput{Model: "ducklm-hash-128", Op: "op-1"})
	require.NoError(t, err)
	require.Equal(t, "ducklm-hash-128", res.Model)
	require.Equal(t, memory.HashModel, res.Previous)
	require.Equal(t, 1, res.Reembedded)
	require.Equal(t, 1, res.Indexed)
	require.True(t, res.SettingsSaved)
	mu.Lock()
	require.NotEmpty(t, seen)
	require.Equal(t, service.PhaseReindexCheck, seen[0].Phase)
	last := seen[len(seen)-1]
	mu.Unlock()
	require.Equal(t, service.Progress{Op: "op-1", Phase: service.PhaseReindexEmbed, Done: 1, Total: 1, Unit: "memories"}, last)

	st, err := a.MemoryStatus()
	require.NoError(t, err)
	require.Equal(t, "ducklm-hash-128", st.Model)
	require.True(t, st.Builtin)
	require.Zero(t, st.Stale)
	prefs, err := settings.Load(svc.Dir)
	require.NoError(t, err)
	require.Equal(t, "ducklm-hash-128", prefs.Models["embedder"], "the settings name the embedder in use")

	// The running app writes and reads with the new model at once.
	runShell(t, a, "find where postgres keeps its data", "echo postgres keeps its data in /var/lib/postgresql")
	page, err := a.ListMemories(api.MemoryListInput{})
	require.NoError(t, err)
	require.Len(t, page.Memories, 2)
	require.Equal(t, "ducklm-hash-128", page.Memories[0].Model)
	found, err := a.SearchMemories(api.MemorySearch{Query: "where is the postgres data", K: 1})
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.Equal(t, page.Memories[0].ID, found[0].ID)
	require.Equal(t, "ducklm-hash-128", found[0].Model)

	// An Ollama model without Ollama: a sentence with the next step, and
	// nothing changed.
	_, err = a.ReindexMemories(api.ReindexInput{Model: "nomic-embed-text", Op: "op-2"})
	require.ErrorContains(t, err, "Ollama")
	st, err = a.MemoryStatus()
	require.NoError(t, err)
	require.Equal(t, "ducklm-hash-128", st.Model)
	require.NotNil(t, st.Reindex)
	require.False(t, st.Reindex.Running)
	require.Contains(t, st.Reindex.Error, "Ollama")

	ch, err := a.MemoryEmbedders()
	require.NoError(t, err)
	require.Equal(t, memory.HashModel, ch.Builtin)
	require.Equal(t, "ducklm-hash-128", ch.Current)
	require.False(t, ch.Ollama.Reachable)
	require.NotNil(t, ch.Embedding)
}

func TestReindexWithOllamaCanBeCancelled(t *testing.T) {
	srv := ollamatest.NewServerWith(t, ollamatest.Options{Models: []string{"qwen2.5:7b", "nomic-embed-text"}, EmbedDims: 16})
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv.OnEmbed(func(model, input string) ([]float32, error) {
		if input != "ducklm" { // the first call only checks the model
			once.Do(func() { close(started) })
			<-release
		}
		return ollamatest.Vector(model, input, 16), nil
	})
	a, svc := memorySetup(t, srv.URL().String())
	// Registered after the service's cleanup, so it runs first: a failed
	// check must not leave Close waiting on a held embedding call.
	t.Cleanup(func() { close(release) })
	store, err := svc.Memory(context.Background())
	require.NoError(t, err)
	run := backend.NewID(backend.KindRun)
	_, err = store.Consider(context.Background(), memory.Candidate{Text: "The nginx service listens on port 8080.", Type: mp.Fact,
		RunID: run, EventID: backend.NewID(backend.KindEvent), CriticScore: 0.9, RuntimeWeight: 0.8})
	require.NoError(t, err)

	ch, err := a.MemoryEmbedders()
	require.NoError(t, err)
	require.True(t, ch.Ollama.Reachable)
	require.Equal(t, []string{"nomic-embed-text:latest"}, ch.Embedding, "the models whose names say they embed")

	done := make(chan error, 1)
	go func() {
		_, err := a.ReindexMemories(api.ReindexInput{Model: "nomic-embed-text", Op: "op-3"})
		done <- err
	}()
	<-started
	st, err := a.MemoryStatus()
	require.NoError(t, err)
	require.NotNil(t, st.Reindex)
	require.True(t, st.Reindex.Running, "the status says a re-embedding runs")
	_, err = a.ReindexMemories(api.ReindexInput{Model: "ducklm-hash-64"})
	require.ErrorContains(t, err, "already being re-embedded")
	cancelled, err := a.CancelReindex()
	require.NoError(t, err)
	require.True(t, cancelled)
	select {
	case err := <-done:
		require.EqualError(t, err, "the re-embedding was cancelled; the memories are still searched with "+memory.HashModel)
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled re-embedding did not stop")
	}
	st, err = a.MemoryStatus()
	require.NoError(t, err)
	require.Equal(t, memory.HashModel, st.Model)
	cancelled, err = a.CancelReindex()
	require.NoError(t, err)
	require.False(t, cancelled, "nothing runs any more")
	found, err := a.SearchMemories(api.MemorySearch{Query: "nginx port"})
	require.NoError(t, err)
	require.Len(t, found, 1, "the old index still answers")
}
