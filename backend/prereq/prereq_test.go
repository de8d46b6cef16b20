package prereq_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend/prereq"
)

// recorder catches what Missing does to a test instead of doing it.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recorder) Skip(args ...any)                  { r.skip = fmt.Sprint(args...) }

func TestMissingFailsInCIAndSkipsElsewhere(t *testing.T) {
	t.Setenv("CI", "true")
	r := &recorder{TB: t}
	prereq.Missing(r, "bubblewrap is %s", "not installed")
	require.Equal(t, "a test prerequisite is missing in CI, where every test must run: bubblewrap is not installed", r.fatal)
	require.Empty(t, r.skip)

	t.Setenv("CI", "")
	r = &recorder{TB: t}
	prereq.Missing(r, "no cgroup here")
	require.Equal(t, "no cgroup here", r.skip)
	require.Empty(t, r.fatal)
}
