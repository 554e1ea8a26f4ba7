package adapt

import (
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestNoiseMass checks the masses Noise.Ceiling raises: b_i/(ceiling inj)
// where the noise per step b_i exceeds ceiling inj, 1 elsewhere, none
// without a ceiling or a coordinate above it.
func TestNoiseMass(t *testing.T) {
	const inj = 0.2
	for _, c := range []struct {
		name       string
		b          []float64
		ceiling    float64
		want       []float64 // nil: no mass raised
		wantScaled []float64 // the noise per step at the raised mass
	}{
		{"no ceiling", []float64{0.05, 0.5}, 0, nil, nil},
		{"all below", []float64{0.05, 0.1, -0.01}, 0.5, nil, nil},
		{"at the ceiling", []float64{0.1}, 0.5, nil, nil},
		{"one above", []float64{0.05, 0.3}, 0.5, []float64{1, 3}, []float64{0.05, 0.1}},
		{"above the injection", []float64{1.2, 0.02, 0.4}, 0.25, []float64{24, 1, 8}, []float64{0.05, 0.02, 0.05}},
		{"ceiling 1", []float64{0.4}, 1, []float64{2}, []float64{0.2}},
	} {
		got := NoiseMass(c.b, inj, c.ceiling)
		if len(got) != len(c.want) {
			t.Errorf("%s: factors %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("%s: factor %d is %v, want %v", c.name, i, got[i], c.want[i])
			}
			if s := c.b[i] / got[i]; math.Abs(s-c.wantScaled[i]) > 1e-12 {
				t.Errorf("%s: coordinate %d's noise at its mass %v, want %v", c.name, i, s, c.wantScaled[i])
			}
		}
	}
}

// TestNoiseUpdate drives Noise.Update over a burn-in of 20 steps (its
// window (10, 20]) and 30 steps after it, on a chain whose estimate sums
// are filled by hand: per coordinate noise b = (0.02, 0.3) per step
// against an injected 0.19 during burn-in and (0.01, 0.06) or (0.01, 0.6)
// after it (at the masses of burn-in), a prior mass (2, 1) or none. Without a ceiling the noisy coordinate keeps
// no injected noise (the correction cannot take out more than it
// injects); with ceiling 0.5 its mass is multiplied by 0.3/0.1 and half
// its injection is left. Without Track the correction stays as set at
// the end of burn-in; with it, each window of 10 steps after burn-in
// sets it from that window's noise (at the raised mass: 0.06/3.15), and
// the masses stay, even when the noise outgrows the injection (0.6/3.15:
// none injected).
func TestNoiseUpdate(t *testing.T) {
	k := sampler.SGNHT{StepSize: 0.1, Diffusion: 1}
	inj := sampler.InjectedVariance(1, 0.1)
	before := []float64{0.02, 0.3}
	falling, growing := []float64{0.01, 0.06}, []float64{0.01, 0.6}
	scale := func(b ...float64) []float64 { return InjectionScale(b, inj) }
	for _, c := range []struct {
		name      string
		after     []float64 // the noise per step after burn-in, at the masses of burn-in
		ceiling   float64
		track     bool
		mass      []float64
		wantMass  []float64
		atBurnIn  []float64 // InjScale at step 20
		atEnd     []float64 // InjScale at step 50
		estimates bool      // the estimate is kept after burn-in
	}{
		{"frozen, no ceiling (old runs)", falling, 0, false, nil, nil, scale(0.02, 0.3), scale(0.02, 0.3), false},
		{"ceiling 0.5", falling, 0.5, false, nil, []float64{1, 0.3 / (0.5 * inj)}, scale(0.02, 0.5*inj), scale(0.02, 0.5*inj), false},
		{"ceiling 0.5 on a mass", falling, 0.5, false, []float64{2, 1}, []float64{2, 0.3 / (0.5 * inj)}, scale(0.02, 0.5*inj), scale(0.02, 0.5*inj), false},
		{"tracked, no ceiling", falling, 0, true, nil, nil, scale(0.02, 0.3), scale(0.01, 0.06), true},
		{"tracked, ceiling 0.5", falling, 0.5, true, nil, []float64{1, 0.3 / (0.5 * inj)}, scale(0.02, 0.5*inj), scale(0.01, 0.06*(0.5*inj)/0.3), true},
		// the noise doubles past the injection after burn-in: the masses
		// stay, and the coordinate keeps no injected noise
		{"growing, tracked, ceiling 0.5", growing, 0.5, true, nil, []float64{1, 0.3 / (0.5 * inj)}, scale(0.02, 0.5*inj), scale(0.01, 0.6*(0.5*inj)/0.3), true},
	} {
		n := Noise{Correct: true, BurnIn: 20, Ceiling: c.ceiling, Track: c.track}
		s := sampler.NewState([]float64{0, 0})
		if err := s.SetMass(c.mass); err != nil {
			t.Fatal(err)
		}
		chains := []*sampler.State{s}
		est := n.Start(chains)
		var gotBurnIn []float64
		for step := 0; step < 50; step++ {
			n.Arm(step, chains, est)
			if sums := s.NoiseSums(); sums != nil { // the step's noise
				b := before
				if step >= 20 {
					b = c.after
				}
				for i := range sums {
					raised := 1.0 // a raised mass divides the noise per step
					if s.Mass != nil {
						raised = s.Mass[i]
						if c.mass != nil {
							raised /= c.mass[i]
						}
					}
					sums[i] += b[i] / raised
				}
			}
			if _, err := n.Update(step+1, chains, est, []sampler.Kernel{k}); err != nil {
				t.Fatal(err)
			}
			if err := n.Check(step+1, est, 1, 2); err != nil {
				t.Fatalf("%s: step %d: %v", c.name, step+1, err)
			}
			if step+1 == 20 {
				gotBurnIn = append([]float64(nil), s.InjScale...)
			}
		}
		near := func(what string, got, want []float64) {
			if len(got) != len(want) {
				t.Errorf("%s: %s %v, want %v", c.name, what, got, want)
				return
			}
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-9 {
					t.Errorf("%s: %s %v, want %v", c.name, what, got, want)
					return
				}
			}
		}
		near("mass", s.Mass, c.wantMass)
		if c.wantMass == nil {
			near("mass", s.Mass, c.mass)
		}
		near("injection scale at the end of burn-in", gotBurnIn, c.atBurnIn)
		near("injection scale at step 50", s.InjScale, c.atEnd)
		if kept := est[0].Sum != nil; kept != c.estimates {
			t.Errorf("%s: estimate kept after burn-in %v, want %v", c.name, kept, c.estimates)
		}
	}
}
