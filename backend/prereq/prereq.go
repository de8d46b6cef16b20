// Package prereq lets a test say that the machine lacks something it needs
// (bubblewrap, cgroups, a command). Outside CI a missing prerequisite skips
// the test: a developer's machine may lack bubblewrap. In CI (CI=true) it
// fails the test, so a suite can never pass by silently skipping its
// sandbox tests. Only tests import it.
package prereq

import (
	"fmt"
	"os"
	"testing"
)

// Missing skips t, or fails it when CI is "true", saying what is missing.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("a test prerequisite is missing in CI, where every test must run: %s", msg)
		return
	}
	t.Skip(msg)
}
