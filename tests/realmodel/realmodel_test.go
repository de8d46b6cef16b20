package realmodel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	"ducklm/backend/ollama"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
	"ducklm/tests/realmodel"
)

// tasks are what a new user types. The tiny model's words are nonsense, so
// what is proven is the client side: every task ends, promptly, in a state
// a person can act on, whatever the real server sends.
var tasks = []string{
	"list the files in the workspace",
	"what is the hostname of this machine?",
	"count the lines in notes.txt",
	"create a file hello.txt that says hello",
	"show how much disk space the workspace uses",
	"summarise the README",
	"what is 2 + 2?",
	"print today's date",
	"find every .go file under the workspace",
	"delete the temporary files",
	"tell me a joke",
	"which kernel version is running?",
	"write a python script that prints the first ten primes",
	"compress the logs folder into logs.tar.gz",
	"show the environment variables",
	"make a directory called build",
	"check whether git is installed",
	"which time zone is this machine in?",
	"say ok",
	"rename a.txt to b.txt",
}

func TestNaturalLanguageTasksEndCleanly(t *testing.T) {
	s := open(t)
	outcomes := map[backend.RunStatus]int{}
	attempts, revisions, reviews, answers, steps := 0, 0, 0, 0, 0
	for i, task := range tasks {
		start := time.Now()
		id := s.submit(t, task, realmodel.Tiny)
		// A person approving every step, as `ducklm run --approve auto`:
		// the run goes on through the sandbox, the critic and a revision.
		st := s.approveUntilEnd(t, id, 60*time.Second)
		took := time.Since(start)
		outcomes[st.Status]++
		attempts += len(st.Planning)
		revisions += len(st.Revised)
		reviews += len(st.Reviews)
		steps += st.StepsRun
		t.Logf("%2d %-55q %-9s %d attempts %d revisions %d reviews %d steps %5.1fs  %s", i+1, task, st.Status,
			len(st.Planning), len(st.Revised), len(st.Reviews), st.StepsRun, took.Seconds(), st.StatusReason)
		require.NotEmpty(t, st.Planning, "the real model planned %q", task)
		for _, a := range st.Planning {
			require.Equal(t, realmodel.Tiny, strings.TrimSuffix(a.Model, ":latest"))
			// What the grammar does not enforce never fails a run: bounds
			// are mended, the rest replanned with the exact error.
			require.NotContains(t, a.Error, "maximum:", "task %q", task)
			require.NotContains(t, a.Error, "minimum:", "task %q", task)
		}
		// Never the same question twice with the same options: within a
		// round (the first plan, a revision, a review) each attempt is
		// asked with options of its own.
		seen := map[string]bool{}
		for _, a := range st.Planning {
			key := fmt.Sprintf("%d/%d/%v", a.Revision, a.Review, a.Options)
			require.False(t, seen[key], "task %q asked round %d/%d twice with options %v", task, a.Revision, a.Review, a.Options)
			seen[key] = true
		}
		if st.Status == backend.RunCompleted {
			// A task a model planned ends with its answer.
			require.NotNil(t, st.Answer, "task %q completed without an answer: %s", task, st.StatusReason)
			require.NotEmpty(t, st.Answer.Text)
			answers++
		}
		if st.Status == backend.RunFailed {
			sentence(t, st.StatusReason)
			require.NotContains(t, st.StatusReason, "maximum:", "a run never ends on a schema bound")
			require.NotContains(t, st.StatusReason, "minimum:", "a run never ends on a schema bound")
			if st.Graph == nil {
				require.Contains(t, st.StatusReason, "tiny", "a run without a plan names the model")
				require.Contains(t, st.StatusReason, "explicit plan", "and the next step")
			}
		}
	}
	t.Logf("outcomes over %d tasks: %v; %d planning attempts, %d revisions after failed steps, %d reviews, %d answers, %d steps run",
		len(tasks), outcomes, attempts, revisions, reviews, answers, steps)
}

