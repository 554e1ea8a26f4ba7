package sampler

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestNormalSource checks the kernels' Gaussian generator: moments, the
// Kolmogorov-Smirnov distance to N(0,1) on a million draws, and the tail mass
// beyond 3.5 (which the ziggurat's tail algorithm produces).
func TestNormalSource(t *testing.T) {
	ns := newNormalSource(rand.New(rand.NewPCG(1, 2)))
	const n = 1000000
	xs := make([]float64, n)
	var m1, m2, m4 float64
	tail := 0
	for i := range xs {
		x := ns.norm()
		xs[i] = x
		m1 += x / n
		m2 += x * x / n
		m4 += x * x * x * x / n
		if math.Abs(x) > 3.5 {
			tail++
		}
	}
	if math.Abs(m1) > 0.005 || math.Abs(m2-1) > 0.005 || math.Abs(m4-3) > 0.05 {
		t.Errorf("moments: mean %.4f, E x^2 %.4f, E x^4 %.4f", m1, m2, m4)
	}
	wantTail := math.Erfc(3.5/math.Sqrt2) * n // about 465
	if math.Abs(float64(tail)-wantTail) > 5*math.Sqrt(wantTail) {
		t.Errorf("%d draws beyond 3.5, want about %.0f", tail, wantTail)
	}
	sort.Float64s(xs)
	ks := 0.0
	for i, x := range xs {
		f := 0.5 * math.Erfc(-x/math.Sqrt2)
		ks = math.Max(ks, math.Max(math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n)))
	}
	if ks > 1.63/math.Sqrt(n) { // 1% critical value
		t.Errorf("KS distance %.5f", ks)
	}
}

// TestNormalFill checks that fill gives exactly the variates of repeated
// norm calls, in order, for buffer sizes odd and even, across many
// rejections (a million draws, about 12,000 of them rejected at first), and
// that the source's state after fill continues the same stream.
func TestNormalFill(t *testing.T) {
	for _, size := range []int{1, 2, 3, 7, 64, 511, 1000000} {
		a := newNormalSource(rand.New(rand.NewPCG(3, uint64(size))))
		b := a
		buf := make([]float64, size)
		for round := 0; round < max(3, 2000000/size/size+1) && round < 50; round++ {
			b.fill(buf)
			for i, got := range buf {
				if want := a.norm(); got != want {
					t.Fatalf("size %d, round %d, variate %d: fill %v, norm %v", size, round, i, got, want)
				}
			}
		}
		if a.state != b.state || a.has != b.has || a.has && a.spare != b.spare {
			t.Fatalf("size %d: state after fill %+v, after norm %+v", size, b, a)
		}
	}
}

// TestNormalStreamPinned checks that the variates of a seed do not change:
// runs are a function of their seed, and a checkpointed run resumed by a
// newer build must continue as it would have. The hash is of the first
// 2^20 variates of seed (1, 2), recorded before zigSqueeze was added;
// speed-ups of the generator must leave it alone.
func TestNormalStreamPinned(t *testing.T) {
	ns := newNormalSource(rand.New(rand.NewPCG(1, 2)))
	h := fnv.New64a()
	buf := make([]float64, 1<<16)
	var b [8]byte
	for r := 0; r < 16; r++ {
		ns.fill(buf)
		for _, v := range buf {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	if got, want := h.Sum64(), uint64(0x8404d25718be2b39); got != want {
		t.Fatalf("the variates of seed (1, 2) changed: hash %#x, want %#x", got, want)
	}
}

// TestZigSqueeze checks the ziggurat's squeeze against the test it
// replaces, y < exp(-x^2/2), on a million random points of every layer's
// wedge, and that it decides most of them (a squeeze that decided none
// would give the right variates and no speed).
func TestZigSqueeze(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := int32(1); i < 128; i++ {
		decided := 0
		const n = 8000
		for k := 0; k < n; k++ {
			tt := zigA[i] + rng.Float64()*(zigB[i]-zigA[i])
			y := zigF[i] + rng.Float64()*(zigF[i-1]-zigF[i])
			accept, ok := zigSqueeze(i, tt, y)
			if !ok {
				continue
			}
			decided++
			if want := y < math.Exp(-0.5*tt*tt); accept != want {
				t.Fatalf("layer %d, |x| %v, y %v: squeeze says %v, exp test %v", i, tt, y, accept, want)
			}
		}
		if straddles := zigA[i] < 1 && zigB[i] > 1; !straddles && decided < n*6/10 {
			t.Errorf("layer %d: the squeeze decided %d of %d wedge points", i, decided, n)
		}
	}
}
