package starlark_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"ducklm/backend"
	"ducklm/backend/starlark"

	"github.com/stretchr/testify/require"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// eval evaluates a Starlark expression (sets allowed) for conversion tests.
func eval(t testing.TB, expr string) sl.Value {
	t.Helper()
	th := &sl.Thread{}
	v, err := sl.EvalOptions(&syntax.FileOptions{Set: true, While: true}, th, "expr", expr, nil)
	require.NoError(t, err)
	return v
}

func TestToJSONCanonical(t *testing.T) {
	t.Parallel()
	cases := []struct{ expr, want string }{
		{`None`, `null`},
		{`True`, `true`},
		{`{"b": 1, "a": [1, 2.5, "x"], "c": {"z": None, "y": False}}`, `{"a":[1,2.5,"x"],"b":1,"c":{"y":false,"z":null}}`},
		{`(1, (2,), [])`, `[1,[2],[]]`},
		{`{}`, `{}`},
		{`1.0`, `1.0`},
		{`-0.0`, `-0.0`},
		{`0.1`, `0.1`},
		{`1e21`, `1e+21`},
		{`1e-7`, `1e-07`},
		{`123456.0`, `123456.0`},
		{`1234567.0`, `1.234567e+06`},
		{`9223372036854775807`, `9223372036854775807`},
		{`-9223372036854775808`, `-9223372036854775808`},
		{`"a\"b\\c\n\r\t\b\f\x01\x7f é \u2028 <&>"`, `"a\"b\\c\n\r\t\b\f\u0001` + "\x7f é \u2028 <&>" + `"`},
		{`{"é": 1, "e": 2, "z": 3, "Z": 4}`, `{"Z":4,"e":2,"z":3,"é":1}`},
	}
	for _, c := range cases {
		got, err := starlark.ToJSON(eval(t, c.expr), 0)
		require.NoError(t, err, c.expr)
		require.Equal(t, c.want, string(got), c.expr)
		require.True(t, json.Valid(got), c.expr)
	}
}

func TestToJSONRejectsNonJSON(t *testing.T) {
	t.Parallel()
	cases := []struct{ expr, what string }{
		{`set([1])`, "not JSON: set"},
		{`{"a": [1, set()]}`, `set (at ["a"][1])`},
		{`{1: 2}`, "dict with a key of type int"},
		{`len`, "builtin_function_or_method"},
		{`b"x"`, "bytes"},
		{`float("nan")`, "float nan"},
		{`float("inf")`, "float +inf"},
		{`-float("inf")`, "float -inf"},
		{`1 << 63`, "int 9223372036854775808 that does not fit in 64 bits"},
		{`-(1 << 63) - 1`, "does not fit in 64 bits"},
		{`1 << 300`, "does not fit"},
		{`"é"[:1]`, "not valid UTF-8"},
		{`{"é"[:1]: 1}`, "not valid UTF-8"},
		{`range(3)`, "range"},
	}
	for _, c := range cases {
		_, err := starlark.ToJSON(eval(t, c.expr), 0)
		requireCode(t, err, backend.EINVALID, c.what)
	}
}

func TestToJSONCycleAndDepth(t *testing.T) {
	t.Parallel()
	th := &sl.Thread{}
	g, err := sl.ExecFileOptions(&syntax.FileOptions{While: true, TopLevelControl: true, GlobalReassign: true}, th, "x.star", `
cyc = []
cyc.append(cyc)
deep = []
for i in range(1100):
    deep = [deep]
ok = []
for i in range(999):
    ok = [ok]
`, nil)
	require.NoError(t, err)
	_, err = starlark.ToJSON(g["cyc"], 0)
	requireCode(t, err, backend.EINVALID, "nested more than 1000 levels")
	_, err = starlark.ToJSON(g["deep"], 0)
	requireCode(t, err, backend.EINVALID, "nested more than 1000 levels")
	b, err := starlark.ToJSON(g["ok"], 0)
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("[", 1000)+strings.Repeat("]", 1000), string(b))
}

func TestToJSONSizeLimit(t *testing.T) {
	t.Parallel()
	// An aliased list makes a value whose JSON is exponentially larger than
	// its memory; the limit must stop the encoder early.
	th := &sl.Thread{}
	g, err := sl.ExecFileOptions(&syntax.FileOptions{While: true, TopLevelControl: true, GlobalReassign: true}, th, "x.star", `
big = ["xxxxxxxxxx"]
for i in range(60):
    big = [big, big]
`, nil)
	require.NoError(t, err)
	_, err = starlark.ToJSON(g["big"], 1<<20)
	requireCode(t, err, backend.ELIMIT, "larger than 1048576 bytes")

	b, err := starlark.ToJSON(sl.String("abc"), 5)
	require.NoError(t, err)
	require.Equal(t, `"abc"`, string(b))
	_, err = starlark.ToJSON(sl.String("abcd"), 5)
	requireCode(t, err, backend.ELIMIT)
}

