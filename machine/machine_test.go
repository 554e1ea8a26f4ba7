package machine

import "testing"

func TestGradientFLOPs(t *testing.T) {
	cases := []struct {
		sizes []int
		batch int
		want  float64
	}{
		// 784-400-400-10: forward 313,600 + 160,000 + 4,000 multiply-adds,
		// weight gradients the same, errors carried back through layers 2 and 3.
		{[]int{784, 400, 400, 10}, 128, 2 * 128 * (2*313600 + 3*160000 + 3*4000)},
		{[]int{3, 2}, 1, 2 * 2 * 6}, // one layer: forward and weight gradient only
	}
	for _, c := range cases {
		if got := GradientFLOPs(c.sizes, c.batch); got != c.want {
			t.Errorf("GradientFLOPs(%v, %d) = %v, want %v", c.sizes, c.batch, got, c.want)
		}
	}
}
