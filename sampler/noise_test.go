package sampler

import (
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