func TestTokensCriticAndMemoryGoThroughTheRealModel(t *testing.T) {
	s := open(t)
	// Memories embedded by the real server's /api/embed.
	res, err := s.svc.ReindexMemories(s.ctx, service.ReindexOptions{Model: realmodel.Tiny})
	require.NoError(t, err)
	require.Equal(t, realmodel.Tiny, strings.TrimSuffix(res.Model, ":latest"))

	var mu sync.Mutex
	streamed := map[string]*strings.Builder{}
	stop := s.svc.Tokens.Subscribe(func(tok service.Token) {
		if tok.StepID != "" {
			return // a coder's tokens; the planner's have no step
		}
		mu.Lock()
		defer mu.Unlock()
		if streamed[tok.RunID] == nil {
			streamed[tok.RunID] = &strings.Builder{}
		}
		streamed[tok.RunID].WriteString(tok.Text)
	})
	defer stop()

	// A planned task: every planner token reached the window's stream.
	id := s.submit(t, "say ok", realmodel.Tiny)
	st := s.waitFor(t, id, 60*time.Second, backend.RunCompleted, backend.RunFailed, backend.RunAwaitingApproval)
	var all strings.Builder
	for _, a := range st.Planning {
		all.WriteString(a.Answer)
	}
	mu.Lock()
	got := streamed[id].String()
	mu.Unlock()
	require.Equal(t, all.String(), got, "the streamed tokens are the answers, in order")

	// A step that runs: the critic is the real model, and the result goes
	// to memory through the write policy.
	id = s.submit(t, "$ echo hello-from-a-step", realmodel.Tiny)
	st = s.waitFor(t, id, 60*time.Second, backend.RunCompleted, backend.RunFailed, backend.RunAwaitingApproval)
	if st.Status == backend.RunAwaitingApproval { // no bubblewrap here: every shell step asks
		d, err := s.api.RunDetail(id)
		require.NoError(t, err)
		require.NoError(t, s.svc.Runtime.Answer(s.ctx, id, runtime.Answer{RequestID: d.Approvals[0].RequestID, Approve: true, By: "test"}))
		st = s.waitFor(t, id, 60*time.Second, backend.RunCompleted, backend.RunFailed)
	}
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	c := st.Steps["step-1"].Critique
	require.NotNil(t, c)
	require.Equal(t, "model", c.Source, "the real model judged the step: %s", c.Explanation)
	require.Equal(t, realmodel.Tiny, strings.TrimSuffix(c.Model, ":latest"))
	require.GreaterOrEqual(t, c.Score, 0.0)
	require.LessOrEqual(t, c.Score, 1.0)

	store, err := s.svc.Memory(s.ctx)
	require.NoError(t, err)
	require.Equal(t, realmodel.Tiny, strings.TrimSuffix(store.Model(), ":latest"), "memories are embedded by the real model")
	_, err = store.Retrieve(s.ctx, "hello from a step", 5, memory.Filter{})
	require.NoError(t, err, "retrieval embeds the query through the real /api/embed")
}

func TestSettingsListTheRealModels(t *testing.T) {
	s := open(t)
	info, err := s.api.Models()
	require.NoError(t, err)
	require.True(t, info.Reachable, info.Error)
	require.Equal(t, srv.URL().String(), strings.TrimSuffix(info.Host, "/"))
	for _, m := range []string{realmodel.Tiny, realmodel.Random, realmodel.Looping, realmodel.Endless} {
		require.Contains(t, names(info.Models), m)
	}
}

func names(models []string) []string {
	out := make([]string, len(models))
	for i, m := range models {
		out[i] = strings.TrimSuffix(m, ":latest")
	}
	return out
}

// The server dies in the middle of an answer: the run pauses with the
// reason, and resumes by itself once the server is back.
func TestServerKilledMidStreamPausesThenResumes(t *testing.T) {
	s := open(t)
	var once sync.Once
	var id string
	var idMu sync.Mutex
	killed := make(chan struct{})
	stop := s.svc.Tokens.Subscribe(func(tok service.Token) {
		idMu.Lock()
		mine := tok.RunID == id
		idMu.Unlock()
		if mine {
			once.Do(func() { srv.Kill(); close(killed) })
		}
	})
	defer stop()
	idMu.Lock()
	id = s.submit(t, "list the files in the workspace", realmodel.Endless)
	idMu.Unlock()
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("no token of the run arrived within 60 s")
	}
	st := s.waitFor(t, id, 30*time.Second, backend.RunPaused)
	require.Contains(t, st.StatusReason, "Ollama", "the pause says why")
	sentenceish := st.StatusReason
	t.Logf("paused: %s", sentenceish)

	require.NoError(t, srv.Restart(context.Background()))
	// The paused-run watcher offers the run to the model once it answers.
	st = s.waitFor(t, id, 60*time.Second, backend.RunCompleted, backend.RunFailed, backend.RunAwaitingApproval)
	require.NotEmpty(t, st.Planning, "the run planned again after the server came back")
}

