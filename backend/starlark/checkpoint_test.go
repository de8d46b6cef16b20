package starlark_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"ducklm/backend"
	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

// TestCheckpointRestoreIsExact is a property test: for random seeds, action
// sequences and checkpoint positions k, restoring the checkpoint taken at k
// into a fresh world and replaying the same actions reproduces the original
// tail byte for byte: states, emitted payloads, done flags and checkpoints.
func TestCheckpointRestoreIsExact(t *testing.T) {
	t.Parallel()
	programs := map[string]string{"grid": string(starlark.BranchingGrid), "counter": counterProgram}
	actions := []string{`null`, `"N"`, `"S"`, `"E"`, `"W"`, `{"move":"E"}`, `{"move":"S"}`}
	for name, src := range programs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := compile(t, src, starlark.Limits{})
			r := rand.New(rand.NewPCG(uint64(len(name)), 99))
			for trial := range 25 {
				seed := r.Uint64()
				n := 5 + r.IntN(40)
				acts := make([]string, n)
				for i := range acts {
					acts[i] = actions[r.IntN(len(actions))]
				}

				type tick struct {
					res  backend.StepResult
					ckpt []byte
				}
				w := p.New()
				_, err := w.Initialize(context.Background(), seed)
				require.NoError(t, err)
				ticks := []tick{{ckpt: checkpoint(t, w)}}
				for _, a := range acts {
					if w.Done() {
						break
					}
					ticks = append(ticks, tick{res: step(t, w, a), ckpt: checkpoint(t, w)})
				}

				k := r.IntN(len(ticks))
				fork := p.New()
				require.NoError(t, fork.RestoreBytes(ticks[k].ckpt))
				require.EqualValues(t, k, fork.Time())
				require.Equal(t, ticks[k].ckpt, checkpoint(t, fork), "restore then checkpoint is the identity")
				for i := k + 1; i < len(ticks); i++ {
					got := step(t, fork, acts[i-1])
					require.Equal(t, ticks[i].res, got, "trial %d seed %d k %d step %d", trial, seed, k, i)
					require.Equal(t, ticks[i].ckpt, checkpoint(t, fork))
				}
				if w.Done() {
					_, err := fork.Step(context.Background(), nil)
					requireCode(t, err, backend.EINVALID, "terminal")
				}
			}
		})
	}
}

func TestCheckpointFormat(t *testing.T) {
	t.Parallel()
	src := "def init(seed):\n    return {'low': seed % 1000}\ndef step(s, a, r):\n    return s\ndef observe(s, r):\n    return s\n"
	w := newWorld(t, src, 18446744073709551615)
	step(t, w, `null`)
	got := string(checkpoint(t, w))
	require.Regexp(t, `^\{"done":false,"format":1,"rng":"[A-Za-z0-9+/]+=*","seed":18446744073709551615,"state":\{"low":615\},"time":1\}$`, got)
	w2 := compile(t, src, starlark.Limits{}).New()
	require.NoError(t, w2.RestoreBytes([]byte(got)))
	require.EqualValues(t, uint64(18446744073709551615), w2.Seed())
	// The state is canonical and the whole thing is valid JSON.
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(got), &m))
	require.Len(t, m, 6)
}

