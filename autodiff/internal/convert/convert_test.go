package convert

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSumSquares(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 8, 11} {
		src := make([]float64, n)
		want := 0.0
		for i := range src {
			src[i] = float64(i) - 2.5
			want += src[i] * src[i]
		}
		dst := make([]float32, n+2) // longer than src: only the first n are written
		got := SumSquares(dst, src)
		if math.Abs(got-want) > 1e-12*max(1, want) {
			t.Errorf("n=%d: sum of squares %v, want %v", n, got, want)
		}
		for i, v := range src {
			if dst[i] != float32(v) {
				t.Errorf("n=%d: dst[%d] = %v, want %v", n, i, dst[i], float32(v))
			}
		}
		if dst[n] != 0 || dst[n+1] != 0 {
			t.Errorf("n=%d: wrote past len(src): %v", n, dst[n:])
		}
	}
}

func TestAddPriorGrad(t *testing.T) {
	g := []float32{1.5, -2, 0.25}
	theta := []float64{2, -1, 0.5}
	out := make([]float64, 3)
	AddPriorGrad(out, g, theta, 0.5)
	for i, want := range []float64{2.5, -2.5, 0.5} {
		if out[i] != want {
			t.Errorf("out[%d] = %v, want %v", i, out[i], want)
		}
	}
}

// TestVectorPassesSame: SumSquares and AddPriorGrad give the same bits
// with their float32 vector passes as with the Go loops, over lengths that
// end inside a block of 8 and values of very different sizes (where
// another order of the partial sums, a fused multiply-add or another
// rounding of the conversion would show).
func TestVectorPassesSame(t *testing.T) {
	defer func() { vectorPasses = true }()
	rng := rand.New(rand.NewPCG(4, 5))
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 255, 256, 1001, 4099} {
		src, g := make([]float64, n), make([]float32, n)
		for i := range src {
			src[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			g[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
		}
		run := func(vec bool) (float64, []float32, []float64) {
			vectorPasses = vec
			dst, out := make([]float32, n), make([]float64, n)
			s := SumSquares(dst, src)
			AddPriorGrad(out, g, src, 0.37)
			return s, dst, out
		}
		s0, d0, o0 := run(false)
		s1, d1, o1 := run(true)
		if s0 != s1 {
			t.Fatalf("n=%d: sum of squares %v with the vector pass, %v without", n, s1, s0)
		}
		for i := range d0 {
			if d0[i] != d1[i] || o0[i] != o1[i] {
				t.Fatalf("n=%d element %d: %v %v with the vector passes, %v %v without", n, i, d1[i], o1[i], d0[i], o0[i])
			}
		}
	}
}

// edgeFloat32s are values whose bits a copy or conversion could change:
// NaNs of both signs with payloads (quiet and signalling), signed zeros,
// subnormals, infinities and the extremes.
var edgeFloat32s = []float32{
	math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002), // quiet NaNs
	math.Float32frombits(0x7f800003), math.Float32frombits(0xff800004), // signalling NaNs
	float32(math.Copysign(0, -1)), 0, math.Float32frombits(1), math.Float32frombits(0x807fffff),
	float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.SmallestNonzeroFloat32, 0.1, -3.75,
}

// TestFeatures: Features writes the bits T(v) gives, element by element,
// for float32 (a copy) and float64 (a conversion), over the edge values
// and an odd length, and leaves dst past len(src) alone.
func TestFeatures(t *testing.T) {
	src := append(append([]float32{}, edgeFloat32s...), edgeFloat32s[:5]...)
	tests := []struct {
		name string
		run  func() (got, want []uint64)
	}{
		{"float32", func() (got, want []uint64) {
			dst := make([]float32, len(src)+1)
			dst[len(src)] = 7
			Features(dst, src)
			for j, v := range src {
				got, want = append(got, uint64(math.Float32bits(dst[j]))), append(want, uint64(math.Float32bits(v)))
			}
			return append(got, uint64(math.Float32bits(dst[len(src)]))), append(want, uint64(math.Float32bits(7)))
		}},
		{"float64", func() (got, want []uint64) {
			dst := make([]float64, len(src)+1)
			dst[len(src)] = 7
			Features(dst, src)
			for j, v := range src {
				got, want = append(got, math.Float64bits(dst[j])), append(want, math.Float64bits(float64(v)))
			}
			return append(got, math.Float64bits(dst[len(src)])), append(want, math.Float64bits(7))
		}},
	}
	for _, tc := range tests {
		got, want := tc.run()
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("%s: element %d: bits %#x, want %#x", tc.name, j, got[j], want[j])
			}
		}
	}
}
