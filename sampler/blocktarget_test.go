package sampler

import (
	"fmt"
	"math"
	"testing"
)

// TestMixtureBlock checks the extended target against its definition: the
// exact gradient against central differences of the exact energy, the
// energy against the mixture's plus the block's |x|^2/2 (BlockSD 1) or
// |x|^2/8 (BlockSD 2), the noisy gradient's mean and per-coordinate noise
// variance (0.25) over many draws, and the mode weights read from the
// first coordinates only.
func TestMixtureBlock(t *testing.T) {
	cases := []struct {
		target string
		d      int
		sd     float64
	}{{"gauss1d4", 5, 0}, {"gauss2d5", 3, 2}}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			b, err := NewMixtureBlock(c.target, c.d)
			if err != nil {
				t.Fatal(err)
			}
			b.BlockSD = c.sd
			m := b.Mix.Dim()
			if b.Dim() != m+c.d {
				t.Fatalf("Dim %d, want %d", b.Dim(), m+c.d)
			}
			rng := NewStream(1, 0).Rand
			theta := make([]float64, b.Dim())
			for i := range theta {
				theta[i] = 2 * rng.NormFloat64()
			}
			grad := make([]float64, b.Dim())
			u := b.Exact(theta, grad)
			v := 1.0
			if c.sd > 0 {
				v = c.sd * c.sd
			}
			want := b.Mix.Exact(theta[:m], nil)
			for _, x := range theta[m:] {
				want += x * x / (2 * v)
			}
			if math.Abs(u-want) > 1e-12 {
				t.Errorf("U %v, want %v", u, want)
			}
			for i := range theta {
				th := append([]float64(nil), theta...)
				th[i] += 1e-5
				up := b.Exact(th, nil)
				th[i] -= 2e-5
				fd := (up - b.Exact(th, nil)) / 2e-5
				if math.Abs(fd-grad[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("grad[%d] = %v, central difference %v", i, grad[i], fd)
				}
			}
			const n = 20000
			g := make([]float64, b.Dim())
			mean, sq := make([]float64, b.Dim()), make([]float64, b.Dim())
			for k := 0; k < n; k++ {
				if _, err := b.Gradient(theta, g, Minibatch{}, rng); err != nil {
					t.Fatal(err)
				}
				for i := range g {
					mean[i] += g[i] / n
					sq[i] += (g[i] - grad[i]) * (g[i] - grad[i]) / n
				}
			}
			for i := range g {
				if math.Abs(mean[i]-grad[i]) > 0.02 || math.Abs(sq[i]-0.25) > 0.02 {
					t.Errorf("coordinate %d: noisy gradient mean %.4f (exact %.4f), noise variance %.4f (want 0.25)", i, mean[i], grad[i], sq[i])
				}
			}
			far := make([]float64, b.Dim())
			copy(far, b.Mix.Means[1])
			for i := m; i < len(far); i++ {
				far[i] = 100 // the block does not pick the mode
			}
			if w := b.ModeWeights([][]float64{far, b.Start()}); w[1] != 0.5 || w[b.Mix.NearestMode(b.Mix.Start())] != 0.5 {
				t.Errorf("mode weights %v of a sample at mode 1 and one at the start", w)
			}
		})
	}
	if _, err := NewMixtureBlock("gauss3d", 1); err == nil {
		t.Error("unknown mixture accepted")
	}
	if _, err := NewMixtureBlock("gauss1d4", -1); err == nil {
		t.Error("negative block dimension accepted")
	}
}

// ExampleNewMixtureBlock extends the paper's 1-d mixture by a
// 10-dimensional Gaussian block: the start is the lightest mode with the
// block at 0 (energy -log(0.1 N(0; 0, 0.6^2)) = 2.711), and mode weights
// are read from the first coordinate only.
func ExampleNewMixtureBlock() {
	b, _ := NewMixtureBlock("gauss1d4", 10)
	x := b.Start()
	y := b.Start()
	y[0], y[5] = 8.7, 40 // near the heaviest mode; the block does not count
	fmt.Printf("dimension %d, start %v, energy at the start %.3f\n", b.Dim(), x[0], b.Exact(x, nil))
	fmt.Printf("mode weights %.2f\n", b.ModeWeights([][]float64{x, y}))
	// Output:
	// dimension 11, start -9, energy at the start 2.711
	// mode weights [0.50 0.00 0.00 0.50]
}
