package backend_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

// The CLI's step line says where a portable step's work ran in the step
// panel's words.
func TestPlacementSaysWhereAStepRan(t *testing.T) {
	require.Equal(t, "on the team's workers: 120 branches on 2 workers", backend.Placement{Workers: 2, Branches: 120}.String())
	require.Equal(t, "on the team's workers: 1 branch on 1 worker", backend.Placement{Workers: 1, Branches: 1}.String())
	require.Equal(t, "here, in this process. No worker of the team was alive, so its branches ran here.",
		backend.Placement{Here: "No worker of the team was alive, so its branches ran here."}.String())
}
