package experiments

import (
	"fmt"
	"math"
	"testing"
)

// TestTinyBNNReference checks the quadrature reference on the case whose
// answer is known (shift 0: the two modes are mirror images, mass 0.5 each,
// predictive mean 0 at x = 0 and odd in x), and that the sweep's case
// (shift 0.03) has non-equivalent modes: unequal minima of U and mass,
// opposite predictions at x = 0.
func TestTinyBNNReference(t *testing.T) {
	cases := []struct {
		name          string
		shift         float64
		massLo        float64
		massHi        float64
		symmetric     bool // E f(x) = -E f(-x) and E f(0) = 0
		minGapAtLeast float64
	}{
		{"mirror modes", 0, 0.495, 0.505, true, 0},
		{"sweep case", 0.03, 0.6, 0.8, false, 0.5},
	}
	for _, c := range cases {
		b := NewTinyBNN(c.shift)
		ref, err := b.Reference(400)
		if err != nil {
			t.Fatal(err)
		}
		coarse, err := b.Reference(200)
		if err != nil {
			t.Fatal(err)
		}
		if ref.MassPos < c.massLo || ref.MassPos > c.massHi {
			t.Errorf("%s: mass of v > 0 %.4f, want in [%v, %v]", c.name, ref.MassPos, c.massLo, c.massHi)
		}
		for j, p := range ref.Predictive {
			if d := math.Abs(p - coarse.Predictive[j]); d > 2e-3 {
				t.Errorf("%s: predictive mean at x = %v is %.4f on a 400 grid, %.4f on 200", c.name, b.Test[j], p, coarse.Predictive[j])
			}
		}
		if c.symmetric {
			if math.Abs(ref.Predictive[1]) > 1e-3 || math.Abs(ref.Predictive[0]+ref.Predictive[2]) > 1e-3 {
				t.Errorf("%s: predictive means %v, want 0 at x = 0 and odd", c.name, ref.Predictive)
			}
		}
		if gap := math.Abs(ref.UMin[0] - ref.UMin[1]); gap < c.minGapAtLeast {
			t.Errorf("%s: U at the two modes %.3f and %.3f, want them %v apart", c.name, ref.UMin[0], ref.UMin[1], c.minGapAtLeast)
		}
		if fa, fb := b.Predict(ref.Modes[0], 0), b.Predict(ref.Modes[1], 0); !(fa > 0.3 && fb < -0.3) {
			t.Errorf("%s: the modes predict %.3f and %.3f at x = 0, want opposite signs", c.name, fa, fb)
		}
		// the barrier: U on v = 0 (f = 0) at least 20 above both modes
		if u := b.Exact([]float64{0, 0}, nil); u-math.Max(ref.UMin[0], ref.UMin[1]) < 20 {
			t.Errorf("%s: U(0, 0) = %.2f, only %.2f above the modes", c.name, u, u-math.Max(ref.UMin[0], ref.UMin[1]))
		}
	}
}

// TestTinyBNNGradient checks grad U against central differences.
func TestTinyBNNGradient(t *testing.T) {
	b := NewTinyBNN(0.03)
	for _, th := range [][]float64{{0.3, -1.2}, {2, 1}, {-1.5, 0.4}} {
		g := make([]float64, 2)
		b.Exact(th, g)
		for i := range th {
			const e = 1e-6
			p, m := append([]float64(nil), th...), append([]float64(nil), th...)
			p[i] += e
			m[i] -= e
			fd := (b.Exact(p, nil) - b.Exact(m, nil)) / (2 * e)
			if math.Abs(fd-g[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
				t.Errorf("theta %v: dU/dtheta_%d = %.6f, finite difference %.6f", th, i, g[i], fd)
			}
		}
	}
}

// TestBNNSweepCase runs a small sweep case on the network and checks that
// PT, started in the lighter mode, scores the predictive mean better than
// the same ladder with swaps off (which stays in the lighter mode).
func TestBNNSweepCase(t *testing.T) {
	b := NewTinyBNN(0.03)
	ref, err := b.Reference(200)
	if err != nil {
		t.Fatal(err)
	}
	o := SweepSettings{Budget: 200000, Replicas: 4, BurnIn: 10000, Thin: 5, Every: 2, TMax: 10, StepSize: 0.05, Diffusion: 1, Fractions: []float64{0.5, 1}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	errs, st, err := BNNSweepCase(o, b, ref, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("errors %v, ladder %v, ref %v", errs, st.Temps, ref.Predictive)
	if pt, off := errs["pt"][1], errs["swaps-off"][1]; !(pt < 0.2 && off > 0.5) {
		t.Errorf("predictive error PT %.3f, swaps off %.3f: want PT < 0.2 and swaps off > 0.5", pt, off)
	}
}

// ExampleTinyBNN_Reference computes the sweep network's exact posterior by
// quadrature: the mass of its heavier mode and the posterior predictive
// mean the sweep scores samplers against.
func ExampleTinyBNN_Reference() {
	b := NewTinyBNN(0.03)
	ref, err := b.Reference(400)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mass of v > 0: %.3f\n", ref.MassPos)
	fmt.Printf("predictive mean at x = %v: %.3f\n", b.Test, ref.Predictive)
	fmt.Printf("lighter mode (the sweep's start) predicts %.2f at x = 0\n", b.Predict(ref.Start(), 0))
	// Output:
	// mass of v > 0: 0.706
	// predictive mean at x = [-0.5 0 0.5]: [-0.653 0.286 0.800]
	// lighter mode (the sweep's start) predicts -0.67 at x = 0
}
