package health

import "testing"

// TestCauseWithoutThermostat: a window whose only problem is its kinetic
// temperature names the thermostat only for a kernel that has one (SGNHT,
// XiGain > 0); a fixed friction (SGHMC) gets the larger of the readings it
// can have (issue 43: mesquite's SGHMC at minibatch 9 was told
// "thermostat").
func TestCauseWithoutThermostat(t *testing.T) {
	base := HealthFigures{Kinetic: 1.5, KineticTol: 0.01, Friction: 0.1, Injected: 0.19}
	for _, tc := range []struct {
		name string
		fig  func(f *HealthFigures)
		want HealthCause
	}{
		{"SGNHT", func(f *HealthFigures) { f.XiGain = 1e-3 }, CauseThermostat},
		{"SGHMC, noise reading larger", func(f *HealthFigures) { f.GradNoise, f.Share = 0.01, 0.05 }, CauseNoise},
		{"SGHMC, integration reading larger", func(f *HealthFigures) { f.IntMeasured, f.IntSDError = true, 0.03 }, CauseIntegration},
		{"SGHMC, kinetic on target", func(f *HealthFigures) { f.Kinetic = 1 }, CauseNone},
	} {
		f := base
		tc.fig(&f)
		if got := f.Cause(); got != tc.want {
			t.Errorf("%s: cause %q, want %q (%v)", tc.name, got, tc.want, f)
		}
	}
}
