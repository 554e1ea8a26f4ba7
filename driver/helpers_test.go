package driver

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// moments returns the per-coordinate mean and variance of samples.
func moments(xs [][]float64) (mean, variance []float64) {
	d := len(xs[0])
	mean, variance = make([]float64, d), make([]float64, d)
	for _, x := range xs {
		for i, v := range x {
			mean[i] += v / float64(len(xs))
		}
	}
	for _, x := range xs {
		for i, v := range x {
			variance[i] += (v - mean[i]) * (v - mean[i]) / float64(len(xs)-1)
		}
	}
	return mean, variance
}

// runChain runs kernel k for n steps on pot at temperature temp and returns
// every thin-th position after burn steps: a single chain, stepped by hand,
// to compare PT with.
func runChain(t *testing.T, k sampler.Kernel, pot sampler.Potential, theta0 []float64, temp float64, n, burn, thin int, seed uint64) [][]float64 {
	t.Helper()
	rng := sampler.NewStream(seed, 0)
	s := sampler.NewState(theta0)
	k.Init(s, rng.Rand)
	var xs [][]float64
	for i := 0; i < n; i++ {
		if err := k.Step(s, pot, sampler.Minibatch{}, sampler.At(temp), rng.Rand); err != nil {
			t.Fatal(err)
		}
		if i >= burn && i%thin == 0 {
			xs = append(xs, append([]float64(nil), s.Theta...))
		}
	}
	return xs
}

// halfSquaredNorm returns x'x/2, the energy of a standard Gaussian.
func halfSquaredNorm(x []float64) float64 {
	u := 0.0
	for _, v := range x {
		u += 0.5 * v * v
	}
	return u
}

// sameChains fails t when two PT states' rungs (theta, p, xi, U) or random
// streams differ, saying how they came to be compared (what).
func sameChains(t *testing.T, a, b *tempering.PTState, what string) {
	t.Helper()
	for r := range a.Rungs {
		x, y := a.Rungs[r], b.Rungs[r]
		if !slices.Equal(x.Theta, y.Theta) || !slices.Equal(x.P, y.P) || x.Xi != y.Xi || x.U != y.U {
			t.Fatalf("rung %d differs %s", r, what)
		}
	}
	for j := range a.Streams {
		sa, _ := a.Streams[j].MarshalBinary()
		sb, _ := b.Streams[j].MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Fatalf("stream %d differs %s", j, what)
		}
	}
}

// testPT is the settings of a driver in one flat value, as the tests
// state them: a kernel at its own step (StepSize 0) or at StepSize, a
// posterior temperature (0: 1), the tempering, and the phases' settings;
// testDriver builds the driver.
type testPT struct {
	Kernel          sampler.Kernel
	StepSize        float64
	Temperature     float64
	Temps           []float64
	Every           int
	Scheme          tempering.Scheme
	Exchange        tempering.ExchangeTest
	Workers         int
	BurnIn          int
	Adapt           *tempering.LadderAdaptation
	HealthWindow    int
	MixCoords       bool
	Record          []tempering.Recorder
	ExactGradients  bool
	NoiseTarget     float64
	Precondition    adapt.Preconditioner
	MassScale       adapt.MassScale
	NoiseCorrection bool
	NoiseCeiling    float64 // the correction's Ceiling and Track
	NoiseTrack      bool
}

// testDriver returns the driver of o, its phases in a run's order: the
// ladder's tuning (with o.Adapt), the health watch, the mass (with a
// preconditioner or a mass scale), the noise correction and the window's
// restart.
func testDriver(o testPT) *Driver {
	h, t := o.StepSize, o.Temperature
	if h == 0 {
		h = ownStep(o.Kernel)
	}
	if t == 0 {
		t = 1
	}
	var ps []Phase
	if o.Adapt != nil {
		ps = append(ps, &LadderTuning{Adapt: o.Adapt})
	}
	ps = append(ps, &StepHealth{Window: o.HealthWindow, MixCoords: o.MixCoords, ExactGradients: o.ExactGradients, NoiseTarget: o.NoiseTarget})
	if o.Precondition != adapt.PrecondNone || o.MassScale != adapt.MassScaleWidest {
		ps = append(ps, &Mass{Precondition: o.Precondition, Scale: o.MassScale})
	}
	if o.NoiseCorrection {
		ps = append(ps, &NoiseCorrection{Precondition: o.Precondition, Ceiling: o.NoiseCeiling, Track: o.NoiseTrack})
	}
	ps = append(ps, WindowRestart{})
	return &Driver{Kernel: o.Kernel, Schedule: Fixed(o.Kernel, h, t), Workers: o.Workers, BurnIn: o.BurnIn, Phases: ps,
		PT: &tempering.PT{Temps: o.Temps, Every: o.Every, Scheme: o.Scheme, Exchange: o.Exchange, Record: o.Record}}
}

// ownStep returns the step size kernel k was built at: its StepSize
// field (of an embedded kernel too), or 1 for a kernel without one (a
// test kernel that ignores it).
func ownStep(k sampler.Kernel) float64 {
	v := reflect.ValueOf(k)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		if f := v.FieldByName("StepSize"); f.IsValid() && f.Kind() == reflect.Float64 && f.Float() > 0 {
			return f.Float()
		}
	}
	return 1
}
