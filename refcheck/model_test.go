package refcheck

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/autodiff"
	"github.com/ptsghmc/ptsghmc/autodiff/compile"
)

// potentialAt is the regression's potential written out by hand, on the
// design d (float64): U(theta) = -sum_i log N(y_i; a + x_i'w, sigma^2) -
// log p(a) - log p(sigma) - s + w'w lambda/2, s = log sigma, up to the
// constant N log(2 pi)/2.
func potentialAt(r Regression, d Design, theta []float64) float64 {
	k := len(d.X[0])
	var a float64
	var w []float64
	switch {
	case r.NoIntercept:
		w = theta[:k]
	case r.InterceptFirst:
		a, w = theta[0], theta[1:k+1]
	default:
		w, a = theta[:k], theta[k]
	}
	s := theta[len(theta)-1]
	sigma := math.Exp(s)
	u := 0.0
	for i, x := range d.X {
		f := a
		for j, v := range x {
			f += v * w[j]
		}
		z := (d.Y[i] - f) / sigma
		u += 0.5*z*z + s
	}
	u -= r.InterceptPrior.LogDensity(a) + r.Sigma.LogDensity(sigma) + s
	u += r.SlopePrior.NegLogDensity(w)
	return u
}

// TestModelPotential checks each posterior's Gorgonia model, compiled (the
// engine the harness runs), against the potential written by hand: U~ on
// the whole data set (scale 1) up to the constant, and its gradient
// against central differences of the hand-written potential, at the
// reference mean and at a point 2 sds away in every coordinate.
func TestModelPotential(t *testing.T) {
	for _, name := range PosteriorNames() {
		t.Run(name, func(t *testing.T) {
			p := Posteriors[name]
			d, model, err := p.Load(DataDir)
			if err != nil {
				t.Fatal(err)
			}
			if err := compile.Check(model); err != nil {
				t.Fatalf("the graph does not compile: %v", err)
			}
			ref, err := LoadReference(DataDir, name)
			if err != nil {
				t.Fatal(err)
			}
			n := len(d.Y)
			ev, err := autodiff.NewFor(autodiff.EngineCompiled, model, n, autodiff.Float64)
			if err != nil {
				t.Fatal(err)
			}
			ds := d.Dataset()
			d32 := d.Float32()
			r := p.Regression(d)
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			konst := 0.5 * float64(n) * math.Log(2*math.Pi)
			for _, shift := range []float64{0, 2} {
				theta := make([]float64, len(ref.Mean))
				for j := range theta {
					theta[j] = ref.Mean[j] + shift*ref.SD[j]*float64(1-2*(j%2))
				}
				grad := make([]float64, len(theta))
				u, err := ev.Eval(theta, ds, idx, 1, grad, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := potentialAt(r, d32, theta) + konst
				if math.Abs(u-want) > 1e-9*math.Abs(want)+1e-8 {
					t.Errorf("shift %g: U %.12g, by hand %.12g", shift, u, want)
				}
				for j := range theta {
					h := 1e-4 * ref.SD[j]
					old := theta[j]
					theta[j] = old + h
					up := potentialAt(r, d32, theta)
					theta[j] = old - h
					dn := potentialAt(r, d32, theta)
					theta[j] = old
					fd := (up - dn) / (2 * h)
					// the difference quotient's rounding: U's size times
					// machine epsilon over h
					tol := 1e-5*math.Abs(fd) + 1e-12*math.Abs(want)/h + 1e-6/ref.SD[j]
					if math.Abs(grad[j]-fd) > tol {
						t.Errorf("shift %g: dU/d%s %.10g, central difference %.10g", shift, ref.Theta[j], grad[j], fd)
					}
				}
			}
		})
	}
}
