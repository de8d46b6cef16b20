package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/cli"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/ollama/ollamatest"
	"ducklm/backend/service"
	"ducklm/backend/settings"
	"ducklm/backend/store"
)

// remember stores memories in the data directory dir the way a run would
// and returns their ids.
func remember(t *testing.T, dir string, cands ...memory.Candidate) []string {
	t.Helper()
	ctx := context.Background()
	svc, err := service.Open(ctx, dir)
	require.NoError(t, err)
	defer svc.Close()
	store, err := memory.Open(ctx, memory.Options{Repo: store.NewMemories(svc.DB, svc.Ledger), SnapshotDir: filepath.Join(dir, "memory")})
	require.NoError(t, err)
	defer store.Close()
	var ids []string
	for _, c := range cands {
		d, err := store.Consider(ctx, c)
		require.NoError(t, err)
		require.NotEqual(t, mp.Skip, d.Decision.Action, d.Decision.Reason)
		ids = append(ids, d.MemoryID)
	}
	return ids
}

func TestMemoryCommands(t *testing.T) {
	dir := home(t)
	r := ok(t, "memory", "ls")
	require.Contains(t, r.stdout, "no memories yet")

	run := backend.NewID(backend.KindRun)
	world := backend.NewID(backend.KindWorld)
	cand := func(text string, typ mp.Type) memory.Candidate {
		return memory.Candidate{Text: text, Type: typ, RunID: run, EventID: backend.NewID(backend.KindEvent), CriticScore: 0.9, RuntimeWeight: 0.8}
	}
	sim := cand("In the simulated grid the agent reaches the goal in 14 steps going south first.", mp.Fact)
	sim.Reality, sim.WorldID = backend.WorldLocal, world
	ids := remember(t, dir,
		cand("The nginx service on this host listens on port 8080.", mp.Fact),
		cand("To rotate the logs, run logrotate -f /etc/logrotate.conf as root.", mp.Procedure),
		cand("The user prefers answers without emoji.", mp.Preference),
		sim)

	r = ok(t, "memory", "search", "which port does nginx use", "-k", "2")
	require.True(t, strings.HasPrefix(r.stdout, ids[0]+"  "), r.stdout)
	require.Contains(t, r.stdout, "fact  from "+run+" event evt_")
	require.Contains(t, r.stdout, "    The nginx service on this host listens on port 8080.")
	require.Equal(t, 2, strings.Count(r.stdout, "\n    "), "two results")

	r = ok(t, "memory", "search", "grid goal steps", "--json")
	var found []memory.Retrieved
	r.decode(t, &found)
	require.Len(t, found, 4)
	require.Equal(t, ids[3], found[0].ID)
	require.Equal(t, mp.Hypothesis, found[0].Type, "a simulated result is a hypothesis")
	require.Equal(t, world, found[0].Provenance.WorldID)

	r = ok(t, "memory", "search", "grid goal steps", "--type", "fact", "--json")
	r.decode(t, &found)
	require.Len(t, found, 1)
	require.Equal(t, ids[0], found[0].ID, "never returned as a fact")
	r = ok(t, "memory", "search", "grid goal", "--type", "hypothesis")
	require.Contains(t, r.stdout, "hypothesis (simulated in "+world+")")

	r = ok(t, "memory", "ls")
	require.Contains(t, r.stdout, "MEMORY")
	require.Equal(t, 5, strings.Count(r.stdout, "\n"), "a header and four memories")
	r = ok(t, "memory", "ls", "--type", "procedure", "--json")
	var list []memory.Memory
	r.decode(t, &list)
	require.Len(t, list, 1)
	require.Equal(t, ids[1], list[0].ID)

	r = ok(t, "memory", "show", ids[0])
	require.Equal(t, ids[0], r.field(t, "memory"))
	require.Equal(t, memory.HashModel+" (384 dimensions)", r.field(t, "embedding"))
	require.Contains(t, r.stdout, "sources:\n  ")

	r = ok(t, "memory", "rm", ids[2])
	require.Equal(t, ids[2], r.field(t, "removed"))
	r = ducklm(t, "memory", "rm", ids[2])
	require.Equal(t, cli.ExitUsage, r.code, "removing it again: not found")
	r = ok(t, "memory", "search", "emoji answers", "--json")
	r.decode(t, &found)
	for _, f := range found {
		require.NotEqual(t, ids[2], f.ID)
	}

	r = ok(t, "memory", "reindex", "--model", "ducklm-hash-128")
	require.Equal(t, "ducklm-hash-128 (was "+memory.HashModel+")", r.field(t, "model"))
	require.Equal(t, "3", r.field(t, "re-embedded"))
	require.Contains(t, r.stderr, "re-embedded 3 of 3 memories")
	r = ok(t, "memory", "search", "which port does nginx use", "-k", "1", "--json")
	r.decode(t, &found)
	require.Equal(t, ids[0], found[0].ID)
	require.Equal(t, "ducklm-hash-128", found[0].Model, "later commands use the model the index was rebuilt with")

	// An Ollama embedding model.
	srv := ollamatest.NewServerWith(t, ollamatest.Options{EmbedDims: 24})
	t.Setenv("OLLAMA_HOST", srv.URL().String())
	r = ok(t, "memory", "reindex", "--model", "nomic-embed-text", "--json")
	var re struct {
		Model      string `json:"model"`
		Reembedded int    `json:"reembedded"`
		Indexed    int    `json:"indexed"`
	}
	r.decode(t, &re)
	require.Equal(t, "nomic-embed-text:latest", re.Model)
	require.Equal(t, 3, re.Reembedded)
	require.Equal(t, 3, re.Indexed)
	r = ok(t, "memory", "search", "To rotate the logs, run logrotate -f /etc/logrotate.conf as root.", "-k", "1", "--json")
	r.decode(t, &found)
	require.Equal(t, ids[1], found[0].ID)
	require.Equal(t, "nomic-embed-text:latest", found[0].Model)

	// Without --model, the embedder of the settings.
	require.NoError(t, settings.Save(dir, settings.Settings{Models: map[string]string{"embedder": "ducklm-hash-64"}}))
	r = ok(t, "memory", "reindex")
	require.Equal(t, "ducklm-hash-64 (was nomic-embed-text:latest)", r.field(t, "model"))
	r = ok(t, "memory", "reindex", "--model", "nomic-embed-text")
	require.Equal(t, "nomic-embed-text:latest (was ducklm-hash-64)", r.field(t, "model"))

	// Ollama gone: searching says so; listing still works.
	srv.Close()
	r = ducklm(t, "memory", "search", "nginx")
	require.Equal(t, cli.ExitFail, r.code)
	require.Contains(t, r.stderr, "Ollama")
	ok(t, "memory", "ls")
}

func TestMemoryUsageErrors(t *testing.T) {
	home(t)
	for _, args := range [][]string{
		{"memory"},
		{"memory", "nope"},
		{"memory", "search"},
		{"memory", "search", "  "},
		{"memory", "search", "x", "--type", "rumour"},
		{"memory", "search", "x", "-k", "0"},
		{"memory", "rm"},
		{"memory", "rm", "run_0190a1b2c3d4e5f60718293a4b5c6d7e"},
		{"memory", "show", "mem_x"},
		{"memory", "ls", "extra"},
	} {
		r := ducklm(t, args...)
		require.Equal(t, cli.ExitUsage, r.code, "ducklm %s: %s", strings.Join(args, " "), r.stderr)
		require.NotEmpty(t, r.stderr)
	}
	r := ok(t, "memory", "help")
	require.Contains(t, r.stdout, "ducklm memory reindex [--model NAME]")
	r = ok(t, "memory", "search", "--help")
	require.Contains(t, r.stdout, `usage: ducklm memory search "QUERY"`)
}
