package sampler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRateMapping checks the one mapping from a learning rate to the
// kernels' steps, figure by figure.
func TestRateMapping(t *testing.T) {
	r := Rate{LR: 0.02, Examples: 50000}
	h := math.Sqrt(0.02 / 50000.0)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"Step(1)", r.Step(1), h},
		{"Step(0.25)", r.Step(0.25), math.Sqrt(0.25 * 0.02 / 50000)},
		{"SGLDStep(1)", r.SGLDStep(1), 2 * 0.02 / 50000},
		{"StepOf(sgnht, 0.5)", r.StepOf(SGNHT{}, 0.5), math.Sqrt(0.5 * 0.02 / 50000)},
		{"StepOf(sgd, 0.5)", r.StepOf(SGD{}, 0.5), math.Sqrt(0.5 * 0.02 / 50000)},
		{"StepOf(sgld, 0.5)", r.StepOf(SGLD{}, 0.5), 2 * 0.5 * 0.02 / 50000},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %g, want %g", tc.name, tc.got, tc.want)
		}
	}
}

// TestRateStepNoRebuild checks that a kernel built once from a rate and
// stepped at a schedule's Hyper.StepSize (Rate.StepOf) takes, bit for bit,
// the steps of a kernel rebuilt at every step from the scaled rate
// (the kernel's Params at the rate scaled by s): the friction per step and an explicit inertia carry
// over exactly. It fails when a kernel derives its friction at the new
// step from A h instead of the rate's alpha, or scales Q with the step.
func TestRateStepNoRebuild(t *testing.T) {
	r := Rate{LR: 0.005, Examples: 1000} // alpha/h*h != alpha here
	scales := []float64{1, 0.93, 0.5, 0.21, 0.05, 0.0031, 1, 0.7}
	target := &Gaussian{Mean: make([]float64, 37), Var: make([]float64, 37), NoiseVar: 0.3}
	for i := range target.Var {
		target.Mean[i], target.Var[i] = float64(i%5)-2, 0.5+float64(i%3)
	}
	for _, e := range Kernels {
		t.Run(e.Name, func(t *testing.T) {
			p, err := e.NewParams([]byte(`{"friction": 0.01, "thermostat_inertia": 0.5, "leapfrog": 3}`))
			if err != nil {
				t.Fatal(err)
			}
			at := func(s float64) Kernel { return p.Kernel(Rate{LR: s * r.LR, Examples: r.Examples}, TemperNoise) }
			once := at(1)
			a, b := NewState(make([]float64, target.Dim())), NewState(make([]float64, target.Dim()))
			ra, rb := rand.New(rand.NewPCG(4, 5)), rand.New(rand.NewPCG(4, 5))
			once.Init(a, ra)
			at(scales[0]).Init(b, rb)
			for k, s := range scales {
				if err := once.Step(a, target, Minibatch{}, Hyper{StepSize: r.StepOf(once, s)}, ra); err != nil {
					t.Fatal(err)
				}
				if err := at(s).Step(b, target, Minibatch{}, Hyper{}, rb); err != nil {
					t.Fatal(err)
				}
				for i := range a.Theta {
					if a.Theta[i] != b.Theta[i] || a.P[i] != b.P[i] {
						t.Fatalf("step %d (scale %g), coordinate %d: theta %v p %v, rebuilt kernel's theta %v p %v", k+1, s, i, a.Theta[i], a.P[i], b.Theta[i], b.P[i])
					}
				}
				if a.Xi != b.Xi {
					t.Fatalf("step %d (scale %g): xi %v, rebuilt kernel's %v", k+1, s, a.Xi, b.Xi)
				}
			}
		})
	}
}

// TestKernelAt checks that the kernel a Frictional steps at Hyper.StepSize
// h reports h and the diffusion alpha/h, and that KernelAt leaves other
// kernels and h = 0 alone.
func TestKernelAt(t *testing.T) {
	r := Rate{LR: 0.02, Examples: 3000}
	for _, k := range []Kernel{SGNHTParams{Friction: 0.1}.Kernel(r, TemperNoise), SGHMCParams{Friction: 0.1}.Kernel(r, TemperNoise)} {
		h, a := KernelAt(k, 0.001).(Frictional).Dynamics()
		if h != 0.001 || a != 0.1/0.001 {
			t.Errorf("%s at 0.001: h %g, A %g, want 0.001, %g", k.Name(), h, a, 0.1/0.001)
		}
		if KernelAt(k, 0) != k {
			t.Errorf("%s at 0: not the kernel itself", k.Name())
		}
	}
	if k := (SGLD{StepSize: 1e-4}); KernelAt(k, 3e-4) != Kernel(k) {
		t.Errorf("sgld at 3e-4: changed")
	}
}

// TestMoveStep checks that the thermostat keeps its friction per step
// when the step moves, rounded as the schedule (xi times sqrt(s/s')) and
// the noise-aware shrink (xi over g) round it: once, from the figures at
// run time.
func TestMoveStep(t *testing.T) {
	prev, next := 0.7, 0.3
	for _, tc := range []struct {
		xi, h, hNext float64
		want         func(xi, h, hNext float64) float64
	}{
		{3.3, math.Sqrt(prev / next), 1, func(xi, h, _ float64) float64 { return xi * h }},
		{0.1, 1, 0.37, func(xi, _, g float64) float64 { return xi / g }},
		{41.7, 1, 1.9, func(xi, _, g float64) float64 { return xi / g }},
		{2, 0.5, 0.25, func(float64, float64, float64) float64 { return 4 }},
	} {
		s := NewState([]float64{0})
		s.Xi = tc.xi
		s.MoveStep(tc.h, tc.hNext)
		if want := tc.want(tc.xi, tc.h, tc.hNext); s.Xi != want {
			t.Errorf("xi %v moved %v -> %v: %v, want %v", tc.xi, tc.h, tc.hNext, s.Xi, want)
		}
	}
}
