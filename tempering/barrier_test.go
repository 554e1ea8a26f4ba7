package tempering

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBarrierInterpolation(t *testing.T) {
	cases := []struct {
		name   string
		temps  []float64
		reject []float64
	}{
		{"uniform", []float64{1, 2, 4, 8}, []float64{0.3, 0.3, 0.3}},
		{"steep top", []float64{1, 1.5, 3, 10, 40}, []float64{0.05, 0.1, 0.6, 0.9}},
		{"flat pair", []float64{1, 2, 3, 5}, []float64{0.4, 0, 0.2}},
		{"two rungs", []float64{1, 3}, []float64{0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := NewBarrier(c.temps, c.reject)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for _, v := range c.reject {
				sum += v
			}
			if math.Abs(b.Global()-sum) > 1e-12 || math.Abs(b.At(1)-sum) > 1e-12 || b.At(1/c.temps[len(c.temps)-1]) != 0 {
				t.Errorf("Lambda(1) = %v, At(1) = %v, At(top) = %v; want %v, %v, 0", b.Global(), b.At(1), b.At(b.Betas[0]), sum, sum)
			}
			// monotone between knots, and Inverse inverts At
			prev := -1.0
			for i := 0; i <= 1000; i++ {
				beta := b.Betas[0] + (1-b.Betas[0])*float64(i)/1000
				v := b.At(beta)
				if v < prev-1e-12 {
					t.Fatalf("Lambda decreases at beta %v: %v after %v", beta, v, prev)
				}
				if b.Local(beta) < -1e-12 {
					t.Fatalf("negative local barrier %v at beta %v", b.Local(beta), beta)
				}
				prev = v
				if i%50 == 25 && b.Local(beta) > 1e-9 {
					if inv := b.Inverse(v); math.Abs(inv-beta) > 1e-9 {
						t.Errorf("Inverse(At(%v)) = %v", beta, inv)
					}
				}
			}
		})
	}
	// Equal-barrier ladder of a uniform local barrier in beta is linear in beta.
	b, _ := NewBarrier([]float64{1, 2}, []float64{0.5})
	l, err := b.EqualBarrierLadder(5)
	if err != nil {
		t.Fatal(err)
	}
	for j, want := range []float64{1, 1 / 0.875, 1 / 0.75, 1 / 0.625, 2} {
		if math.Abs(l[j]-want) > 1e-9 {
			t.Errorf("ladder %v, want rung %d at %v", l, j, want)
		}
	}
}

func TestFreeTopLadder(t *testing.T) {
	// Local barrier 1 per unit beta on [0.5, 1]: Lambda = 0.5 in total.
	b, _ := NewBarrier([]float64{1, 4.0 / 3, 2}, []float64{0.25, 0.25})
	// 3 rungs at rejection 0.1 each need Lambda 0.2: top at beta 0.8.
	l, err := b.FreeTopLadder(3, 0.1, 1e4)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l[2]-1/0.8) > 1e-6 || math.Abs(l[1]-1/0.9) > 1e-6 {
		t.Errorf("narrowing ladder %v, want 1, %v, %v", l, 1/0.9, 1/0.8)
	}
	// 5 rungs at 0.2 need Lambda 0.8: extrapolated to beta 0.2.
	l, _ = b.FreeTopLadder(5, 0.2, 1e4)
	if math.Abs(l[4]-1/0.2) > 1e-6 {
		t.Errorf("widening ladder %v, want top %v", l, 1/0.2)
	}
	// but never more than 4x the current top per call
	l, _ = b.FreeTopLadder(9, 0.3, 1e4)
	if math.Abs(l[8]-8) > 1e-9 {
		t.Errorf("widening ladder %v, want top capped at 8", l)
	}
	if _, err := b.FreeTopLadder(3, 1.2, 1e4); err == nil {
		t.Error("rejection target 1.2 accepted")
	}
}

func TestBarkerToMetropolisRejection(t *testing.T) {
	prev := 1.0
	for _, a := range []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.49} {
		r, err := BarkerToMetropolisRejection(a)
		if err != nil {
			t.Fatal(err)
		}
		// Barker accepts between half and all of Metropolis: a <= 1-r <= 2a.
		if !(r < prev && a <= 1-r+1e-9 && 1-r <= 2*a+1e-9) {
			t.Errorf("Barker %.2f -> Metropolis rejection %.4f (previous %.4f): outside [1-2a, 1-a] or not decreasing", a, r, prev)
		}
		prev = r
	}
	// Check the model itself by simulation: deltaE ~ N(-mu, 2 mu).
	rng := rand.New(rand.NewPCG(1, 2))
	mu := 1.3
	var bk, mh float64
	const n = 400000
	for i := 0; i < n; i++ {
		x := -mu + math.Sqrt(2*mu)*rng.NormFloat64()
		bk += Logistic(x) / n
		mh += (1 - MetropolisRejection(x)) / n
	}
	if math.Abs(bk-barkerAcceptance(mu)) > 0.003 || math.Abs(mh-MetropolisAcceptance(mu)) > 0.003 {
		t.Errorf("simulated Barker %.4f Metropolis %.4f, formulas %.4f %.4f", bk, mh, barkerAcceptance(mu), MetropolisAcceptance(mu))
	}
	for _, bad := range []float64{0, 0.5, 0.7, -1} {
		if _, err := BarkerToMetropolisRejection(bad); err == nil {
			t.Errorf("target %v accepted", bad)
		}
	}
}

// TestFreeTopExtrapolation checks that a free top extrapolated beyond the
// measured ladder uses the top pair's own density when the interpolant's
// end slope vanishes: issue 32's 784-32-10 case (seed 1, under a per-pair
// placement tried and dropped, docs/sampler.md) measured
// increments 0.24/0.80/0.24 on T = 1..1.0245, whose shape-preserving end
// slope is about 0, and the top ran away to T = 4.1 (the quadrupling
// floor). The top's density puts it near 1.04.
func TestFreeTopExtrapolation(t *testing.T) {
	temps := []float64{1, 1.008, 1.0161, 1.0245}
	b, err := newBarrier(temps, []float64{0.24, 0.8, 0.24}, 1)
	if err != nil {
		t.Fatal(err)
	}
	next, err := b.FreeTopLadder(4, 0.563, 1e4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("next ladder %.4f (end slope %.3g)", next, b.slopes[0])
	if top := next[3]; !(top > 1.0245 && top < 1.07) {
		t.Errorf("top %.4f: want above the measured 1.0245 and below 1.07", top)
	}
}