func TestFromJSON(t *testing.T) {
	t.Parallel()
	v, err := starlark.FromJSON([]byte(` {"b": [1, 1.5, 2e3, -0, "s", true, null], "a": {}} `))
	require.NoError(t, err)
	d := v.(*sl.Dict)
	require.Equal(t, `{"a": {}, "b": [1, 1.5, 2000.0, 0, "s", True, None]}`, d.String(), "keys are inserted sorted")
	b := must(d.Get(sl.String("b")))
	list := b.(*sl.List)
	require.IsType(t, sl.Int{}, list.Index(0))
	require.IsType(t, sl.Float(0), list.Index(1))
	require.IsType(t, sl.Float(0), list.Index(2))
	require.IsType(t, sl.Int{}, list.Index(3))
	require.NoError(t, d.SetKey(sl.String("c"), sl.None), "a program may mutate what it is given")

	bad := map[string]string{
		``:                        "unexpected end",
		`{"a":1,"a":2}`:           "duplicate object key",
		`[1] [2]`:                 "unexpected data after",
		`9223372036854775808`:     "does not fit in 64 bits",
		`1e400`:                   "out of the float64 range",
		`{"a":}`:                  "invalid",
		`[1,]`:                    "invalid",
		`NaN`:                     "invalid",
		strings.Repeat("[", 1002): "nested more than 1000 levels",
	}
	for in, frag := range bad {
		_, err := starlark.FromJSON([]byte(in))
		requireCode(t, err, backend.EINVALID)
		require.Contains(t, err.Error(), frag, "input %q", in)
	}
}

func must(v sl.Value, found bool, err error) sl.Value {
	if err != nil || !found {
		panic("missing")
	}
	return v
}

func TestCanonicalJSONRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		v := randomJSON(r, 4)
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		canon, err := starlark.CanonicalJSON(raw, 0)
		require.NoError(t, err, "input %s", raw)
		again, err := starlark.CanonicalJSON(canon, 0)
		require.NoError(t, err)
		require.Equal(t, string(canon), string(again), "canonical form is a fixed point (case %d)", i)

		// Same meaning as the input, per encoding/json.
		var a, b any
		require.NoError(t, json.Unmarshal(raw, &a))
		require.NoError(t, json.Unmarshal(canon, &b))
		require.Equal(t, a, b)
	}
}

// randomJSON builds a JSON-able Go value with awkward floats and strings.
func randomJSON(r *rand.Rand, depth int) any {
	k := r.IntN(8)
	if depth == 0 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return r.Int64() >> r.IntN(64)
	case 3:
		fs := []float64{0.1, 1, -0.5, 1e21, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, r.NormFloat64() * 1e6}
		return fs[r.IntN(len(fs))]
	case 4:
		return randomString(r)
	case 5, 6:
		n := r.IntN(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randomJSON(r, depth-1)
		}
		return a
	default:
		m := map[string]any{}
		for range r.IntN(4) {
			m[randomString(r)] = randomJSON(r, depth-1)
		}
		return m
	}
}

func randomString(r *rand.Rand) string {
	ss := []string{"", "a", "é\u2028", "\x00\x1f\"\\", "<&>", "🦆", "z"}
	return ss[r.IntN(len(ss))] + ss[r.IntN(len(ss))]
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5,null]}`, `1e21`, `"\u00e9\ud83e\udd86"`, `[[[]]]`, `-0.0`, `"\ud800\u0041 \xff"`, ` {"a" : [ 1e-3 , true ] } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		canon, err := starlark.CanonicalJSON(data, 1<<20)
		if err != nil {
			// Only our deliberate restrictions may refuse what encoding/json accepts.
			if json.Valid(data) {
				require.Regexp(t, `duplicate object key|does not fit in 64 bits|out of the float64 range|nested more than|larger than`, err.Error())
			}
			return
		}
		require.True(t, json.Valid(data), "accepted invalid JSON %q", data)
		require.True(t, json.Valid(canon), "%q", canon)
		again, err := starlark.CanonicalJSON(canon, 1<<20)
		require.NoError(t, err)
		require.Equal(t, canon, again)

		var a, b any
		require.NoError(t, json.Unmarshal(data, &a))
		require.NoError(t, json.Unmarshal(canon, &b))
		require.Equal(t, a, b, "canonical form changed the meaning of %q", data)
	})
}
