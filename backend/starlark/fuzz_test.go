package starlark_test

import (
	"context"
	"encoding/json"
	"testing"

	"ducklm/backend"
	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

// requireNotInternal fails on an EINTERNAL error (a recovered panic or a
// broken invariant) and on any error that is not a *backend.Error.
func requireNotInternal(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var be *backend.Error
	require.ErrorAs(t, err, &be, "error %v is not a *backend.Error", err)
	require.NotEqual(t, backend.EINTERNAL, be.Code, "internal error: %v", err)
}

// FuzzProgram compiles arbitrary program text and drives it: whatever the
// program does, the host must not panic, hang past the limits, or lose
// determinism, and every failed step must leave the world as it was.
func FuzzProgram(f *testing.F) {
	for _, src := range []string{
		minimalProgram,
		counterProgram,
		trapProgram,
		string(starlark.BranchingGrid),
		"def init(seed):\n    return [seed % 7]\ndef step(s, a, r):\n    return s + [a], [len(s)], len(s) > 2\ndef observe(s, r):\n    return {r: s}\n",
		"def init(seed, rng):\n    return {'v': rng.shuffle(range(5))}\ndef step(s, a, r):\n    s['v'] = r.shuffle(s['v'])\n    return s\ndef observe(s, r):\n    return s['v'][0]\n",
		"x = [1]\nx.append(x)\ndef init(seed):\n    return x\ndef step(s, a, r):\n    return s\ndef observe(s, r):\n    return s\n",
		"def f(n):\n    return f(n + 1)\ndef init(seed):\n    return f(0)\ndef step(s, a, r):\n    return s\ndef observe(s, r):\n    return s\n",
	} {
		for _, action := range []string{`null`, `"N"`, `{"move":"E"}`, `[1,2.5,"x"]`, `"loop"`} {
			f.Add(src, action, uint64(len(action)))
		}
	}
	limits := starlark.Limits{MaxSteps: 100_000, MaxStateBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, src, action string, seed uint64) {
		ctx := context.Background()
		p, err := starlark.Compile("fuzz.star", []byte(src), limits)
		if err != nil {
			requireNotInternal(t, err)
			return
		}
		w := p.New()
		if _, err := w.Initialize(ctx, seed); err != nil {
			requireNotInternal(t, err)
			return
		}
		for range 3 {
			if w.Done() {
				break
			}
			before, err := w.CheckpointBytes()
			require.NoError(t, err)
			res, err := w.Step(ctx, json.RawMessage(action))
			if err != nil {
				requireNotInternal(t, err)
				after, cerr := w.CheckpointBytes()
				require.NoError(t, cerr)
				require.Equal(t, before, after, "a failed step changed the world")
				break
			}
			replay := p.New()
			require.NoError(t, replay.RestoreBytes(before))
			res2, err := replay.Step(ctx, json.RawMessage(action))
			require.NoError(t, err, "replaying from a checkpoint failed where the original succeeded")
			require.Equal(t, res, res2)
			a, err := w.CheckpointBytes()
			require.NoError(t, err)
			b, err := replay.CheckpointBytes()
			require.NoError(t, err)
			require.Equal(t, a, b)
		}
		if _, err := w.Observe(ctx, "agent"); err != nil {
			requireNotInternal(t, err)
		}
	})
}
