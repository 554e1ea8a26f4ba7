package autodiff

import (
	"math"
	"testing"
)

func TestConvertSumSquares(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 8, 11} {
		src := make([]float64, n)
		want := 0.0
		for i := range src {
			src[i] = float64(i) - 2.5
			want += src[i] * src[i]
		}
		dst := make([]float32, n+2) // longer than src: only the first n are written
		got := convertSumSquares(dst, src)
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
