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

// TestSGNHTUpdateBlocks checks the blocked update: the same result on 1, 2
// and 3 goroutines, bit for bit; from p = 0 and a zero gradient the new
// momenta have the injected variance; and the blocks' noises are
// independent (a block seeded like another would repeat its variates).
func TestSGNHTUpdateBlocks(t *testing.T) {
	d := 3*updateBlock + 17
	const h, a = 0.01, 20.0
	var ref []float64
	for _, par := range []int{1, 2, 3} {
		theta, p, grad := make([]float64, d), make([]float64, d), make([]float64, d)
		_, kin, after := sgnhtUpdate(theta, p, grad, a, h, a, 1, 0, rand.New(rand.NewPCG(7, 8)), par)
		if ref == nil {
			ref = p
			v := InjectedVariance(a, h)
			if math.Abs(after/v-1) > 0.02 {
				t.Fatalf("p'p/D after the update %v, injected variance %v", after, v)
			}
			if math.Abs(kin/(v/4)-1) > 0.02 {
				t.Fatalf("mid-step kinetic temperature %v, want %v", kin, v/4)
			}
			corr := 0.0
			for i := 0; i < updateBlock; i++ {
				corr += p[i] * p[i+updateBlock] / v / updateBlock
			}
			if math.Abs(corr) > 5/math.Sqrt(updateBlock) {
				t.Fatalf("blocks 1 and 2 correlate: %v", corr)
			}
			continue
		}
		for i := range p {
			if p[i] != ref[i] {
				t.Fatalf("%d goroutines: p[%d] = %v, one goroutine %v", par, i, p[i], ref[i])
			}
		}
	}
}
