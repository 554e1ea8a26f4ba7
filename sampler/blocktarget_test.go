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

// ExampleNewMixtureBlock runs PT-SGHMC on the paper's 1-d mixture with a
// 10-dimensional Gaussian block and reads rung 1's mode weights from the
// first coordinate.
func ExampleNewMixtureBlock() {
	b, _ := NewMixtureBlock("gauss1d4", 10)
	temps, _ := GeometricLadder(10, 10)
	corr, _ := NewCorrection(1, CorrectionOptions{})
	pt := &PT{Kernel: SGNHT{StepSize: 0.2, Diffusion: 1}, Temps: temps, Every: 2, Workers: 1,
		Exchange: &Exchanger{Batch: 16, Correction: corr}}
	st, _ := pt.Init([][]float64{b.Start()}, 1)
	pots := make([]Potential, len(temps))
	for i := range pots {
		pots[i] = b
	}
	var xs [][]float64
	_ = pt.Run(pots, b, st, 30000, func(s *PTState) error {
		if s.Steps > 5000 && s.Steps%5 == 0 {
			xs = append(xs, append([]float64(nil), s.Rungs[0].Theta...))
		}
		return nil
	})
	w := b.ModeWeights(xs)
	fmt.Printf("dimension %d, every mode visited: %v\n", b.Dim(), w[0] > 0 && w[1] > 0 && w[2] > 0 && w[3] > 0)
	// Output: dimension 11, every mode visited: true
}
