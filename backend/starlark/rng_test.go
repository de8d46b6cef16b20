package starlark_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
)

// rngProgram returns, as its state, draws made in init.
func rngDraws(t *testing.T, body string, seed uint64) []any {
	t.Helper()
	src := "def draws(seed, rng):\n" + body + "\ndef init(seed, rng):\n    return {\"draws\": draws(seed, rng)}\ndef step(s, a, r):\n    return s\ndef observe(s, r):\n    return s\n"
	w := newWorld(t, src, seed)
	var out struct{ Draws []any }
	require.NoError(t, json.Unmarshal(w.State(), &out))
	return out.Draws
}

// TestRNGStreamIsPinned guards the seed derivation and every method's
// algorithm: changing either would silently change every recorded run.
func TestRNGStreamIsPinned(t *testing.T) {
	t.Parallel()
	p := starlark.SeedPCG(0)
	require.Equal(t, uint64(0xb18c97843f57bb91), p.Uint64())

	w := newWorld(t, `
def init(seed, rng):
    return {"d": [rng.random(), rng.randint(1, 6), rng.choice("abc"), rng.shuffle([1, 2, 3, 4, 5, 6]), rng.normal(10, 2)]}
def step(s, a, r):
    return s
def observe(s, r):
    return s
`, 0)
	require.Equal(t, `{"d":[0.6935515115613659,6,"a",[4,1,2,3,5,6],9.557682889502907]}`, string(w.State()))
}

func TestRNGMethods(t *testing.T) {
	t.Parallel()
	draws := rngDraws(t, `
    out = []
    for i in range(2000):
        out.append([rng.random(), rng.randint(-2, 2), rng.choice([10, 20, 30]), rng.normal(5, 0.5)])
    return out
`, 11)
	var sum, sumSq float64
	seen := map[float64]int{}
	choices := map[float64]int{}
	for _, d := range draws {
		row := d.([]any)
		u := row[0].(float64)
		require.True(t, u >= 0 && u < 1)
		seen[row[1].(float64)]++
		choices[row[2].(float64)]++
		sum += row[3].(float64)
		sumSq += row[3].(float64) * row[3].(float64)
	}
	require.Len(t, seen, 5, "randint is inclusive at both ends: %v", seen)
	require.Len(t, choices, 3)
	n := float64(len(draws))
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	require.InDelta(t, 5, mean, 0.05)
	require.InDelta(t, 0.5, sd, 0.05)

	extreme := rngDraws(t, `
    lo, hi = -9223372036854775808, 9223372036854775807
    return [rng.randint(lo, hi), rng.randint(hi, hi), rng.randint(lo, lo), rng.normal(3, 0)]
`, 1)
	require.Equal(t, 9223372036854775807.0, extreme[1])
	require.Equal(t, -9223372036854775808.0, extreme[2])
	require.Equal(t, 3.0, extreme[3])

	shuffled := rngDraws(t, `
    xs = [1, 2, 3, 4, 5, 6, 7, 8]
    ys = rng.shuffle(xs)
    return [xs, sorted(ys), ys != xs, rng.shuffle(()), rng.shuffle((1,))]
`, 5)
	require.Equal(t, []any{
		[]any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0},
		[]any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0},
		true, []any{}, []any{1.0},
	}, shuffled, "shuffle returns a new permutation and leaves its argument alone")
}

func TestPortableLogMatchesMathLog(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		x := r.Float64()
		if x == 0 {
			continue
		}
		got, want := starlark.PortableLog(x), math.Log(x)
		require.LessOrEqual(t, math.Abs(got-want), 2*math.Abs(math.Nextafter(want, 0)-want), "log(%v)", x)
	}
	require.True(t, math.IsInf(starlark.PortableLog(0), -1))
	require.True(t, math.IsNaN(starlark.PortableLog(-1)))
	require.Equal(t, 0.0, starlark.PortableLog(1))
}
