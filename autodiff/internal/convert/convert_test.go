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
