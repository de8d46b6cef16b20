package boot_test

import (
	"os"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/boot"
)

// The collector is off from the package's init until Done, then runs as
// GOGC says (100 unset, off for "off"); a second Done changes nothing.
func TestTheCollectorIsHeldOffUntilDone(t *testing.T) {
	want := 100
	switch v := os.Getenv("GOGC"); v {
	case "":
	case "off":
		want = -1
	default:
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		want = n
	}
	require.Equal(t, -1, debug.SetGCPercent(-1), "init did not hold the collector off")
	boot.Done()
	require.Equal(t, want, debug.SetGCPercent(want), "Done did not give the collector its setting back")
	boot.Done()
	require.Equal(t, want, debug.SetGCPercent(want), "a second Done changed the setting")
}