// Cancelling a run while the model streams closes the request: the server
// is free at once for the next one. Ollama 0.17 alone is not, once in a
// few such cancels: its handler stops reading the answer while the
// goroutine that feeds it still holds the model's only slot
// (ollama/ollama#17131), and the next call waited for good (seen here
// 1 in 5 to 35 cancels, and as a 90 s timeout in CI). The client unloads a
// model whose stream it left (ollama.Client.Chat), which ends that runner.
func TestCancelDuringAStreamClosesTheRequest(t *testing.T) {
	oc := ollama.New(srv.URL(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	var first sync.Once
	start := time.Now()
	var cancelledAt time.Time
	_, err := oc.Chat(ctx, ollama.ChatRequest{
		Model:    realmodel.Endless,
		Messages: []ollama.Message{{Role: "user", Content: "go on"}},
		// Minutes of generation if nothing stops it. Not -1 (no end of its
		// own): with it, once in a fresh-clone run, the server was still
		// busy 90 s after the cancel, which the bounded request never was.
		Options: map[string]any{"num_predict": 1_000_000, "temperature": 1, "seed": 7},
		OnToken: func(string) { first.Do(func() { cancelledAt = time.Now(); cancel() }) },
	})
	require.Error(t, err)
	require.Less(t, time.Since(cancelledAt), 2*time.Second, "the call returned at once")
	// The server answers one request at a time (OLLAMA_NUM_PARALLEL=1): a
	// request left open would hold the runner for minutes, so the bound only
	// has to outlast a loaded machine (20 s was not enough once at load 17).
	next, cancelNext := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancelNext()
	resp, err := oc.Chat(next, ollama.ChatRequest{Model: realmodel.Endless, Messages: []ollama.Message{{Role: "user", Content: "again"}},
		Options: map[string]any{"num_predict": 4}})
	require.NoError(t, err, "the server was free: the cancelled request was closed (%s after start)", time.Since(start))
	require.Equal(t, "length", resp.DoneReason)

	// The same through a run: cancelling it mid-stream ends it promptly.
	s := open(t)
	var runID string
	var mu sync.Mutex
	var once sync.Once
	stop := s.svc.Tokens.Subscribe(func(tok service.Token) {
		mu.Lock()
		mine := tok.RunID == runID
		mu.Unlock()
		if mine {
			once.Do(func() { go func() { _ = s.api.CancelRun(tok.RunID) }() })
		}
	})
	defer stop()
	mu.Lock()
	runID = s.submit(t, "list the files in the workspace", realmodel.Endless)
	mu.Unlock()
	st := s.waitFor(t, runID, 30*time.Second, backend.RunTerminated)
	sentence(t, st.StatusReason)
}

// Each of these gives a sentence with a next step.
func TestModelProblemsSaySoWithANextStep(t *testing.T) {
	oc := ollama.New(srv.URL(), nil)
	ctx := context.Background()

	// A model the server does not have.
	_, err := oc.Chat(ctx, ollama.ChatRequest{Model: "no-such-model:7b", Messages: []ollama.Message{{Role: "user", Content: "hi"}}})
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "%v", err)
	require.Equal(t, "model no-such-model:7b is not installed in Ollama (ollama pull no-such-model:7b)", backend.ErrorMessage(err))
	_, err = oc.Embed(ctx, "no-such-model:7b", []string{"hi"})
	require.Equal(t, backend.ENOTFOUND, backend.ErrorCode(err), "%v", err)

	// A model that repeats one token until the server stops it.
	_, err = oc.Chat(ctx, ollama.ChatRequest{Model: realmodel.Looping, Messages: []ollama.Message{{Role: "user", Content: "hi"}}})
	require.True(t, errors.Is(err, ollama.ErrRepetition), "%v", err)
	require.Contains(t, backend.ErrorMessage(err), `tiny-loop repeated "o" over and over, so Ollama stopped its answer`)

	// The same as a run's planner: replanned, then a sentence that names
	// the model and the next step.
	s := open(t)
	id := s.submit(t, "list the files in the workspace", realmodel.Looping)
	st := s.waitFor(t, id, 60*time.Second, backend.RunFailed, backend.RunCompleted, backend.RunAwaitingApproval)
	require.Equal(t, backend.RunFailed, st.Status)
	sentence(t, st.StatusReason)
	require.Contains(t, st.StatusReason, "repeated")
	require.Contains(t, st.StatusReason, "tiny-loop")
	require.Contains(t, st.StatusReason, "explicit plan")
	require.Len(t, st.Planning, 3, "the first attempt and two replans, each a different request")
	require.NotEqual(t, fmt.Sprint(st.Planning[0].Options), fmt.Sprint(st.Planning[1].Options))
}

// A model that makes no embeddings (Ollama's new engine makes none with
// these models) chosen as the embedder: a sentence with what to choose, and
// the memories stay searchable with the embedder they had.
func TestModelWithoutEmbeddingsSaysWhatToChoose(t *testing.T) {
	other, err := realmodel.Start(context.Background(), t.TempDir(), "OLLAMA_NEW_ENGINE=1")
	require.NoError(t, err)
	t.Cleanup(other.Stop)

	_, err = ollama.New(other.URL(), nil).Embed(context.Background(), realmodel.Tiny, []string{"hello"})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%v", err)
	require.Contains(t, backend.ErrorMessage(err), "model tiny cannot make embeddings (Ollama: this model does not support embeddings)")
	require.Contains(t, backend.ErrorMessage(err), "choose an embedding model as the embedder in Settings")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, err := service.OpenWith(ctx, t.TempDir(), service.Options{OllamaHost: other.URL().String()})
	require.NoError(t, err)
	defer svc.Close()
	store, err := svc.Memory(ctx)
	require.NoError(t, err)
	before := store.Model()
	_, err = svc.ReindexMemories(ctx, service.ReindexOptions{Model: realmodel.Tiny})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err), "%v", err)
	require.Contains(t, backend.ErrorMessage(err), "cannot make embeddings")
	require.Equal(t, before, store.Model(), "the memories are still searched with %s", before)
}