func TestRestoreRejectsBadBytes(t *testing.T) {
	t.Parallel()
	src := string(starlark.BranchingGrid)
	good := checkpoint(t, func() *starlark.World { w := newWorld(t, src, 3); step(t, w, `null`); return w }())
	mutate := func(from, to string) []byte {
		require.Contains(t, string(good), from)
		return []byte(strings.Replace(string(good), from, to, 1))
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(good, &m))
	rngField := `"rng":"` + m["rng"].(string) + `"`

	cases := []struct {
		name string
		data []byte
		code string
		want string
	}{
		{"empty", nil, backend.ECORRUPT, "not a readable world checkpoint"},
		{"garbage", []byte("\x00\x01garbage"), backend.ECORRUPT, "not a readable"},
		{"not an object", []byte(`[1,2]`), backend.ECORRUPT, "not a readable"},
		{"unknown field", mutate(`{"done"`, `{"extra":1,"done"`), backend.ECORRUPT, `unknown field "extra"`},
		{"duplicate field", mutate(`{"done":false`, `{"done":false,"done":false`), backend.ECORRUPT, `duplicate field "done"`},
		{"wrong type", mutate(`"done":false`, `"done":0`), backend.ECORRUPT, `field "done" is a int`},
		{"seed not a uint", mutate(`"seed":3`, `"seed":-3`), backend.ECORRUPT, `seed is not an unsigned integer`},
		{"seed too big", mutate(`"seed":3`, `"seed":18446744073709551616`), backend.ECORRUPT, `not an unsigned 64-bit integer`},
		{"future format", mutate(`"format":1`, `"format":2`), backend.EINVALID, "format 2 is not supported"},
		{"no format", mutate(`"format":1,`, ``), backend.ECORRUPT, `no "format" field`},
		{"no rng", mutate(rngField+`,`, ``), backend.ECORRUPT, `no "rng" field`},
		{"bad base64", mutate(rngField, `"rng":"!!!"`), backend.ECORRUPT, "not valid base64"},
		{"bad pcg", mutate(rngField, `"rng":"AAAA"`), backend.ECORRUPT, "not a PCG state"},
		{"renamed state", mutate(`"state":`, `"xstate":`), backend.ECORRUPT, `unknown field "xstate"`},
		{"negative time", mutate(`"time":1`, `"time":-1`), backend.ECORRUPT, "negative"},
		{"whitespace", mutate(`"done":false,`, `"done": false,`), backend.ECORRUPT, "not in canonical form"},
		{"state not canonical", mutate(`"noise":0.2`, `"noise":2e-1`), backend.ECORRUPT, "not in canonical form"},
		{"trailing data", append(append([]byte{}, good...), " {}"...), backend.ECORRUPT, "unexpected data after the checkpoint"},
		{"state not a world state", mutate(`"steps":1`, `"steps":99999999999999999999`), backend.ECORRUPT, "integer 99999999999999999999 does not fit in 64 bits"},
		{"future format with new fields", []byte(`{"format":2,"new":true}`), backend.EINVALID, "format 2 is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, src, 8)
			step(t, w, `"E"`)
			before := checkpoint(t, w)
			requireCode(t, w.RestoreBytes(c.data), c.code, c.want)
			require.Equal(t, before, checkpoint(t, w), "a failed restore changes nothing")

			fresh := compile(t, src, starlark.Limits{}).New()
			requireCode(t, fresh.RestoreBytes(c.data), c.code)
			_, err := fresh.Step(context.Background(), nil)
			requireCode(t, err, backend.EINVALID, "not initialized")
		})
	}

	small := compile(t, src, starlark.Limits{MaxStateBytes: 100}).New()
	requireCode(t, small.RestoreBytes(good), backend.ELIMIT, "more than this program's limit of 100")
}

func TestRestoreNullState(t *testing.T) {
	t.Parallel()
	// Worlds whose state was not an object were accepted before states had
	// to be objects: their checkpoints still restore, and the next step
	// must return an object.
	src := "def init(seed):\n    return {}\ndef step(s, a, r):\n    return a\ndef observe(s, r):\n    return s\n"
	w := newWorld(t, src, 1)
	ck := []byte(strings.Replace(string(checkpoint(t, w)), `"state":{}`, `"state":null`, 1))
	require.Contains(t, string(ck), `"state":null`)
	w2 := compile(t, src, starlark.Limits{}).New()
	require.NoError(t, w2.RestoreBytes(ck))
	require.Equal(t, ck, checkpoint(t, w2))
	_, err := w2.Step(context.Background(), json.RawMessage(`[1, {"a": 2.0}]`))
	requireCode(t, err, backend.EINVALID, "step returned a list as the state; a state is a dict")
	require.Equal(t, `{"a":2.0}`, string(step(t, w2, `{"a": 2.0}`).State))
}

func TestReseedForksADifferentReproducibleStream(t *testing.T) {
	t.Parallel()
	p := compile(t, counterProgram, starlark.Limits{})
	base := p.New()
	_, err := base.Initialize(context.Background(), 1)
	require.NoError(t, err)
	step(t, base, `null`)
	ck := checkpoint(t, base)

	child := func(seed uint64) (state string, ckpt []byte) {
		w := p.New()
		require.NoError(t, w.RestoreBytes(ck))
		require.NoError(t, w.Reseed(seed))
		require.EqualValues(t, 1, w.Time())
		require.Equal(t, base.State(), w.State())
		return string(step(t, w, `null`).State), checkpoint(t, w)
	}
	stateA, ckA := child(77)
	stateB, ckB := child(77)
	require.Equal(t, ckA, ckB, "a reseeded child is still reproducible")
	require.Equal(t, stateA, stateB)
	require.Contains(t, string(ckA), `"seed":77`)
	require.NotEqual(t, string(step(t, base, `null`).State), stateA, "and it draws differently from its parent")

	requireCode(t, p.New().Reseed(1), backend.EINVALID, "not initialized")
}
