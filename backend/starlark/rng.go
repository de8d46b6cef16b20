package starlark

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	sl "go.starlark.net/starlark"
)

// SeedPCG returns the world RNG for seed. The derivation is fixed forever,
// because changing it would change every recorded run: the PCG's two state
// words are the first two outputs of a SplitMix64 generator started at seed,
// that is rand.NewPCG(mix(seed+γ), mix(seed+2γ)) with γ = 0x9e3779b97f4a7c15,
// sums wrapping modulo 2^64, and mix the SplitMix64 finaliser. SplitMix
// spreads nearby seeds (0, 1, 2, ...) into unrelated streams.
func SeedPCG(seed uint64) *rand.PCG {
	const gamma uint64 = 0x9e3779b97f4a7c15
	return rand.NewPCG(splitmix64(seed+gamma), splitmix64(seed+gamma+gamma))
}

func splitmix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// rngValue is the Starlark face of a world's PCG. Every method is defined here
// on top of PCG.Uint64 rather than borrowed from math/rand, so the numbers a
// program sees depend only on this file and the PCG stream, not on how a Go
// release implements Rand.Float64 or Rand.NormFloat64.
//
// A value is handed to exactly one call and closed when the call returns; a
// program cannot keep it (globals are frozen and state must be JSON), but the
// check makes that a clear error rather than a silent draw from a stale copy.
type rngValue struct {
	pcg    *rand.PCG
	closed bool
}

var _ sl.HasAttrs = (*rngValue)(nil)

var rngMethods = map[string]*sl.Builtin{
	"random":  sl.NewBuiltin("random", rngRandom),
	"randint": sl.NewBuiltin("randint", rngRandint),
	"choice":  sl.NewBuiltin("choice", rngChoice),
	"shuffle": sl.NewBuiltin("shuffle", rngShuffle),
	"normal":  sl.NewBuiltin("normal", rngNormal),
}

var rngMethodNames = []string{"choice", "normal", "randint", "random", "shuffle"}

func (r *rngValue) String() string        { return "<rng>" }
func (r *rngValue) Type() string          { return "rng" }
func (r *rngValue) Freeze()               {}
func (r *rngValue) Truth() sl.Bool        { return sl.True }
func (r *rngValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: rng") }
func (r *rngValue) AttrNames() []string   { return slices.Clone(rngMethodNames) } // dir() sorts it in place

func (r *rngValue) Attr(name string) (sl.Value, error) {
	if m, ok := rngMethods[name]; ok {
		return m.BindReceiver(r), nil
	}
	return nil, nil
}

func receiver(b *sl.Builtin) (*rand.PCG, error) {
	r := b.Receiver().(*rngValue)
	if r.closed {
		return nil, fmt.Errorf("%s: the rng can only be used during the call it was passed to", b.Name())
	}
	return r.pcg, nil
}

// unit returns a float in [0, 1) from the top 53 bits of one draw.
func unit(p *rand.PCG) float64 {
	return float64(p.Uint64()>>11) * 0x1p-53
}

// bounded returns a uniform draw from [0, n) for n > 0 by Lemire's
// multiply-and-reject method, which needs one draw almost always.
func bounded(p *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(p.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(p.Uint64(), n)
		}
	}
	return hi
}

func rngRandom(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	p, err := receiver(b)
	if err != nil {
		return nil, err
	}
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return sl.Float(unit(p)), nil
}

func rngRandint(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	p, err := receiver(b)
	if err != nil {
		return nil, err
	}
	var a, z int64
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &a, &z); err != nil {
		return nil, err
	}
	if a > z {
		return nil, fmt.Errorf("randint: empty range, %d > %d", a, z)
	}
	span := uint64(z) - uint64(a) + 1
	var off uint64
	if span == 0 { // the whole int64 range
		off = p.Uint64()
	} else {
		off = bounded(p, span)
	}
	return sl.MakeInt64(int64(uint64(a) + off)), nil
}

func rngChoice(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	p, err := receiver(b)
	if err != nil {
		return nil, err
	}
	var seq sl.Indexable
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &seq); err != nil {
		return nil, err
	}
	n := seq.Len()
	if n == 0 {
		return nil, fmt.Errorf("choice: empty sequence")
	}
	return seq.Index(int(bounded(p, uint64(n)))), nil
}

// rngShuffle returns a new list so the argument (often part of the state) is
// never changed behind the program's back.
func rngShuffle(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	p, err := receiver(b)
	if err != nil {
		return nil, err
	}
	var seq sl.Iterable
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &seq); err != nil {
		return nil, err
	}
	var elems []sl.Value
	it := seq.Iterate()
	defer it.Done()
	var x sl.Value
	for it.Next(&x) {
		elems = append(elems, x)
	}
	// Fisher–Yates from the end.
	for i := len(elems) - 1; i > 0; i-- {
		j := int(bounded(p, uint64(i+1)))
		elems[i], elems[j] = elems[j], elems[i]
	}
	return sl.NewList(elems), nil
}

func rngNormal(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	p, err := receiver(b)
	if err != nil {
		return nil, err
	}
	var mu, sigma sl.Value = sl.Float(0), sl.Float(1)
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 0, &mu, &sigma); err != nil {
		return nil, err
	}
	m, ok1 := sl.AsFloat(mu)
	s, ok2 := sl.AsFloat(sigma)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("normal: mu and sigma must be numbers, got %s and %s", mu.Type(), sigma.Type())
	}
	if !(s >= 0) || math.IsInf(s, 0) || math.IsNaN(m) || math.IsInf(m, 0) {
		return nil, fmt.Errorf("normal: need a finite mu and a finite sigma >= 0")
	}
	return sl.Float(float64(s*normal(p)) + m), nil
}

// normal draws a standard normal by Marsaglia's polar method, discarding the
// second variate so no hidden cache sits outside the checkpointed PCG state.
// The explicit float64 conversions forbid fused multiply-add, which some
// architectures would otherwise use and so round differently.
func normal(p *rand.PCG) float64 {
	for {
		u := 2*unit(p) - 1
		v := 2*unit(p) - 1
		s := float64(u*u) + float64(v*v)
		if s > 0 && s < 1 {
			return u * math.Sqrt(-2*portableLog(s)/s)
		}
	}
}

// portableLog is Go's pure-Go math.log (from FreeBSD's e_log.c) with every
// product rounded explicitly. math.Log uses assembly on amd64 and s390x, which
// need not agree with other architectures to the last bit; a world's floats
// must.
func portableLog(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
		l1    = 6.666666666666735130e-01   /* 3FE55555 55555593 */
		l2    = 3.999999999940941908e-01   /* 3FD99999 9997FA04 */
		l3    = 2.857142874366239149e-01   /* 3FD24924 94229359 */
		l4    = 2.222219843214978396e-01   /* 3FCC71C5 1D8E78AF */
		l5    = 1.818357216161805012e-01   /* 3FC74664 96CB03DE */
		l6    = 1.531383769920937332e-01   /* 3FC39A09 D078C69F */
		l7    = 1.479819860511658591e-01   /* 3FC2F112 DF3E5244 */
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)

	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	r := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f)
}
