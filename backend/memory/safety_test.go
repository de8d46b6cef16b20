package memory_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/memory"
	mp "ducklm/backend/memorypolicy"
	"ducklm/backend/ollama"
	"ducklm/backend/ollama/ollamatest"
)

// Secrets never reach the database (memories, sources, events, WAL) or the
// index (its documents and its snapshot file): only redacted text does.
func TestSecretsNeverReachTheDatabaseOrTheIndex(t *testing.T) {
	t.Parallel()
	f := setup(t)
	secrets := []string{openAIKey, githubToken, awsKey, jwtToken, pemBlock, "hunter2secret", bearerToken}
	texts := []string{
		"Deploys use the OpenAI key " + openAIKey + " from the CI settings page.",
		"The release script pushes with " + githubToken + " to the origin remote.",
		"The backup bucket is reached with access key " + awsKey + " in eu-west-1.",
		"The admin panel accepts the session " + jwtToken + " for the operator account.",
		pemBlock, // nothing but a key: skipped
		"The staging database password=hunter2secret must be rotated monthly.",
		"curl -H 'Authorization: Bearer " + bearerToken + "' returned the list of projects.",
	}
	var stored int
	for _, text := range texts {
		d := f.consider(t, f.candidate(text))
		switch text {
		case pemBlock:
			require.Equal(t, mp.RuleMostlySecret, d.Decision.Rule)
		default:
			require.Equal(t, mp.Store, d.Decision.Action, d.Decision.Reason)
			require.True(t, d.Decision.Redact)
			require.Contains(t, d.Decision.Reason, "secrets redacted")
			stored++
		}
	}
	// A duplicate carrying a secret merges without writing its secret.
	otherKey := "sk-" + strings.Repeat("Zz8kLm3N", 6)
	dup := f.candidate("Deploys use the OpenAI key " + otherKey + " from the CI settings page.")
	d := f.consider(t, dup)
	require.Equal(t, mp.Merge, d.Decision.Action, d.Decision.Reason)
	require.Equal(t, mp.RuleExact, d.Decision.Rule)
	// A world-local result with a secret.
	sim := f.candidate("The simulated operator logged in with " + githubToken + " and reached the goal.")
	sim.Reality, sim.WorldID = backend.WorldLocal, backend.NewID(backend.KindWorld)
	require.Equal(t, mp.Store, f.consider(t, sim).Decision.Action)
	secrets = append(secrets, otherKey)

	got, err := f.store.Retrieve(f.ctx, "deploy key backup session password bearer", 20, memory.Filter{})
	require.NoError(t, err)
	require.Len(t, got, stored+1)
	for _, r := range got {
		require.Contains(t, r.Text, "[REDACTED:")
		for _, s := range secrets {
			require.NotContains(t, r.Text, s)
		}
	}
	// A decision names the redacted text by its hash: its own, or that of
	// the memory it names.
	for _, p := range f.decided(t) {
		if p.ContentHash == "" {
			m, err := f.store.Get(f.ctx, p.MemoryID)
			require.NoError(t, err)
			require.NotEmpty(t, m.ContentHash)
		}
	}

	// Every byte ducklm wrote: the database with its WAL, and the snapshot.
	require.NoError(t, f.store.Close())
	require.NoError(t, f.db.Close())
	files := 0
	require.NoError(t, filepath.WalkDir(f.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, s := range secrets {
			for _, line := range strings.Split(s, "\n") {
				if len(line) >= 8 {
					require.False(t, bytes.Contains(data, []byte(line)), "%s holds a secret", path)
				}
			}
		}
		return nil
	}))
	require.GreaterOrEqual(t, files, 2, "the database and the snapshot")
	_, err = os.Stat(filepath.Join(f.dir, "memory"))
	require.NoError(t, err, "a snapshot was written")
}

