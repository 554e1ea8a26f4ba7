package driver

import (
	"bytes"
	"encoding/gob"
	"reflect"
	"slices"
	"testing"

	"github.com/ptsghmc/ptsghmc/adapt"
	"github.com/ptsghmc/ptsghmc/internal/chaintest"
	"github.com/ptsghmc/ptsghmc/sampler"
	"github.com/ptsghmc/ptsghmc/tempering"
)

// The chain helpers the samplers' tests share (package chaintest).
var (
	moments         = chaintest.Moments
	runChain        = chaintest.RunChain
	halfSquaredNorm = chaintest.HalfSquaredNorm
)

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
	MassRank        int
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
		ps = append(ps, &Mass{Precondition: o.Precondition, Scale: o.MassScale, Rank: o.MassRank})
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

// checkpointed returns st's snapshot as a checkpoint holds it: encoded
// (gob) and decoded back.
func checkpointed(t *testing.T, st *tempering.PTState, k sampler.Kernel) tempering.Snapshot {
	t.Helper()
	snap, err := st.Snapshot(k)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(snap); err != nil {
		t.Fatal(err)
	}
	var back tempering.Snapshot
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	return back
}
