package convert

import (
	"math"
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