// Only redacted text is sent to an embedding model.
func TestSecretsNeverReachTheEmbedder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	srv := ollamatest.NewServerWith(t, ollamatest.Options{EmbedDims: 16})
	s := f.open(t, memory.OllamaEmbedder{Client: ollama.New(srv.URL(), nil), Model: "nomic-embed-text"})
	d, err := s.Consider(f.ctx, f.candidate("The release script pushes with "+githubToken+" to the origin remote."))
	require.NoError(t, err)
	require.Equal(t, mp.Store, d.Decision.Action)
	require.Equal(t, "nomic-embed-text:latest", d.Model)
	require.NotEmpty(t, srv.Requests())
	for _, r := range srv.Requests() {
		require.NotContains(t, string(r.Body), githubToken)
		require.Contains(t, string(r.Body), "[REDACTED:github_token]")
	}
}

// failing is a repository whose chosen operations fail.
type failing struct {
	memory.Repo
	insert, find error
}

func (r failing) Insert(ctx context.Context, m memory.Memory, stream string, events []backend.Event) error {
	if r.insert != nil {
		return r.insert
	}
	return r.Repo.Insert(ctx, m, stream, events)
}

func (r failing) FindByHash(ctx context.Context, hash string, typ mp.Type, reality backend.Reality) (string, bool, error) {
	if r.find != nil {
		return "", false, r.find
	}
	return r.Repo.FindByHash(ctx, hash, typ, reality)
}

// A store failure skips the write, records why, and returns the error for
// the run to log; the run goes on.
func TestStoreFailuresSkipTheWriteAndRecordWhy(t *testing.T) {
	t.Parallel()
	f := setup(t)
	skipped := func() memory.SkippedPayload {
		t.Helper()
		evs := f.events(t, memory.EvSkipped)
		require.NotEmpty(t, evs)
		var p memory.SkippedPayload
		require.NoError(t, decodeJSON(evs[len(evs)-1].Payload, &p))
		return p
	}

	// The embedder fails (Ollama's runner crashed).
	srv := ollamatest.NewServerWith(t, ollamatest.Options{EmbedDims: 16})
	srv.Fail("/api/embed", 500, "the runner crashed")
	s := f.open(t, memory.OllamaEmbedder{Client: ollama.New(srv.URL(), nil), Model: "nomic-embed-text"})
	d, err := s.Consider(f.ctx, f.candidate("The cache directory is /var/cache/app and holds 2 GB."))
	require.Equal(t, backend.EUNAVAILABLE, backend.ErrorCode(err))
	require.Contains(t, d.Skipped, "runner crashed")
	p := skipped()
	require.Equal(t, "embed", p.Stage)
	require.Contains(t, p.Reason, "runner crashed")
	require.Equal(t, backend.EUNAVAILABLE, p.Code)
	require.Equal(t, d.EventID, f.events(t, memory.EvSkipped)[0].ID)

	// The database refuses the write, but the ledger still works.
	broken := errors.New("disk I/O error")
	s2, err := memory.Open(f.ctx, memory.Options{Repo: failing{Repo: f.repo, insert: backend.Wrap(broken, backend.EINTERNAL, "cannot store memory")}})
	require.NoError(t, err)
	defer s2.Close()
	d, err = s2.Consider(f.ctx, f.candidate("The cache directory is /var/cache/app and holds 2 GB."))
	require.ErrorIs(t, err, broken)
	p = skipped()
	require.Equal(t, "write", p.Stage)
	require.Equal(t, mp.Store, p.Decision.Action, "the decision that could not be applied is kept")
	require.NotNil(t, p.Input)

	// The dedup lookup fails.
	s3, err := memory.Open(f.ctx, memory.Options{Repo: failing{Repo: f.repo, find: backend.Errorf(backend.EINTERNAL, "cannot look up")}})
	require.NoError(t, err)
	defer s3.Close()
	_, err = s3.Consider(f.ctx, f.candidate("The cache directory is /var/cache/app and holds 2 GB."))
	require.Error(t, err)
	require.Equal(t, "lookup", skipped().Stage)

	list, err := f.store.List(f.ctx, memory.ListQuery{})
	require.NoError(t, err)
	require.Empty(t, list, "nothing was written")

	// With the database gone, Consider still returns instead of failing the run.
	require.NoError(t, f.db.Close())
	_, err = f.store.Consider(f.ctx, f.candidate("The cache directory is /var/cache/app and holds 2 GB."))
	require.Error(t, err)
}
