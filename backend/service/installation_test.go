package service_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
)

// A data directory's installation id is made once and kept: every open,
// and processes opening a new directory at once, get the same one.
func TestAnInstallationIDIsMadeOnceAndKept(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new")
	ids := make([]runtime.Installation, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst, err := service.Installation(dir)
			require.NoError(t, err)
			ids[i] = inst
		}()
	}
	wg.Wait()
	for _, inst := range ids {
		require.Equal(t, ids[0].ID, inst.ID)
	}
	require.Regexp(t, `^inst_[0-9a-f]{26}$`, ids[0].ID)
	host, _ := os.Hostname()
	require.Equal(t, host, ids[0].Host)
	again, err := service.Installation(dir)
	require.NoError(t, err)
	require.Equal(t, ids[0].ID, again.ID)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "installation"), []byte("{not json"), 0o600))
	_, err = service.Installation(dir)
	require.Equal(t, backend.ECORRUPT, backend.ErrorCode(err))
	require.Contains(t, backend.ErrorMessage(err), "move it away")
}
