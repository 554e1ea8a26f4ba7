package health

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/ptsghmc/ptsghmc/sampler"
)

// TestHealthNoiseEstimate runs SGHMC on a 200-dimensional Gaussian with
// white gradient noise of known variance and checks the health window's
// estimate of the noise entering the momentum, h^2 NoiseVar, and its
// verdicts: quiet noise is ok, and noise beyond the share thresholds warns
// or fails. The expected share is h^2 NoiseVar / (h^2 NoiseVar +
// InjectedVariance).
func TestHealthNoiseEstimate(t *testing.T) {
	const d, h, c = 200, 0.05, 2.0 // friction 0.1 per step
	inj := sampler.InjectedVariance(c, h)
	for _, tc := range []struct {
		noiseVar float64
		want     HealthStatus
	}{
		{1, HealthOK},     // h^2 V = 0.0025, share 1.3%
		{12, HealthWarn},  // 0.03, share 14%, kinetic 1.16 (SGHMC has no thermostat)
		{40, HealthFail},  // 0.1, share 34%
		{400, HealthFail}, // 1.0, share 84%
	} {
		t.Run(fmt.Sprint(tc.noiseVar), func(t *testing.T) {
			g := &sampler.Gaussian{Mean: make([]float64, d), Var: make([]float64, d), NoiseVar: tc.noiseVar}
			for i := range g.Var {
				g.Var[i] = 1
			}
			k := sampler.SGHMC{StepSize: h, Friction: c}
			rng := sampler.NewStream(3, 0)
			s := sampler.NewState(make([]float64, d))
			k.Init(s, rng.Rand)
			var hl Health
			hl.Start(s.KineticTemperature())
			for i := 1; i <= 20000; i++ {
				xi0 := s.Xi
				if err := k.Step(s, g, sampler.Minibatch{}, sampler.At(1), rng.Rand); err != nil {
					t.Fatal(err)
				}
				hl.Observe(k, xi0, s.KineticTemperature(), s.Kinetic, d, i, 10000, i > 10000)
			}
			f := hl.Last
			want := h * h * tc.noiseVar
			share := want / (want + inj)
			t.Logf("noise var %g: %v (want noise %.4g, share %.3f)", tc.noiseVar, f, want, share)
			if math.Abs(f.GradNoise-want) > 0.05*want+0.002 {
				t.Errorf("gradient noise %.4g, want %.4g", f.GradNoise, want)
			}
			if math.Abs(f.Injected-inj) > 1e-12 {
				t.Errorf("injected %v, want %v", f.Injected, inj)
			}
			if f.Status != tc.want {
				t.Errorf("status %v, want %v", f.Status, tc.want)
			}
			if hl.After != 1 || (tc.want == HealthFail) != (hl.Bad == 1) {
				t.Errorf("windows after burn-in %d, failed %d", hl.After, hl.Bad)
			}
		})
	}
}

// TestHealthGrade checks the grading thresholds and the advice factor.
func TestHealthGrade(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    HealthFigures
		want HealthStatus
	}{
		{"in regime", HealthFigures{Kinetic: 1.01, KineticTol: 0.02, Share: 0.05, Budget: 0.1}, HealthOK},
		{"share warns", HealthFigures{Kinetic: 1, Share: 0.15, Budget: 0.1}, HealthWarn},
		{"share fails", HealthFigures{Kinetic: 1, Share: 0.35, Budget: 0.1}, HealthFail},
		{"no thermostat level", HealthFigures{Kinetic: 1, Share: 0.2, Budget: 0.95}, HealthFail},
		{"kinetic warns", HealthFigures{Kinetic: 1.1, KineticTol: 0.02, Budget: 0.1}, HealthWarn},
		{"kinetic within tolerance", HealthFigures{Kinetic: 1.1, KineticTol: 0.08, Budget: 0.1}, HealthOK},
		{"cold fails", HealthFigures{Kinetic: 0.5, KineticTol: 0.02, Budget: 0.1}, HealthFail},
		// integration error: sds 4% wide are ok (5% tolerated), 7% warn, 12% fail
		{"integration ok", HealthFigures{Kinetic: 1, Budget: 0.1, IntMeasured: true, IntSDError: 0.04}, HealthOK},
		{"integration warns", HealthFigures{Kinetic: 1, Budget: 0.1, IntMeasured: true, IntSDError: 0.07}, HealthWarn},
		{"integration fails", HealthFigures{Kinetic: 1, Budget: 0.1, IntMeasured: true, IntSDError: 0.12}, HealthFail},
		{"integration within its tolerance", HealthFigures{Kinetic: 1, Budget: 0.1, IntMeasured: true, IntSDError: 0.07, IntSDTol: 0.03}, HealthOK},
		{"integration beyond its tolerance", HealthFigures{Kinetic: 1, Budget: 0.1, IntMeasured: true, IntSDError: 0.14, IntSDTol: 0.03}, HealthFail},
	} {
		if got := tc.f.grade(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// IntSDWidening: integ 0.0186 per step at friction 0.1 per step is
	// sqrt(1 + 0.0186/(1 - e^-0.2)) - 1 = 5.0%
	if w := IntSDWidening(0.0186, 0.1); math.Abs(w-0.0500) > 5e-4 {
		t.Errorf("IntSDWidening(0.0186, 0.1) = %.4f, want 0.050", w)
	}
	if w := IntSDWidening(-0.01, 0.1); w != 0 {
		t.Errorf("IntSDWidening of a negative error %v, want 0", w)
	}
	f := HealthFigures{Injected: 0.1, GradNoise: 0.1, Share: 0.5}
	// share 5% needs noise 0.1 * 0.05/0.95
	if r, want := f.NoiseReduction(0.05), 0.05/0.95; math.Abs(r-want) > 1e-12 {
		t.Errorf("noise reduction %v, want %v", r, want)
	}
	if r := (HealthFigures{Injected: 0.1, GradNoise: 0.001, Share: 0.0099}).NoiseReduction(0.05); r != 1 {
		t.Errorf("noise reduction %v for a share below target, want 1", r)
	}
}

func TestHealthStatusJSON(t *testing.T) {
	for _, tc := range []struct {
		s    HealthStatus
		want string
	}{{HealthOK, `"ok"`}, {HealthWarn, `"warn"`}, {HealthFail, `"fail"`}} {
		b, err := json.Marshal(tc.s)
		if err != nil || string(b) != tc.want {
			t.Errorf("%d: %s, %v: want %s", tc.s, b, err, tc.want)
			continue
		}
		var back HealthStatus
		if err := json.Unmarshal(b, &back); err != nil || back != tc.s {
			t.Errorf("%s read back as %v, %v", b, back, err)
		}
	}
	var s HealthStatus
	for _, bad := range []string{`"bad"`, `2`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s read as %v: want an error", bad, s)
		}
	}
	if _, err := json.Marshal(HealthStatus(7)); err == nil {
		t.Error("status 7 marshalled: want an error")
	}
}
