package sampler

import (
	"math"
	"testing"
)

// TestMassKernels checks the preconditioned updates of SGLD, SGHMC and
// SGNHT with a fixed mass on a Gaussian whose sds are 100 apart: with M
// the inverse variances the step that suits the wide coordinate suits
// both, and each coordinate's variance is right within 5%. With unit mass
// the same step diverges on the stiff coordinate.
func TestMassKernels(t *testing.T) {
	g := &Gaussian{Mean: []float64{0, 0}, Var: []float64{1e-4, 1}}
	mass := []float64{1e4, 1}
	for _, tc := range []struct {
		name string
		k    Kernel
	}{
		{"sgld", SGLD{StepSize: 0.01}},
		{"sghmc", SGHMC{StepSize: 0.1, Friction: 1}},
		{"sgnht", SGNHT{StepSize: 0.1, Diffusion: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := NewStream(7, 0)
			s := NewState([]float64{0, 0})
			if err := s.SetMass(mass); err != nil {
				t.Fatal(err)
			}
			tc.k.Init(s, rng.Rand)
			v := make([]float64, 2)
			const steps, burn = 400000, 10000
			for i := 1; i <= steps; i++ {
				if err := tc.k.Step(s, g, Minibatch{}, At(1), rng.Rand); err != nil {
					t.Fatal(err)
				}
				if i > burn {
					for j, x := range s.Theta {
						v[j] += x * x / (steps - burn)
					}
				}
			}
			for j := range v {
				r := v[j] / g.Var[j]
				t.Logf("%s: coordinate %d variance / exact %.3f", tc.name, j, r)
				if math.Abs(r-1) > 0.05 {
					t.Errorf("%s: coordinate %d variance / exact %.3f", tc.name, j, r)
				}
			}
			u := NewState([]float64{0, 0})
			tc.k.Init(u, rng.Rand)
			var err error
			for i := 0; i < 1000 && err == nil; i++ {
				err = tc.k.Step(u, g, Minibatch{}, At(1), rng.Rand)
			}
			if err == nil && math.Abs(u.Theta[0]) < 1e3 {
				t.Errorf("%s: unit mass at this step did not diverge (theta %v)", tc.name, u.Theta)
			}
		})
	}
	if err := NewState([]float64{0}).SetMass([]float64{-1}); err == nil {
		t.Error("a negative mass was accepted")
	}
}

// TestThermostatCap is issue 43's slow start: a thermostat that overshot
// to a friction of 900 per step (as in a descent from a far start) fell
// back by at most (A h)^2 = 0.01 per step at the default inertia, about
// 90,000 steps, while the chain ran cold. Capped at MaxFrictionPerStep it
// is back near its level (within 20%) in at most about 5/0.01 = 500 steps
// plus the kinetic temperature's recovery: the test allows 2,000.
func TestThermostatCap(t *testing.T) {
	const d, h = 6, 0.1
	g := &Gaussian{Mean: make([]float64, d), Var: []float64{1, 1, 1, 1, 1, 1}}
	k := SGNHT{StepSize: h, Diffusion: 0.1 / h}
	rng := NewStream(5, 0)
	s := NewState(make([]float64, d))
	k.Init(s, rng.Rand)
	s.Xi = 900 / h
	settled := 0
	for i := 1; i <= 20000 && settled == 0; i++ {
		if err := k.Step(s, g, Minibatch{}, At(1), rng.Rand); err != nil {
			t.Fatal(err)
		}
		if s.Xi*h > MaxFrictionPerStep+1e-9 {
			t.Fatalf("step %d: friction per step %g above the cap", i, s.Xi*h)
		}
		if s.Xi*h < 1.2*0.1 {
			settled = i
		}
	}
	t.Logf("friction per step back within 20%% of its level after %d steps", settled)
	if settled == 0 || settled > 2000 {
		t.Errorf("friction per step not back near its level within 2,000 steps (settled at %d)", settled)
	}
}
