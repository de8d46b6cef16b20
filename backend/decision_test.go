package backend_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

func TestDecisionValidateKeepsTheContract(t *testing.T) {
	t.Parallel()
	ok := []backend.Decision{
		backend.NewDecision(backend.DecisionNoop, nil, 0, "nothing to do"),
		backend.NewDecision(backend.DecisionPlan, map[string]any{"graph": map[string]any{}}, 1, "a plan"),
		{Type: backend.DecisionComplete, Confidence: 0.5},
	}
	for _, d := range ok {
		require.NoError(t, d.Validate(), "%+v", d)
	}
	for _, c := range []struct {
		d    backend.Decision
		want string
	}{
		{backend.Decision{Type: "launch_missiles"}, `decision type "launch_missiles" is not one of`},
		{backend.Decision{}, `decision type "" is not one of`},
		{backend.Decision{Type: backend.DecisionTool, Confidence: 1.5}, "confidence must be between 0 and 1, not 1.5"},
		{backend.Decision{Type: backend.DecisionTool, Confidence: -0.1}, "between 0 and 1"},
		{backend.Decision{Type: backend.DecisionTool, Confidence: math.NaN()}, "between 0 and 1"},
		{backend.Decision{Type: backend.DecisionTool, Payload: json.RawMessage(`[1,2]`)}, "a tool decision's payload must be a JSON object"},
		{backend.Decision{Type: backend.DecisionFail, Payload: json.RawMessage(`null`)}, "payload must be a JSON object"},
		{backend.Decision{Type: backend.DecisionFail, Payload: json.RawMessage(`7`)}, "payload must be a JSON object"},
		{backend.Decision{Type: backend.DecisionFail, Payload: json.RawMessage(`{broken`)}, "payload must be a JSON object"},
	} {
		err := c.d.Validate()
		require.Error(t, err, "%+v", c.d)
		require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
		require.Contains(t, err.Error(), c.want)
	}
}
